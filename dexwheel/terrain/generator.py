"""Generate the terrain grid from its config: seeded, so the same config gives the same geometry.

Tile ``(row, col)`` sits at ``x = (row + 1/2 - num_rows/2) * size_x``, ``y = (col + 1/2 - num_cols/2) * size_y``
(the grid centred on the world origin, rows along x as Isaac Lab's), its difficulty ``(row + u) / num_rows``
with ``u`` uniform in [0, 1) from the tile's own generator (``numpy.random.default_rng([seed, row, col])``,
so one tile does not depend on the others). Each sub-terrain is built around its tile's centre with its
ground level at z = 0: boxes for the vertical-edged types (steps, stairs, box grids: a height field would
turn every edge into a one-sample ramp), one height field per tile for the continuous ones (slopes, rough
ground). Every box reaches down to one common bottom below the deepest surface, so the boxes are solid.
"""

from __future__ import annotations

import math

import numpy as np

from dexwheel.terrain.config import MIN_LANDING_M, ROBOT_FOOTPRINT_M, TYPES, SubTerrainCfg, TerrainCfg, validate
from dexwheel.terrain.description import HeightField, TerrainDescription, height_at

#: The boxes' common bottom lies this far below the deepest surface (m).
BOTTOM_MARGIN_M = 0.5
#: Noise heights are multiples of this (m), as Isaac Lab's ``noise_step``.
NOISE_STEP_M = 0.005

# A tile's surfaces before placement: boxes as (cx, cy, hx, hy, top) in tile coordinates, height fields as
# (half x, half y, heights).
_Rect = tuple[float, float, float, float, float]


def _lerp(r: tuple[float, float], d: float) -> float:
    return float(r[0] + d * (r[1] - r[0]))


def _ring(hx_out: float, hy_out: float, hx_in: float, hy_in: float, top: float) -> list[_Rect]:
    """A square frame between an outer and an inner half size, as four boxes (x sides span the full y)."""
    w_x, w_y = hx_out - hx_in, hy_out - hy_in
    return [(-(hx_in + w_x / 2), 0.0, w_x / 2, hy_out, top), ((hx_in + w_x / 2), 0.0, w_x / 2, hy_out, top),
            (0.0, -(hy_in + w_y / 2), hx_in, w_y / 2, top), (0.0, (hy_in + w_y / 2), hx_in, w_y / 2, top)]  # fmt: skip


def stairs_steps(half: float, sub: SubTerrainCfg) -> tuple[int, float]:
    """A stairs tile's flight, for a tile ``2 half`` wide: its number of risers ``n`` and the width of its landing at
    the tile's edge (m). From the edge inwards: the landing, a tread wide but at least
    :data:`~dexwheel.terrain.config.MIN_LANDING_M` (two tiles side by side meet on a landing the robot fits on) and
    at most the room there is, ``n - 1`` treads of ``step_width``, as many as leave the platform at least
    ``platform_width``, and the platform, which takes the rest. The default tile (5 m, 0.30 m treads, a 1.5 m
    platform): a 0.5 m landing, 5 risers, a 1.6 m platform; treads of 0.5 m and more where they fit give the tiles
    of the generator before the landing."""
    room = half - sub.platform_width / 2  # the edge to the platform; validate() keeps it >= MIN_LANDING_M
    landing = max(MIN_LANDING_M, min(sub.step_width, room))
    return math.floor((room - landing) / sub.step_width + 1e-9) + 1, landing


def _stairs(hx: float, hy: float, sub: SubTerrainCfg, riser: float, down: bool) -> list[_Rect]:
    """Pyramid stairs: a landing at the tile edge (at 0), ``n - 1`` treads of ``step_width``, then the middle platform
    at ``+-n * riser`` (``down``: the inverted pyramid, a pit of stairs): ``n`` risers (:func:`stairs_steps`). Up:
    nested boxes; down: a ring per step."""
    n, landing = stairs_steps(min(hx, hy), sub)
    rects: list[_Rect] = []
    for k in range(n):
        inset = 0.0 if k == 0 else landing + (k - 1) * sub.step_width
        width = landing if k == 0 else sub.step_width
        ox, oy = hx - inset, hy - inset
        if down:
            rects += _ring(ox, oy, ox - width, oy - width, -k * riser)
        else:
            rects.append((0.0, 0.0, ox, oy, k * riser))
    inset = landing + (n - 1) * sub.step_width
    rects.append((0.0, 0.0, hx - inset, hy - inset, (-n if down else n) * riser))
    return rects


def _random_grid(hx: float, hy: float, sub: SubTerrainCfg, h: float, rng: np.random.Generator) -> list[_Rect]:
    """Cells of about ``step_width`` with tops uniform in ``[-h/2, h/2]`` over a base at ``-h/2``; the cells
    that reach into the middle ``platform_width`` square give way to a flat platform at 0."""
    nx, ny = max(1, round(2 * hx / sub.step_width)), max(1, round(2 * hy / sub.step_width))
    wx, wy = 2 * hx / nx, 2 * hy / ny
    tops = rng.uniform(-h / 2, h / 2, size=(nx, ny))
    p = sub.platform_width / 2
    rects: list[_Rect] = [(0.0, 0.0, hx, hy, -h / 2), (0.0, 0.0, p, p, 0.0)]
    for i in range(nx):
        for j in range(ny):
            x0, y0 = -hx + i * wx, -hy + j * wy
            if x0 < p and x0 + wx > -p and y0 < p and y0 + wy > -p:
                continue  # the platform's
            rects.append((x0 + wx / 2, y0 + wy / 2, wx / 2, wy / 2, float(tops[i, j])))
    return rects


def _hfield(hx: float, hy: float, cfg: TerrainCfg, sub: SubTerrainCfg, d: float,
            rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    """Heights ``(nrow, ncol)`` (rows along y) of a slope or rough tile, samples ``horizontal_scale`` apart."""
    ncol, nrow = round(2 * hx / cfg.horizontal_scale) + 1, round(2 * hy / cfg.horizontal_scale) + 1
    x, y = np.linspace(-hx, hx, ncol)[None, :], np.linspace(-hy, hy, nrow)[:, None]
    if sub.type == "random_rough":
        h = _lerp(sub.height_range, d)
        steps = int(h / NOISE_STEP_M + 1e-9)  # the amplitude never exceeds h
        return rng.integers(0, steps + 1, size=(nrow, ncol)) * NOISE_STEP_M
    slope = math.tan(math.radians(_lerp(sub.slope_range_deg, d)))
    to_edge = np.minimum(hx - np.abs(x), hy - np.abs(y))
    top = min(hx, hy) - sub.platform_width / 2
    z = slope * np.minimum(to_edge, top)
    return -z if sub.type == "pyramid_slope_inv" else z


def _tile(cfg: TerrainCfg, sub: SubTerrainCfg, d: float, rng: np.random.Generator):
    """A tile's boxes (``_Rect`` list) and height field (or None), around (0, 0), ground level 0."""
    hx, hy = cfg.size[0] / 2, cfg.size[1] / 2
    t = sub.type
    if t in ("pyramid_slope", "pyramid_slope_inv", "random_rough"):
        return [], _hfield(hx, hy, cfg, sub, d, rng)
    h = _lerp(sub.height_range, d)
    p = sub.platform_width / 2
    if t == "flat":
        return [(0.0, 0.0, hx, hy, 0.0)], None
    if t == "platform":
        return [(0.0, 0.0, hx, hy, 0.0), (0.0, 0.0, p, p, h)], None
    if t == "pit":
        return [*_ring(hx, hy, p, p, 0.0), (0.0, 0.0, p, p, -h)], None
    if t in ("pyramid_stairs", "pyramid_stairs_inv"):
        return _stairs(hx, hy, sub, h, down=t == "pyramid_stairs_inv"), None
    if t == "random_grid":
        return _random_grid(hx, hy, sub, h, rng), None
    raise ValueError(f"sub-terrain type {t!r}; use one of {list(TYPES)}")  # validate() refuses it first


def column_types(cfg: TerrainCfg) -> list[str]:
    """The sub-terrain (by name) of each column: column ``c`` takes the first whose cumulative proportion
    exceeds ``c / num_cols`` (Isaac Lab's curriculum split)."""
    names = list(cfg.sub_terrains)
    cum = np.cumsum([cfg.sub_terrains[k].proportion for k in names])
    return [names[min(int(np.searchsorted(cum, c / cfg.num_cols + 1e-9, side="right")), len(names) - 1)]
            for c in range(cfg.num_cols)]  # fmt: skip


def generate(cfg: TerrainCfg) -> TerrainDescription:
    """The terrain of ``cfg`` (validated first), described once (:class:`TerrainDescription`)."""
    validate(cfg)
    lx, ly = float(cfg.size[0]), float(cfg.size[1])
    types = column_types(cfg)
    rects: list[tuple[float, float, float, float, float]] = []
    fields: list[tuple[float, float, float, float, np.ndarray]] = []
    origins = np.zeros((cfg.num_rows, cfg.num_cols, 3))
    difficulty = np.zeros((cfg.num_rows, cfg.num_cols))
    # the spawn height: the highest surface within the robot's footprint around the tile centre (1 cm inside
    # it, so a platform as wide as the footprint is not read from the step at its edge)
    s = np.linspace(-ROBOT_FOOTPRINT_M / 2 + 0.01, ROBOT_FOOTPRINT_M / 2 - 0.01, 21)
    sx, sy = np.meshgrid(s, s, indexing="ij")
    for r in range(cfg.num_rows):
        for c in range(cfg.num_cols):
            rng = np.random.default_rng([cfg.seed, r, c])
            d = (r + rng.random()) / cfg.num_rows
            difficulty[r, c] = d
            cx, cy = (r + 0.5 - cfg.num_rows / 2) * lx, (c + 0.5 - cfg.num_cols / 2) * ly
            boxes, heights = _tile(cfg, cfg.sub_terrains[types[c]], d, rng)
            local = _describe([(x, y, hx, hy, top) for x, y, hx, hy, top in boxes],
                              [] if heights is None else [(0.0, 0.0, lx / 2, ly / 2, heights)], -1.0)  # fmt: skip
            origins[r, c] = cx, cy, float(np.max(height_at(local, sx, sy)))
            rects += [(cx + x, cy + y, hx, hy, top) for x, y, hx, hy, top in boxes]
            if heights is not None:
                fields.append((cx, cy, lx / 2, ly / 2, heights))
    gx, gy = cfg.num_rows * lx / 2, cfg.num_cols * ly / 2
    b = float(cfg.border_width)
    if b > 0:
        rects += [(cx, cy, hx, hy, 0.0) for cx, cy, hx, hy, _ in _ring(gx + b, gy + b, gx, gy, 0.0)]
    lowest = min([top for *_, top in rects] + [float(h.min()) for *_, h in fields] + [0.0])
    desc = _describe(rects, fields, lowest - BOTTOM_MARGIN_M)
    return TerrainDescription(desc.boxes, desc.heightfields, origins, tuple(types), difficulty,
                              (-gx - b, gx + b, -gy - b, gy + b), (lx, ly))  # fmt: skip


def _describe(rects, fields, bottom: float) -> TerrainDescription:
    """Boxes from their footprints and tops, each down to ``bottom``; the height fields as given."""
    boxes = np.array([(x, y, (top + bottom) / 2, hx, hy, (top - bottom) / 2, 0.0) for x, y, hx, hy, top in rects],
                     dtype=np.float64).reshape(-1, 7)  # fmt: skip
    hfs = tuple(HeightField((x, y), (hx, hy), np.asarray(h, dtype=np.float64)) for x, y, hx, hy, h in fields)
    return TerrainDescription(boxes, hfs, np.zeros((0, 0, 3)), (), np.zeros((0, 0)), (0.0, 0.0, 0.0, 0.0), (0.0, 0.0))
