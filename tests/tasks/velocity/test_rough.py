"""The rough-terrain velocity task: single and vector envs agree bit for bit, the height scan reads the
terrain, the curriculum promotes and demotes by its rule, envs spawn on their tiles."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from vecutil import assert_same

import dexwheel  # noqa: F401
from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.velocity import events, observations, terminations
from dexwheel.tasks.velocity.config import mirror_maps
from dexwheel.tasks.velocity.terrain import TaskTerrain
from dexwheel.terrain import SubTerrainCfg, TerrainCfg, height_at

#: Small grids: two levels of the full mix on 3 m tiles (fast to build).
SMALL = {"size": (3.0, 3.0), "border_width": 1.0, "num_rows": 2}
STEP = 0.1  # the known step: a 0.1 m platform, 2 m wide, in a 4 m tile
PLATFORM = {"size": (4.0, 4.0), "border_width": 1.0, "num_rows": 1, "num_cols": 1,
            "sub_terrains": {"flat": None, "platform": {"proportion": 1.0, "height_range": (STEP, STEP)},
                             **{k: None for k in ("pit", "stairs_down", "stairs_up", "boxes", "slope_down",
                                                  "slope_up", "rough")}}}  # fmt: skip


@pytest.mark.parametrize(("env_id", "num_envs", "extra"), [
    ("Solenopsis-Rough-v0", 3, {"domain_randomization": True, "privileged_obs": True,
                                "observations": {"height_scan": {"params": {"noise": 0.05}}}}),
    ("M20Legacy-Rough-v0", 2, {}),
])  # fmt: skip
def test_vector_env_matches_single_envs_bit_for_bit(env_id, num_envs, extra):
    """The rough env as a native vector env and as gymnasium's SyncVectorEnv of single envs (seeds s + i): the
    same observations (the scan, its noise), rewards, infos (terrain_level) and resets (tilt limit 0.3 rad)."""
    kw = dict(max_tilt=0.3, episode_length_s=0.8, terrain=SMALL, **extra)
    venv = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kw)
    ref = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync",
                             vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, **kw)  # fmt: skip
    assert_same(venv.reset(seed=3), ref.reset(seed=3))
    rng = np.random.default_rng(1)
    dones = 0
    for _ in range(80):
        actions = rng.uniform(-1, 1, (num_envs, 8)).astype(np.float32)
        out, expected = venv.step(actions), ref.step(actions)
        assert_same(out, expected)
        dones += int((out[2] | out[3]).sum())
    assert dones >= num_envs  # resets, and so curriculum moves and respawns, were compared too
    assert "terrain_level" in out[4]
    venv.close()
    ref.close()


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_a_seeded_reset_repeats_the_trajectory_after_earlier_episodes(vector):
    """``reset(seed=s)`` starts as a new env would (the curriculum's level and tile drawn again, the scan noise
    counted from the episode's start), however many episodes ran before: the same seed and actions give the
    same trajectory, bit for bit."""
    kw = dict(max_tilt=0.3, episode_length_s=0.4, terrain=SMALL,
              observations={"height_scan": {"params": {"noise": 0.05}}})  # fmt: skip
    if vector:
        env = gymnasium.make_vec("Solenopsis-Rough-v0", num_envs=3, vectorization_mode="vector_entry_point", **kw)
    else:
        env = gymnasium.make("Solenopsis-Rough-v0", **kw)
    shape = env.action_space.shape
    acts = [a.astype(np.float32) for a in np.random.default_rng(1).uniform(-1, 1, (60, *shape))]

    def run() -> list:
        out = [env.reset(seed=3)]
        for a in acts:
            step = env.step(a)
            out.append(step)
            if not vector and (step[2] or step[3]):
                out.append(env.reset())  # later episodes: curriculum moves
        return out

    first, task = tuple(run()), env.unwrapped.task
    assert (task.terrain.level != -1).all()  # (the last episodes' levels; the next seeded reset forgets them)
    assert_same(tuple(run()), first)
    env.close()


def test_envs_spawn_on_their_tile_and_share_one_terrain():
    venv = gymnasium.make_vec("Solenopsis-Rough-v0", num_envs=4, vectorization_mode="vector_entry_point",
                              terrain=SMALL)  # fmt: skip
    _, info = venv.reset(seed=0)
    task = venv.unwrapped.task
    t = task.terrain
    assert (t.level >= 0).all() and (t.level <= 1).all() and np.array_equal(info["terrain_level"], t.level)
    np.testing.assert_array_equal(t.origin, t.desc.origins[t.level, t.column])
    q = task.physics.qpos
    np.testing.assert_array_equal(q[:, :2], t.origin[:, :2])  # at the tile's origin, x and y
    ground = height_at(t.desc, q[:, 0], q[:, 1])
    assert ((q[:, 2] - ground) > 0.2).all() and ((q[:, 2] - ground) < 0.4).all()  # standing on it
    ngeom = {m.ngeom for m in task.models}
    assert ngeom == {task.models[0].ngeom} and task.models[0].ngeom > len(t.desc.boxes)  # one terrain in every model
    venv.close()


def test_flat_envs_are_unchanged():
    env = gymnasium.make("Solenopsis-v0")
    _, info = env.reset(seed=0)
    assert env.unwrapped.task.terrain is None and "terrain_level" not in info
    assert env.unwrapped.model.geom("floor").type == 0  # the plane
    env.close()


def scan_task(yaw: float = 0.0):
    env = gymnasium.make("Solenopsis-Rough-v0", terrain=PLATFORM)
    env.reset(seed=0)
    task = env.unwrapped.task
    origin = task.terrain.origin[0]
    assert origin[2] == pytest.approx(STEP)  # spawned on the platform
    return env, task, origin


@pytest.mark.parametrize("yaw", [0.0, np.pi / 2])
def test_height_scan_reads_a_known_step(yaw):
    """The base 0.27 m inside the platform's +x edge (1 m from the centre), facing +x (or +y: the grid turns
    with the yaw): scan points up to 0.2 m ahead read the platform, from 0.3 m on the ground 0.1 m lower."""
    env, task, origin = scan_task()
    q = task.physics.qpos[0]
    q[0], q[1], q[2] = origin[0] + 0.73 * np.cos(yaw), origin[1] + 0.73 * np.sin(yaw), 0.5
    q[3:7] = np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)
    scan = observations.height_scan(task, size=(1.0, 0.6), resolution=0.1, offset=0.3).reshape(11, 7)
    ahead = np.arange(11) * 0.1 - 0.5  # each grid row's distance ahead of the base
    expected = np.where(ahead <= 0.2 + 1e-9, 0.5 - STEP - 0.3, 0.5 - 0.0 - 0.3)
    np.testing.assert_allclose(scan, np.repeat(expected[:, None], 7, axis=1), atol=1e-7)  # float32 raster
    env.close()


def test_height_scan_is_clipped_by_its_entry_and_mirrors():
    env, task, origin = scan_task()
    sl = env.unwrapped.obs_slices["height_scan"]
    q = task.physics.qpos[0]
    q[2] = 5.0  # far above the ground: the entry's clip (-1, 1) holds it at +1
    assert (observations.height_scan(task) > 4.0).all() and (task.compute_obs()[0, sl] == 1.0).all()
    # the mirror swaps +y and -y points: a scan of a step on the left mirrors to one on the right
    slices = env.unwrapped.obs_slices
    (index, sign), _ = env.unwrapped.mirror_maps
    grid = np.arange(77).reshape(11, 7)
    assert np.array_equal(index[sl] - sl.start, grid[:, ::-1].ravel()) and (sign[sl] == 1).all()
    assert mirror_maps(slices, task.policy_joints, {"height_scan": index[sl] - sl.start})[0][0].shape == index.shape
    env.close()


def test_height_scan_noise_is_fresh_each_step_and_the_same_however_often_a_step_observes():
    """Issue 57: the noise of step 1 repeated the reset's, and a command-resample step repeated the one before."""
    env = gymnasium.make("Solenopsis-Rough-v0", terrain=PLATFORM, observations={"height_scan": {"noise": 0.05}},
                         commands={"resampling_time_s": (0.1, 0.1)})  # fmt: skip
    clean_env = gymnasium.make("Solenopsis-Rough-v0", terrain=PLATFORM, commands={"resampling_time_s": (0.1, 0.1)})
    sl = env.unwrapped.obs_slices["height_scan"]
    obs, _ = env.reset(seed=3)
    clean, _ = clean_env.reset(seed=3)
    noises = [obs[sl] - clean[sl]]
    task = env.unwrapped.task
    for _ in range(12):  # a resample every 5 steps: each recomputes the observation within its step
        action = np.zeros(8, dtype=np.float32)
        obs = env.step(action)[0]
        clean = clean_env.step(action)[0]
        noise = obs[sl] - clean[sl]
        assert np.array_equal(task.compute_obs()[0, sl], obs[sl])  # observed again in the same step: the same noise
        noises.append(noise)
    noises = np.array(noises)
    assert np.abs(noises).max() <= 0.05 + 1e-6 and np.abs(noises).max() > 0.04
    for a in range(len(noises)):  # every step's noise is its own: no two steps share one
        for b in range(a):
            assert not np.allclose(noises[a], noises[b]), (a, b)
    env.close()
    clean_env.close()


def test_height_scan_on_a_flat_task_is_refused_naming_the_term():
    with pytest.raises(ConfigFieldError, match="observations.scan: .*has none; give it one"):
        gymnasium.make("Solenopsis-v0", observations={"scan": {"func": observations.height_scan}})
    with pytest.raises(ConfigFieldError, match="observations.height_scan.params.resolution: must be"):
        gymnasium.make(
            "Solenopsis-Rough-v0", terrain=SMALL, observations={"height_scan": {"params": {"resolution": 0}}}
        )


def mock(level: int, distance: float, command: float, curriculum: bool = True, rows: int = 4):
    """A task with one env that just ended an episode ``distance`` m from its origin under ``command`` m/s."""
    cfg = TerrainCfg(**{**SMALL, "num_rows": rows, "curriculum": curriculum})
    terrain = TaskTerrain(cfg, 1)
    task = SimpleNamespace(terrain=terrain, commands=np.array([[command, 0.0]]),
                           cfg=SimpleNamespace(episode_length_s=20.0), physics=SimpleNamespace(qpos=np.zeros((1, 7))))  # fmt: skip
    if level >= 0:
        terrain.column[0] = 2
        terrain.move(0, level)
        task.physics.qpos[0, :2] = terrain.origin[0, :2] + (distance, 0.0)
    return task


@pytest.mark.parametrize(("level", "distance", "command", "after"), [
    (1, 1.6, 1.0, 2),  # more than half a 3 m tile: promoted (whatever the command)
    (1, 1.6, 0.0, 2),
    (2, 1.0, 1.0, 1),  # 1 m of 20 m asked (< 10 m): demoted
    (2, 1.0, 0.05, 2),  # 1 m of 1 m asked (>= 0.5 m): stays
    (2, 0.0, 0.0, 2),  # a standing command never demotes
    (0, 0.0, 1.0, 0),  # level 0 stays 0
])  # fmt: skip
def test_the_curriculum_rule(level, distance, command, after):
    task = mock(level, distance, command)
    events.terrain_levels(task, 0, np.random.default_rng(0))
    assert task.terrain.level[0] == after
    np.testing.assert_array_equal(task.terrain.origin[0], task.terrain.desc.origins[after, 2])


def test_past_the_top_a_random_level_and_without_curriculum_no_move():
    levels = set()
    for seed in range(20):
        task = mock(3, 2.0, 1.0)  # the top of four rows, promoted
        events.terrain_levels(task, 0, np.random.default_rng(seed))
        levels.add(int(task.terrain.level[0]))
    assert levels <= {0, 1, 2, 3} and len(levels) > 1
    task = mock(2, 0.0, 1.0, curriculum=False)
    events.terrain_levels(task, 0, np.random.default_rng(0))
    assert task.terrain.level[0] == 2


def test_first_reset_draws_a_level_up_to_max_init():
    seen = set()
    for seed in range(30):
        task = mock(-1, 0.0, 0.0, rows=6)
        events.terrain_levels(task, 0, np.random.default_rng(seed))
        seen.add(int(task.terrain.level[0]))
    assert seen == {0, 1, 2}  # max_init_terrain_level 2


def test_out_of_bounds_ends_near_the_terrains_edge():
    task = mock(0, 0.0, 0.0)
    xmin, xmax, ymin, ymax = task.terrain.desc.bounds
    task.num_envs = 1
    task.physics.qpos[0, :2] = xmax - 0.5, 0.0
    assert terminations.terrain_out_of_bounds(task, distance_buffer=1.0)[0]
    task.physics.qpos[0, :2] = xmax - 1.5, ymin + 1.5
    assert not terminations.terrain_out_of_bounds(task, distance_buffer=1.0)[0]


def test_a_copy_continues_the_same_trajectory():
    env = gymnasium.make("Solenopsis-Rough-v0", terrain=SMALL, episode_length_s=0.5)
    env.reset(seed=4)
    for _ in range(30):
        env.step(np.full(8, 0.2, np.float32))
    twin = copy.deepcopy(env)
    for _ in range(30):  # across a reset: the curriculum reads the copied levels and origins
        a, b = env.step(np.full(8, 0.3, np.float32)), twin.step(np.full(8, 0.3, np.float32))
        assert_same(a, b)
    env.close()
    twin.close()


def test_hydra_task_rough_builds_the_rough_env():
    from hydra import compose, initialize_config_dir

    from dexwheel.rl.env_factory import make_env

    configs = Path(__file__).resolve().parents[3] / "configs"
    with initialize_config_dir(config_dir=str(configs), version_base="1.3"):
        cfg = compose(config_name="train", overrides=["robot=solenopsis", "task=velocity_rough",
                                                      "task.velocity_rough.terrain.num_rows=2"])  # fmt: skip
    assert cfg.task.name == "velocity_rough"
    env = make_env(cfg)
    assert env.unwrapped.cfg.terrain.num_rows == 2 and "height_scan" in env.unwrapped.obs_slices
    ref = gymnasium.make("Solenopsis-Rough-v0", terrain={"num_rows": 2})
    assert env.unwrapped.cfg == ref.unwrapped.cfg  # the same config as the env id's
    env.close()
    ref.close()


def test_a_one_type_terrain():
    env = gymnasium.make("Solenopsis-Rough-v0", terrain={**SMALL, "sub_terrains": {
        k: ({"proportion": 1.0} if k == "flat" else None) for k in TerrainCfg().sub_terrains}})  # fmt: skip
    env.reset(seed=0)
    assert set(env.unwrapped.task.terrain.desc.tile_types) == {"flat"}
    assert env.unwrapped.cfg.terrain.sub_terrains == {"flat": SubTerrainCfg("flat", 1.0)}
    env.close()


@pytest.mark.parametrize(("size", "resolution", "hint"), [((1.0, 0.65), 0.1, "use 0.6 or 0.7 m"),
                                                          ((1.0, 0.6), 0.4, "use 0.8 or 1.2 m")])  # fmt: skip
def test_a_scan_grid_that_would_not_span_its_size_is_refused_naming_the_key(size, resolution, hint):
    """Issue 57: (1.0, 0.65) at 0.1 m spanned 0.6 m; resolution 0.4 gave 0.8 x 0.4 m instead of 1.0 x 0.6 m."""
    with pytest.raises(
        ConfigFieldError, match=rf"observations\.height_scan\.params\.size: .* whole number of resolution steps.*{hint}"
    ):
        gymnasium.make("Solenopsis-Rough-v0", terrain=SMALL,
                       observations={"height_scan": {"params": {"size": size, "resolution": resolution}}})  # fmt: skip


def test_the_scan_grid_spans_exactly_its_size():
    from dexwheel.tasks.velocity.terrain import TaskTerrain

    for size, res in (((1.0, 0.6), 0.1), ((1.2, 0.8), 0.4), ((0.0, 0.5), 0.25)):
        pts = TaskTerrain.scan_pattern(size, res)
        np.testing.assert_allclose(pts.max(axis=0) - pts.min(axis=0), size, atol=1e-12)
