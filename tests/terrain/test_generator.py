"""The terrain generator: its geometry is the MuJoCo model's, it is reproducible, bad input is refused."""

from __future__ import annotations

import math
from dataclasses import replace

import mujoco
import numpy as np
import pytest

from dexwheel.fields import ConfigFieldError
from dexwheel.terrain import (
    TYPES,
    HeightRaster,
    SubTerrainCfg,
    TerrainCfg,
    column_types,
    generate,
    height_at,
    make_terrain_cfg,
    validate,
)
from dexwheel.terrain.mujoco import add_terrain

#: Ray cast vs height_at (m): boxes are exact to rounding; a height field is stored as float32 samples
#: normalised to [0, 1] (relative error ~6e-8 of its <= 1 m spread).
TOL_M = 1e-6


def small(**kw) -> TerrainCfg:
    """Two levels, one column per type of the default mix (nine types), 3 m tiles: fast to build and cast."""
    return TerrainCfg(**{"size": (3.0, 3.0), "border_width": 1.0, "num_rows": 2, **kw})


def ray_heights(desc, x, y) -> np.ndarray:
    spec = mujoco.MjSpec()
    add_terrain(spec, desc)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geom = np.zeros(1, np.int32)
    down = np.array([0.0, 0.0, -1.0])
    return np.array([5.0 - mujoco.mj_ray(model, data, np.array([a, b, 5.0]), down, None, 1, -1, geom)
                     for a, b in zip(x, y, strict=True)])  # fmt: skip


def test_height_at_is_the_built_models_collision_surface():
    """Ray casts straight down onto the compiled MuJoCo terrain hit where height_at says, on every type."""
    desc = generate(small())
    assert set(desc.tile_types) == set(TerrainCfg().sub_terrains)  # every type of the mix is built
    rng = np.random.default_rng(0)
    xmin, xmax, ymin, ymax = desc.bounds
    x, y = rng.uniform(xmin, xmax, 3000), rng.uniform(ymin, ymax, 3000)
    expected, cast = height_at(desc, x, y), ray_heights(desc, x, y)
    assert np.isfinite(expected).all()
    np.testing.assert_allclose(cast, expected, rtol=0, atol=TOL_M)
    assert np.ptp(expected) > 0.3  # the sample saw steps, pits and slopes, not only flat ground


def test_the_same_config_gives_the_same_terrain_and_the_seed_changes_it():
    a, b, c = generate(small()), generate(small()), generate(small(seed=1))
    assert np.array_equal(a.boxes, b.boxes) and np.array_equal(a.origins, b.origins)
    assert all(np.array_equal(p.heights, q.heights) for p, q in zip(a.heightfields, b.heightfields, strict=True))
    assert np.array_equal(a.difficulty, b.difficulty)
    assert not np.array_equal(a.difficulty, c.difficulty)  # the difficulty jitter and the random types differ


def test_each_type_has_the_geometry_its_difficulty_asks_for():
    def one(sub: SubTerrainCfg):
        cfg = TerrainCfg(size=(4.0, 4.0), border_width=1.0, num_rows=1, num_cols=1, sub_terrains={"t": sub})
        desc = generate(cfg)
        return desc, desc.difficulty[0, 0], desc.origins[0, 0]

    desc, d, o = one(SubTerrainCfg("platform", height_range=(0.1, 0.2), platform_width=2.0))
    h = 0.1 + d * 0.1
    assert height_at(desc, 0.0, 0.0) == pytest.approx(h) and o[2] == pytest.approx(h)
    assert height_at(desc, 1.5, 0.0) == pytest.approx(0.0) and height_at(desc, -2.5, 0.0) == 0.0  # tile, border
    desc, d, o = one(SubTerrainCfg("pit", height_range=(0.1, 0.2), platform_width=2.0))
    assert o[2] == pytest.approx(-(0.1 + d * 0.1)) and height_at(desc, 1.5, 1.5) == pytest.approx(0.0)
    desc, d, o = one(SubTerrainCfg("pyramid_stairs", height_range=(0.1, 0.2), step_width=0.5, platform_width=1.0))
    riser = 0.1 + d * 0.1  # 3 treads of 0.5 m from the edge (2 m) to the 1 m platform
    assert [float(height_at(desc, 1.75 - 0.5 * k, 0.0)) for k in range(4)] == pytest.approx([0, riser, 2 * riser,
                                                                                              3 * riser])  # fmt: skip
    desc, d, o = one(SubTerrainCfg("pyramid_stairs_inv", height_range=(0.1, 0.2), step_width=0.5, platform_width=1.0))
    assert o[2] == pytest.approx(-3 * (0.1 + d * 0.1))
    desc, d, o = one(SubTerrainCfg("pyramid_slope", slope_range_deg=(10.0, 20.0), platform_width=1.0))
    slope = math.tan(math.radians(10.0 + 10.0 * d))
    assert float(height_at(desc, 1.0, 0.0) - height_at(desc, 1.5, 0.0)) == pytest.approx(0.5 * slope, abs=1e-9)
    desc, d, o = one(SubTerrainCfg("random_rough", height_range=(0.02, 0.08)))
    z = desc.heightfields[0].heights
    assert z.min() >= 0.0 and z.max() <= 0.02 + d * 0.06 + 1e-12 and z.min() <= o[2] <= z.max()
    desc, d, o = one(SubTerrainCfg("random_grid", height_range=(0.1, 0.2), step_width=0.5, platform_width=1.0))
    tops = desc.boxes[:, 2] + desc.boxes[:, 5]
    assert np.abs(tops).max() <= (0.1 + d * 0.1) / 2 + 1e-12 and o[2] == pytest.approx(0.0)


@pytest.mark.parametrize("name", ["stairs_down", "stairs_up"])
def test_the_rough_mixs_stairs_are_real_stairs_five_risers_between_two_landings(name):
    """The default stairs tiles (5 m): a 0.5 m landing at the tile's edge, four 0.30 m treads, a 1.6 m platform:
    five risers of 0.05 m (difficulty 0) to 0.18 m (difficulty 1), the step benchmark's flight."""
    sub = TerrainCfg().sub_terrains[name]
    assert (sub.step_width, sub.height_range, sub.platform_width) == (0.3, (0.05, 0.18), 1.5)
    desc = generate(
        TerrainCfg(num_rows=1, num_cols=1, border_width=1.0, sub_terrains={name: replace(sub, proportion=1.0)})
    )
    riser = (0.05 + desc.difficulty[0, 0] * 0.13) * (1 if sub.type == "pyramid_stairs" else -1)
    xs = np.array([2.25, 1.85, 1.55, 1.25, 0.95, 0.4, 0.0])  # the landing, each tread, the platform
    assert height_at(desc, xs, 0.0) == pytest.approx(riser * np.array([0, 1, 2, 3, 4, 5, 5]))
    assert height_at(desc, -xs, 0.0) == pytest.approx(height_at(desc, xs, 0.0))  # a pyramid: every side the same
    xs = np.arange(0.001, 2.5, 0.002)  # samples off the edges (a box face can sit 1e-16 m off its neighbour's)
    edges = xs[1:][np.abs(np.diff(height_at(desc, xs, 0.0))) > 1e-9]
    assert edges == pytest.approx([0.8, 1.1, 1.4, 1.7, 2.0], abs=0.002)  # the platform's edge, 4 treads
    assert 2.5 - edges[-1] == pytest.approx(0.5, abs=0.002)  # the landing at the tile's edge


@pytest.mark.parametrize(("tread", "platform", "steps", "landing"), [(0.3, 1.5, 5, 0.5), (0.5, 1.5, 3, 0.5),
                                                                     (0.8, 1.5, 2, 0.8), (0.25, 1.0, 7, 0.5),
                                                                     (0.3, 4.0, 1, 0.5), (1.5, 2.5, 1, 1.25)])  # fmt: skip
def test_a_stairs_tile_fits_as_many_treads_as_leave_a_landing_and_the_platform(tread, platform, steps, landing):
    """The landing at the tile's edge is a tread and at least half the robot's footprint (at most the room there is);
    the platform takes the rest (at least its ``platform_width``). Treads of 0.5 m and more that fit: the tiles of
    the generator before the landing."""
    from dexwheel.terrain.generator import stairs_steps

    n, width = stairs_steps(2.5, SubTerrainCfg("pyramid_stairs", step_width=tread, platform_width=platform))
    assert (n, width) == (steps, pytest.approx(landing))
    top = 2.5 - width - (n - 1) * tread  # the platform's half width
    assert platform / 2 - 1e-9 <= top < platform / 2 + tread and width == max(min(tread, 2.5 - platform / 2), 0.5)
    if tread >= 0.5 and platform == 1.5:
        assert n == int(1.75 // tread)  # the former rule: floor((half - platform / 2) / tread) risers


def test_columns_follow_the_proportions():
    subs = {"a": SubTerrainCfg("flat", 0.25), "b": SubTerrainCfg("platform", 0.5, (0.1, 0.2)),
            "c": SubTerrainCfg("pit", 0.25, (0.1, 0.2))}  # fmt: skip
    assert column_types(TerrainCfg(num_cols=8, sub_terrains=subs)) == ["a", "a", "b", "b", "b", "b", "c", "c"]


def test_the_raster_reads_height_at_away_from_vertical_edges():
    desc = generate(small())
    raster = HeightRaster(desc, 0.02)
    rng = np.random.default_rng(2)
    xmin, xmax, ymin, ymax = desc.bounds
    x, y = rng.uniform(xmin, xmax, 4000), rng.uniform(ymin, ymax, 4000)
    exact, read = height_at(desc, x, y), raster.lookup(x, y)
    # away from vertical edges (height_at changes by < 2 cm within 1.5 cm), the read is exact on boxes (to the
    # float32 raster) and within the slope times the half diagonal of a 2 cm cell on the height fields
    d = 0.015
    near = [height_at(desc, x + a, y + b) for a in (-d, d) for b in (-d, d)]
    calm = np.ptp(np.stack([exact, *near]), axis=0) < 0.02
    on_field = np.zeros_like(calm)
    for hf in desc.heightfields:
        on_field |= ~np.isnan(hf.surface(x, y))
    assert calm.mean() > 0.8 and (calm & on_field).sum() > 100 and (calm & ~on_field).sum() > 100
    np.testing.assert_allclose(read[calm & ~on_field], exact[calm & ~on_field], atol=1e-7)
    np.testing.assert_allclose(read[calm & on_field], exact[calm & on_field], atol=0.015)


# -- bad input: one line naming the key and what it allows ---------------------------------------------
BAD = [
    ({"size": (1.5, 5.0)}, "terrain.size: each tile side must be >= 2 m"),
    ({"num_rows": 0}, "terrain.num_rows: expected an integer >= 1"),
    ({"border_width": -1.0}, "terrain.border_width: expected a finite number >= 0"),
    ({"horizontal_scale": 0.0}, "terrain.horizontal_scale: expected 0 < spacing"),
    ({"max_init_terrain_level": -1}, "terrain.max_init_terrain_level: expected an integer >= 0"),
    ({"sub_terrains": {"flat": {"proportion": 0.5}}}, r"terrain.sub_terrains: the proportions must sum to 1, got 1.4"),
    (
        {"sub_terrains": {"stairs_up": {"height_range": (-0.05, 0.2)}}},
        r"terrain.sub_terrains.stairs_up.height_range: expected \(low, high\) m with 0 <= low <= high <= 1",
    ),
    ({"sub_terrains": {"platform": {"height_range": (0.25, 0.02)}}}, "terrain.sub_terrains.platform.height_range"),
    (
        {"sub_terrains": {"slope_up": {"slope_range_deg": (0.0, 60.0)}}},
        r"terrain.sub_terrains.slope_up.slope_range_deg: expected \(low, high\) deg with 0 <= low <= high <= 45",
    ),
    ({"sub_terrains": {"flat": {"type": "lava"}}}, r"terrain.sub_terrains.flat.type: 'lava'; use one of \['flat'"),
    ({"sub_terrains": {"boxes": {"step_width": 0.05}}}, "terrain.sub_terrains.boxes.step_width: expected 0.2 <="),
    (
        {"sub_terrains": {"pit": {"platform_width": 0.5}}},
        r"terrain.sub_terrains.pit.platform_width: expected 1 \(the robot's footprint\) <= width",
    ),
    (
        {"sub_terrains": {"stairs_up": {"platform_width": 4.5}}},
        r"terrain.sub_terrains.stairs_up.platform_width: a pyramid_stairs_inv tile of 5 m holds the platform and a "
        r"landing of at least 0.5 m each side: expected 1 <= width <= 4 m, got 4.5",
    ),
    ({"sub_terrains": {"flat": {"proportion": -0.1}}}, "terrain.sub_terrains.flat.proportion: expected a finite"),
    ({"sub_terrains": {"new": {"proportion": 0.0}}}, r"terrain.sub_terrains.new: a new sub-terrain needs 'type'"),
    ({"sub_terrains": {"flat": {"height": 1}}}, r"terrain.sub_terrains.flat: unknown field\(s\) \['height'\]"),
    ({"tiles": 3}, r"terrain: unknown field\(s\) \['tiles'\]"),
    (
        {"sub_terrains": {"slope_up": {"height_range": (0.1, 0.2)}}},
        r"terrain.sub_terrains.slope_up.height_range: a pyramid_slope_inv tile does not use it \(its geometry: "
        r"slope_range_deg, platform_width\)",
    ),
    (
        {"sub_terrains": {"flat": {"step_width": 0.3}}},
        r"terrain.sub_terrains.flat.step_width: a flat tile does not use it",
    ),
    ({"num_cols": "many"}, "terrain.num_cols: expected an integer, got 'many'"),
]


@pytest.mark.parametrize(("changes", "match"), BAD, ids=[m.split(":")[0] + f"-{i}" for i, (_, m) in enumerate(BAD)])
def test_bad_input_is_refused_naming_the_key(changes, match):
    with pytest.raises(ConfigFieldError, match=match) as e:
        validate(make_terrain_cfg(TerrainCfg(), changes))
    assert "\n" not in str(e.value)
    assert e.value.field.startswith("terrain")


def test_every_type_is_generated_and_none_else():
    assert set(TYPES) == {s.type for s in TerrainCfg().sub_terrains.values()}
