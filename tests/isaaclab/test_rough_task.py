"""The Isaac Lab rough task is the MuJoCo rough config on the terrain built from the same description.

Its terms map by function (height scan, out-of-bounds, the curriculum, the spawn on the tile), the envs
start on their tiles' origins, the height scan is the MuJoCo lookup of the same raster, and the curriculum
moves envs by the MuJoCo rule.
"""

import numpy as np
import pytest
import torch

from dexwheel.isaaclab.episodes import open_task
from dexwheel.tasks.velocity.config import make_cfg
from dexwheel.tasks.velocity.rough import rough_cfg
from dexwheel.tasks.velocity.terrain import TaskTerrain, scan_heights

TASK = "Dexwheel-Velocity-Rough-Solenopsis-v0"
NUM_ENVS = 6
OVERRIDES = {"terrain": {"num_rows": 3, "size": (4.0, 4.0), "border_width": 1.0}}


@pytest.fixture(scope="module")
def env(isaac_device):
    env = open_task(TASK, NUM_ENVS, isaac_device, 0, OVERRIDES)
    env.reset(seed=0)
    yield env
    env.close()


def test_the_rough_terms_map_by_function(env):
    u, task = env.unwrapped, make_cfg(rough_cfg(), **OVERRIDES)
    policy = [k for k, t in task.observations.items() if t.group == "policy"]
    assert u.observation_manager.active_terms["policy"] == policy  # the MuJoCo columns, height_scan last
    assert u.observation_manager.group_obs_dim["policy"] == (28 + 77,)
    assert set(task.terminations) <= set(u.termination_manager.active_terms)
    assert u.curriculum_manager.active_terms == ["terrain_levels"]
    assert "reset_base_on_terrain" in u.event_manager.active_terms["reset"]
    assert u.scene.terrain.description.num_rows == 3 and u.scene.terrain.description.tile_size == (4.0, 4.0)


def test_envs_start_on_their_tiles_facing_random_headings(env):
    u = env.unwrapped
    terrain, robot = u.scene.terrain, u.scene["robot"]
    origins = terrain.description.origins[terrain.terrain_levels.cpu().numpy(), terrain.terrain_types.cpu().numpy()]
    np.testing.assert_allclose(u.scene.env_origins.cpu().numpy(), origins, atol=1e-6)
    pos = robot.data.root_link_pos_w.torch.cpu().numpy()
    assert np.all(terrain.terrain_levels.cpu().numpy() <= 2)  # max_init_terrain_level
    np.testing.assert_allclose(pos[:, :2], origins[:, :2], atol=0.05)  # the reset's noise, a short drop
    assert np.all((pos[:, 2] - origins[:, 2] > 0.2) & (pos[:, 2] - origins[:, 2] < 0.4))  # standing on the tile
    q = robot.data.root_link_quat_w.torch.cpu().numpy()  # x, y, z, w
    yaw = np.arctan2(2 * (q[:, 3] * q[:, 2] + q[:, 0] * q[:, 1]), 1 - 2 * (q[:, 1] ** 2 + q[:, 2] ** 2))
    assert np.ptp(yaw) > 0.5  # uniform headings, not all the same


def test_the_height_scan_is_the_mujoco_lookup_of_the_same_raster(env):
    u = env.unwrapped
    for _ in range(5):
        obs, *_ = env.step(torch.zeros(NUM_ENVS, 8))
    robot, terrain = u.scene["robot"], u.scene.terrain
    pos = robot.data.root_link_pos_w.torch.double().cpu().numpy()
    quat = robot.data.root_link_quat_w.torch.double().cpu().numpy()[:, [3, 0, 1, 2]]
    term = u.cfg.observations.policy.height_scan
    params = term.params
    assert tuple(term.clip) == (-1.0, 1.0) and term.noise is None  # the MuJoCo entry's processing
    pts = TaskTerrain.scan_pattern(tuple(params["size"]), params["resolution"])
    expected = np.clip(scan_heights(terrain.raster, pos, quat, pts) - params["offset"], *term.clip)
    scan = obs["policy"][:, 28:].cpu().numpy()
    assert np.mean(np.abs(scan - expected) < 1e-5) > 0.99  # float32 positions may round to the next sample
    assert np.all(np.abs(scan[:, 38]) < 0.1)  # the middle point: the base ~0.28 m over the ground under it


def test_the_curriculum_follows_the_mujoco_rule(env):
    u = env.unwrapped
    terrain, robot = u.scene.terrain, u.scene["robot"]
    terrain.terrain_levels[:2] = 1
    terrain.update_env_origins(torch.arange(2), torch.zeros(2, dtype=torch.bool), torch.zeros(2, dtype=torch.bool))
    pose = torch.cat([robot.data.root_link_pos_w.torch, robot.data.root_link_quat_w.torch], dim=1)[:2].clone()
    pose[:, :2] = u.scene.env_origins[:2, :2]
    pose[0, 0] += 2.5  # env 0 left its 4 m tile: promoted
    robot.write_root_link_pose_to_sim_index(root_pose=pose, env_ids=torch.arange(2, dtype=torch.int32))
    command = u.command_manager.get_term("base_velocity").vel_command_b
    command[:2] = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])  # env 1 asked to go and stayed: demoted
    u._reset_idx(torch.arange(2))
    assert terrain.terrain_levels[:2].tolist() == [2, 0]


def test_the_observations_mirror_with_the_height_scans_grid(env):
    from dexwheel.isaaclab.episodes import mirror_maps

    u = env.unwrapped
    (index, sign), _ = mirror_maps(env)  # the rsl_rl mirrored batches' maps (symmetry=null trains with them)
    group = "critic" if "critic" in u.observation_manager.active_terms else "policy"
    names = u.observation_manager.active_terms[group]
    dims = [int(np.prod(d)) for d in u.observation_manager.group_obs_term_dim[group]]
    start = sum(dims[: names.index("height_scan")])
    scan = index[start : start + 77] - start  # 11 x 7 points, y -> -y: each x row reversed
    np.testing.assert_array_equal(scan, np.arange(77).reshape(11, 7)[:, ::-1].ravel())
    assert np.all(sign[start : start + 77] == 1)


def test_leaving_the_terrain_terminates(env):
    from dexwheel.isaaclab.tasks.velocity.terminations import terrain_out_of_bounds

    u = env.unwrapped
    xmin, xmax, ymin, ymax = u.scene.terrain.description.bounds
    robot = u.scene["robot"]
    pose = torch.cat([robot.data.root_link_pos_w.torch, robot.data.root_link_quat_w.torch], dim=1)[:1].clone()
    pose[0, 0] = xmax - 0.5
    robot.write_root_link_pose_to_sim_index(root_pose=pose, env_ids=torch.tensor([0], dtype=torch.int32))
    out = terrain_out_of_bounds(u, distance_buffer=1.0)
    assert out[0] and not out[1:].any()


def test_without_the_curriculum_envs_start_on_every_level():
    from dexwheel.isaaclab.tasks import VelocityRoughSolenopsisEnvCfg

    cfg = VelocityRoughSolenopsisEnvCfg(task_overrides={"terrain": {"curriculum": False}})
    assert cfg.scene.terrain.max_init_terrain_level is None
    assert not hasattr(cfg.curriculum, "terrain_levels")


def test_an_episode_that_leaves_the_terrain_is_out_of_bounds_not_a_fall(env):
    """The MuJoCo evaluation's metrics on Isaac Lab read the step's termination flags: with a 50 m buffer every
    env is out of bounds at its first step, and that is no fall."""
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    from dexwheel.isaaclab.episodes import isaac_episodes

    term = env.unwrapped.termination_manager.get_term_cfg("out_of_bounds")
    buffer = term.params["distance_buffer"]
    venv = RslRlVecEnvWrapper(env)
    zero = torch.zeros(venv.num_envs, venv.num_actions, device=venv.device)
    term.params["distance_buffer"] = 50.0
    try:
        episodes = isaac_episodes(venv, lambda obs: zero, "velocity_rough", 3, seed=0).episodes
    finally:
        term.params["distance_buffer"] = buffer
    assert [(e["length"], e["fall"], e["out_of_bounds"]) for e in episodes] == [(1.0, 0.0, 1.0)] * 3
