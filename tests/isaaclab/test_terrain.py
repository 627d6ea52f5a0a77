"""The terrain on Isaac Lab is the MuJoCo scene's: built from the same description, the same surface.

Rays cast straight down onto the MuJoCo model that Newton hands MuJoCo-Warp (its box and hfield geoms) find
``height_at``'s heights to ``TOL_M`` at points over every sub-terrain type, and that model holds one box geom
per description box and one hfield per height field, with the MuJoCo scene's solid base.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from dexwheel.terrain import TerrainCfg, generate, height_at
from dexwheel.terrain.description import HFIELD_BASE_M

#: Ray cast vs height_at (m): boxes are float32 in MuJoCo-Warp's model export only where Newton stores them
#: (positions and sizes), a height field float32 samples normalised over its spread (<= 1 m).
TOL_M = 1e-5
#: every type of the default mix, two levels, on the default 5 m tiles: a stairs tile is a real flight (five risers
#: 0.30 m apart between a 0.5 m landing and the platform, up and down; on a 3 m tile it would be one riser)
TERRAIN = TerrainCfg(border_width=1.0, num_rows=2)


@pytest.fixture(scope="module")
def built(isaac_device):
    import isaaclab.sim as sim_utils
    from isaaclab.scene import InteractiveScene, InteractiveSceneCfg
    from isaaclab_newton.physics import NewtonManager

    from dexwheel.isaaclab.robots import articulation_cfg
    from dexwheel.isaaclab.sim import simulation_cfg
    from dexwheel.isaaclab.terrain import DescriptionTerrainImporterCfg, TerrainSource
    from dexwheel.robots import get_robot

    sim = sim_utils.SimulationContext(simulation_cfg(get_robot("solenopsis"), isaac_device))
    scene_cfg = InteractiveSceneCfg(num_envs=4, env_spacing=3.0)
    scene_cfg.terrain = DescriptionTerrainImporterCfg(prim_path="/World/ground", terrain=TerrainSource(TERRAIN))
    # MuJoCo-Warp needs a joint: a robot held 20 m above each env's origin, out of the rays' way (never stepped)
    scene_cfg.robot = articulation_cfg("solenopsis", "{ENV_REGEX_NS}/Robot", {}, (0.0, 0.0, 20.0))
    scene = InteractiveScene(scene_cfg)
    sim.reset()
    model = NewtonManager._solver.mj_model
    origins = scene.env_origins.cpu().numpy()
    importer = scene.terrain
    yield model, importer, origins
    sim_utils.SimulationContext.clear_instance()


def test_the_model_holds_the_descriptions_boxes_and_height_fields(built):
    model, importer, _ = built
    desc = importer.description
    assert desc is not None and np.array_equal(desc.boxes, generate(TERRAIN).boxes)  # the same description
    boxes = (model.geom_type == mujoco.mjtGeom.mjGEOM_BOX) & (model.geom_bodyid == 0)  # the world's (not the robot's)
    assert boxes.sum() == len(desc.boxes)
    np.testing.assert_allclose(np.sort(model.geom_size[boxes], axis=0), np.sort(desc.boxes[:, 3:6], axis=0), atol=1e-6)
    assert model.nhfield == len(desc.heightfields)
    np.testing.assert_array_equal(model.hfield_size[:, 3], HFIELD_BASE_M)  # the MuJoCo scene's solid base
    assert (model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE).sum() == 0  # the terrain replaces the plane


def test_rays_onto_the_isaac_model_find_height_at(built):
    model, importer, _ = built
    desc = importer.description
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    rng = np.random.default_rng(0)
    xmin, xmax, ymin, ymax = desc.bounds
    x, y = rng.uniform(xmin, xmax, 3000), rng.uniform(ymin, ymax, 3000)
    z = np.empty_like(x)
    geom = np.zeros(1, np.int32)
    for k in range(len(x)):
        z[k] = 5.0 - mujoco.mj_ray(model, data, np.array([x[k], y[k], 5.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1,
                                   geom)  # fmt: skip
    err = np.abs(z - height_at(desc, x, y))
    print(f"\nmax |ray - height_at| over {len(x)} points: {err.max():.2e} m")
    assert err.max() < TOL_M


def test_env_origins_are_the_tiles_origins(built):
    _, importer, origins = built
    desc = importer.description
    tiles = desc.origins[importer.terrain_levels.cpu().numpy(), importer.terrain_types.cpu().numpy()]
    np.testing.assert_allclose(origins, tiles, atol=1e-6)


def test_a_stairs_tile_is_a_real_flight(built):
    """Each stairs tile on the Isaac model is the flight of the description: rays at the middle of each tread, from the
    tile's edge to its platform, find the landing, the treads and the platform ``riser`` apart (five risers)."""
    from dexwheel.terrain.generator import stairs_steps

    model, importer, _ = built
    desc = importer.description
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geom = np.zeros(1, np.int32)
    half = TERRAIN.size[0] / 2
    flights = 0
    for c, name in enumerate(desc.tile_types):
        sub = TERRAIN.sub_terrains[name]
        if sub.type not in ("pyramid_stairs", "pyramid_stairs_inv"):
            continue
        n, landing = stairs_steps(half, sub)
        assert n == 5 and landing == pytest.approx(0.5)
        sign = -1.0 if sub.type == "pyramid_stairs_inv" else 1.0
        inset = np.array([landing / 2, *(landing + (k + 0.5) * sub.step_width for k in range(n - 1)), half - 0.1])
        for r in range(desc.origins.shape[0]):
            riser = sub.height_range[0] + desc.difficulty[r, c] * (sub.height_range[1] - sub.height_range[0])
            cx, cy = desc.origins[r, c, :2]
            z = [5.0 - mujoco.mj_ray(model, data, np.array([cx - half + d, cy, 5.0]), np.array([0.0, 0.0, -1.0]),
                                     None, 1, -1, geom) for d in inset]  # fmt: skip
            np.testing.assert_allclose(z, sign * riser * np.arange(n + 1), atol=TOL_M)
            flights += 1
    assert flights == 4  # stairs up and down, two levels
