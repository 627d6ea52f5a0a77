"""The terrain's typed config: a grid of sub-terrain tiles, difficulty by row, type by column.

In the style of Isaac Lab's ``TerrainGeneratorCfg`` (``curriculum=True``) and mjlab's terrains: ``num_rows``
difficulty levels (row ``r`` draws its difficulty in ``[r, r + 1) / num_rows``), ``num_cols`` tiles per level
split among the sub-terrain types by their ``proportion`` (column ``c`` takes the first type whose cumulative
proportion exceeds ``c / num_cols``), ``size`` per tile and a flat ``border_width`` around the grid. A
sub-terrain's parameter goes from the low end of its range at difficulty 0 to the high end at 1.

Bad input is refused when the config is checked (:func:`validate`, run when an env is built), in one line
naming the key and what it allows (:class:`~dexwheel.fields.ConfigFieldError`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dexwheel.fields import ConfigFieldError, check_types
from dexwheel.terrain.description import TerrainDescription

#: The longest outline of the wheel-leg robots (M20 with its wheels: ~0.9 m): a tile side must give it room
#: to move (twice this), a spawn platform must hold it.
ROBOT_FOOTPRINT_M = 1.0
MIN_TILE_M = 2.0 * ROBOT_FOOTPRINT_M
#: Highest height range any type takes (m): the boxes go down to well below the deepest surface.
MAX_HEIGHT_M = 1.0
MAX_SLOPE_DEG = 45.0
MIN_STEP_WIDTH_M = 0.2  # a tread or grid cell: two wheel radii
#: A stairs tile's flat ground at the foot (pyramid stairs) or head (the inverted one) of its flight, inside the tile,
#: at least (m): half the robot's footprint, so two tiles side by side meet on a landing the robot fits on.
MIN_LANDING_M = ROBOT_FOOTPRINT_M / 2
STAIRS_TYPES = ("pyramid_stairs", "pyramid_stairs_inv")

#: Sub-terrain types and the parameter each one's difficulty range sets.
TYPES: dict[str, str] = {
    "flat": "",  # no parameter
    "platform": "height_range",  # a raised square in the middle (spawn on it, step down)
    "pit": "height_range",  # a sunken square in the middle (spawn in it, step up)
    "pyramid_stairs": "height_range",  # a landing, stairs up to a top platform (spawn on top, go down); riser height
    "pyramid_stairs_inv": "height_range",  # a landing, stairs down to a bottom platform (spawn at the bottom, go up)
    "random_grid": "height_range",  # a grid of boxes of random heights in +-h/2, a flat platform in the middle
    "pyramid_slope": "slope_range_deg",  # four slopes up to a top platform (height field)
    "pyramid_slope_inv": "slope_range_deg",  # four slopes down to a bottom platform (height field)
    "random_rough": "height_range",  # uniform noise of amplitude h (height field)
}
HFIELD_TYPES = ("pyramid_slope", "pyramid_slope_inv", "random_rough")
#: The geometry fields each type's generator reads (:mod:`dexwheel.terrain.generator`); typing another is refused.
READS: dict[str, tuple[str, ...]] = {
    "flat": (),
    "platform": ("height_range", "platform_width"),
    "pit": ("height_range", "platform_width"),
    "pyramid_stairs": ("height_range", "step_width", "platform_width"),
    "pyramid_stairs_inv": ("height_range", "step_width", "platform_width"),
    "random_grid": ("height_range", "step_width", "platform_width"),
    "pyramid_slope": ("slope_range_deg", "platform_width"),
    "pyramid_slope_inv": ("slope_range_deg", "platform_width"),
    "random_rough": ("height_range",),
}


@dataclass(frozen=True)
class SubTerrainCfg:
    """One sub-terrain type of the grid: its columns' share and its geometry.

    ``height_range`` (m) is the step or platform height, stair riser, grid box spread or noise amplitude,
    ``slope_range_deg`` the slope angle: the low end at difficulty 0, the high end at 1. ``step_width`` is a
    stair tread or a grid cell (m), ``platform_width`` the flat square in the middle where the robot spawns, at
    least (a stairs tile's top or bottom landing; its other landing is the flat ring at the tile's edge, a tread
    wide but at least :data:`MIN_LANDING_M`, and its flight has as many steps as fit between the two).
    """

    type: str = "flat"
    proportion: float = 1.0
    height_range: tuple[float, float] = (0.0, 0.0)
    slope_range_deg: tuple[float, float] = (0.0, 0.0)
    step_width: float = 0.5
    platform_width: float = 1.5


#: The rough task's mix (proportions sum to 1): flat ground, single steps up and down (0.02-0.25 m), pyramid
#: stairs up and down (real stairs: 0.30 m treads, risers 0.05 m at the easiest level to 0.18 m at the hardest,
#: the building codes' 0.15-0.18 m at the top levels; five risers between a 0.5 m landing and a 1.6 m platform
#: on a 5 m tile: the step benchmark's flight, :mod:`dexwheel.protocols.steps`), a random box grid
#: (0.02-0.20 m, 0.5 m cells), pyramid slopes up to 25 deg, rough ground 2-8 cm.
ROUGH_SUB_TERRAINS: dict[str, SubTerrainCfg] = {
    "flat": SubTerrainCfg("flat", 0.1),
    "platform": SubTerrainCfg("platform", 0.1, height_range=(0.02, 0.25), platform_width=2.0),
    "pit": SubTerrainCfg("pit", 0.1, height_range=(0.02, 0.25), platform_width=2.0),
    "stairs_down": SubTerrainCfg("pyramid_stairs", 0.1, height_range=(0.05, 0.18), step_width=0.3),
    "stairs_up": SubTerrainCfg("pyramid_stairs_inv", 0.1, height_range=(0.05, 0.18), step_width=0.3),
    "boxes": SubTerrainCfg("random_grid", 0.1, height_range=(0.02, 0.20), step_width=0.5),
    "slope_down": SubTerrainCfg("pyramid_slope", 0.1, slope_range_deg=(0.0, 25.0)),
    "slope_up": SubTerrainCfg("pyramid_slope_inv", 0.1, slope_range_deg=(0.0, 25.0)),
    "rough": SubTerrainCfg("random_rough", 0.2, height_range=(0.02, 0.08)),
}


@dataclass(frozen=True)
class TerrainCfg:
    """The terrain grid (Isaac Lab's ``TerrainGeneratorCfg`` with ``curriculum=True``) and its curriculum.

    ``seed`` fixes the geometry (same config and seed: identical boxes and height fields). ``curriculum``
    moves each env between levels at its resets (the ``terrain_levels`` event); envs start on a level drawn
    in ``[0, min(max_init_terrain_level, num_rows - 1)]`` (without the curriculum: in every level).
    """

    seed: int = 0
    size: tuple[float, float] = (5.0, 5.0)  # one tile, x and y (m)
    border_width: float = 3.0  # flat ground around the grid (m)
    num_rows: int = 6  # difficulty levels
    num_cols: int = 9  # tiles per level, split among the types by proportion
    sub_terrains: dict[str, SubTerrainCfg] = field(default_factory=lambda: dict(ROUGH_SUB_TERRAINS))
    horizontal_scale: float = 0.1  # height-field sample spacing (m)
    curriculum: bool = True
    max_init_terrain_level: int = 2


def _bad(key: str, detail: str) -> ConfigFieldError:
    return ConfigFieldError(key, f"{key}: {detail}")


def _range(value: Any, key: str, low: float, high: float, unit: str) -> None:
    ok = (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in value)
        and low <= value[0] <= value[1] <= high
    )
    if not ok:
        raise _bad(key, f"expected (low, high) {unit} with {low:g} <= low <= high <= {high:g}, got {value!r}")


def validate(cfg: TerrainCfg | TerrainDescription, prefix: str = "terrain") -> None:
    """Refuse a terrain that cannot be built, naming the key (``terrain.sub_terrains.stairs.height_range``)
    and the allowed values. A :class:`TerrainDescription` (a fixed scene) needs its arrays' shapes."""
    if isinstance(cfg, TerrainDescription):
        _validate_scene(cfg, prefix)
        return
    check_types(cfg, f"{prefix}.")
    if not isinstance(cfg.seed, numbers.Integral) or isinstance(cfg.seed, bool) or cfg.seed < 0:
        raise _bad(f"{prefix}.seed", f"expected an integer >= 0, got {cfg.seed!r}")
    for name in ("num_rows", "num_cols"):
        v = getattr(cfg, name)
        if not (isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1):
            raise _bad(f"{prefix}.{name}", f"expected an integer >= 1, got {v!r}")
    if not (isinstance(cfg.size, (tuple, list)) and len(cfg.size) == 2 and all(
            isinstance(s, numbers.Real) and math.isfinite(s) and s >= MIN_TILE_M for s in cfg.size)):  # fmt: skip
        raise _bad(f"{prefix}.size", f"each tile side must be >= {MIN_TILE_M:g} m (twice the robot's "
                                     f"{ROBOT_FOOTPRINT_M:g} m footprint), got {cfg.size!r}")  # fmt: skip
    if not (math.isfinite(cfg.border_width) and cfg.border_width >= 0):
        raise _bad(f"{prefix}.border_width", f"expected a finite number >= 0 (m), got {cfg.border_width!r}")
    if not (0.0 < cfg.horizontal_scale <= min(cfg.size) / 4):
        raise _bad(f"{prefix}.horizontal_scale", f"expected 0 < spacing <= {min(cfg.size) / 4:g} m (a quarter "
                                                 f"tile), got {cfg.horizontal_scale!r}")  # fmt: skip
    v = cfg.max_init_terrain_level
    if not (isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0):
        raise _bad(f"{prefix}.max_init_terrain_level", f"expected an integer >= 0 (levels above num_rows - 1 mean the "
                                                       f"top one), got {v!r}")  # fmt: skip
    if not isinstance(cfg.sub_terrains, Mapping) or not cfg.sub_terrains:
        raise _bad(
            f"{prefix}.sub_terrains", f"expected a non-empty dict of sub-terrains by name, got {cfg.sub_terrains!r}"
        )
    total = 0.0
    for name, sub in cfg.sub_terrains.items():
        key = f"{prefix}.sub_terrains.{name}"
        if not isinstance(sub, SubTerrainCfg):
            raise _bad(key, f"expected a SubTerrainCfg or a dict of its fields, got {sub!r}")
        check_types(sub, f"{key}.")
        if sub.type not in TYPES:
            raise _bad(f"{key}.type", f"{sub.type!r}; use one of {list(TYPES)}")
        if not (math.isfinite(sub.proportion) and sub.proportion >= 0):
            raise _bad(f"{key}.proportion", f"expected a finite number >= 0, got {sub.proportion!r}")
        total += sub.proportion
        _range(sub.height_range, f"{key}.height_range", 0.0, MAX_HEIGHT_M, "m")
        _range(sub.slope_range_deg, f"{key}.slope_range_deg", 0.0, MAX_SLOPE_DEG, "deg")
        half = min(cfg.size) / 2
        if not (MIN_STEP_WIDTH_M <= sub.step_width <= half):
            raise _bad(f"{key}.step_width", f"expected {MIN_STEP_WIDTH_M:g} <= width <= {half:g} m (half a tile), "
                                            f"got {sub.step_width!r}")  # fmt: skip
        if not (ROBOT_FOOTPRINT_M <= sub.platform_width <= min(cfg.size)):
            raise _bad(f"{key}.platform_width", f"expected {ROBOT_FOOTPRINT_M:g} (the robot's footprint) <= width "
                                                f"<= {min(cfg.size):g} m (the tile), got {sub.platform_width!r}")  # fmt: skip
        most = min(cfg.size) - 2 * MIN_LANDING_M  # a stairs tile: its platform and a landing each side
        if sub.type in STAIRS_TYPES and sub.platform_width > most + 1e-9:
            raise _bad(f"{key}.platform_width", f"a {sub.type} tile of {min(cfg.size):g} m holds the platform and a "
                                                f"landing of at least {MIN_LANDING_M:g} m each side: expected "
                                                f"{ROBOT_FOOTPRINT_M:g} <= width <= {most:g} m, got "
                                                f"{sub.platform_width!r}")  # fmt: skip
    if abs(total - 1.0) > 1e-6:
        shares = {k: s.proportion for k, s in cfg.sub_terrains.items()}
        raise _bad(f"{prefix}.sub_terrains", f"the proportions must sum to 1, got {total:g} ({shares})")


def _validate_scene(desc: TerrainDescription, prefix: str) -> None:
    boxes, origins = np.asarray(desc.boxes), np.asarray(desc.origins)
    if boxes.ndim != 2 or boxes.shape[1] != 7:
        raise _bad(f"{prefix}.boxes", f"expected a (K, 7) array (centre, half sizes, yaw), got shape {boxes.shape}")
    if origins.ndim != 3 or origins.shape[2] != 3 or origins.shape[0] < 1 or origins.shape[1] < 1:
        raise _bad(f"{prefix}.origins", f"expected a (rows >= 1, cols >= 1, 3) array, got shape {origins.shape}")
    if not (len(boxes) or desc.heightfields):
        raise _bad(prefix, "a terrain description needs at least one box or height field")


def _plain(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def make_terrain_cfg(base: TerrainCfg | TerrainDescription | None, changes: Any,
                     prefix: str = "terrain") -> TerrainCfg | TerrainDescription | None:  # fmt: skip
    """``base`` with ``changes`` applied: a :class:`TerrainCfg`, a :class:`TerrainDescription` (a fixed scene,
    used as it is: the step benchmark's, :mod:`dexwheel.protocols.steps`), None or False (no terrain: flat
    ground), True (the default terrain) or a dict of fields. ``sub_terrains`` merges by name: a dict updates a sub-terrain's
    fields (a new one needs ``type``), None removes one. Not validated here (:func:`validate`)."""
    if changes is None or changes is False:
        return None
    if changes is True:
        return base if isinstance(base, TerrainCfg) else TerrainCfg()
    if isinstance(changes, (TerrainCfg, TerrainDescription)):
        return changes
    if not isinstance(changes, Mapping):
        raise _bad(prefix, f"expected a dict of terrain fields, true, false or None, got {changes!r}")
    base = base if isinstance(base, TerrainCfg) else TerrainCfg()
    names = [f.name for f in dataclasses.fields(TerrainCfg)]
    unknown = [k for k in changes if k not in names]
    if unknown:
        raise _bad(prefix, f"unknown field(s) {unknown}; valid: {names}")
    fields = dict(changes)
    if "sub_terrains" in fields:
        subs = dict(base.sub_terrains)
        new = fields["sub_terrains"]
        if not isinstance(new, Mapping):
            raise _bad(f"{prefix}.sub_terrains", f"expected a dict of sub-terrains by name, got {new!r}")
        sub_names = [f.name for f in dataclasses.fields(SubTerrainCfg)]
        for name, change in new.items():
            key = f"{prefix}.sub_terrains.{name}"
            if change is None:
                subs.pop(name, None)
            elif isinstance(change, SubTerrainCfg):
                subs[name] = change
            elif isinstance(change, Mapping):
                bad = [k for k in change if k not in sub_names]
                if bad:
                    raise _bad(key, f"unknown field(s) {bad}; a sub-terrain takes {sub_names}")
                previous = subs.get(name, SubTerrainCfg())
                if name in subs:
                    subs[name] = dataclasses.replace(subs[name], **change)
                elif "type" not in change:
                    raise _bad(key, f"a new sub-terrain needs 'type', one of {list(TYPES)}")
                else:
                    subs[name] = SubTerrainCfg(**change)
                used = ("type", "proportion", *READS.get(subs[name].type, sub_names))
                unread = [k for k in change if k not in used and _plain(change[k]) != _plain(getattr(previous, k))]
                if unread:  # it would be recorded and change nothing (a full dict from Hydra repeats the rest)
                    reads = ", ".join(READS[subs[name].type]) or "none"
                    raise _bad(
                        f"{key}.{unread[0]}", f"a {subs[name].type} tile does not use it (its geometry: {reads})"
                    )
            else:
                raise _bad(key, f"expected a dict of {sub_names} or None, got {change!r}")
        fields["sub_terrains"] = subs
    return dataclasses.replace(base, **fields)
