"""G20Rotate-v0, G20RotateZ-v0 and G20Reorient-v0 as a user meets them: the Gymnasium API, the vector env bit for bit,
what the rewards and terminations compute from the physics, and bad input refused in one line naming the key."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from dexwheel.control import ActionError
from dexwheel.envs import register_envs
from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.in_hand import grasp_cache
from dexwheel.tasks.in_hand.geometry import quat_rotate
from dexwheel.tasks.in_hand.objects import ObjectSpec
from dexwheel.tasks.in_hand.observations import gait_phase

register_envs()
IDS = ("G20Rotate-v0", "G20RotateZ-v0", "G20Reorient-v0")


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes(env_id):
    env = gym.make(env_id).unwrapped
    check_env(env, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_the_vector_env_is_n_single_envs_bit_for_bit(env_id):
    n, steps = 3, 15
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    singles = [gym.make(env_id) for _ in range(n)]
    obs, _ = venv.reset(seed=11)
    for i, env in enumerate(singles):
        o, _ = env.reset(seed=11 + i)
        np.testing.assert_array_equal(obs[i], o)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        a = rng.uniform(-1, 1, (n, 16)).astype(np.float32)
        obs, reward, term, trunc, info = venv.step(a)
        for i, env in enumerate(singles):
            o, r, t, tr, inf = env.step(a[i])
            np.testing.assert_array_equal(obs[i], o)
            assert reward[i] == r and term[i] == t and trunc[i] == tr
            assert all(info[k][i] == v for k, v in inf.items())
    venv.close()


@pytest.mark.parametrize("env_id", ["G20Rotate-v0", "G20RotateZ-v0"])
def test_the_start_is_a_grasp_of_the_cache_and_holding_still_keeps_the_object(env_id):
    """Reset puts the hand and the object where a cached grasp has them; zero deltas (the fingers commanded to stay)
    hold the object for 2 s within 5 mm, turning it by less than 0.05 rad about the task's axis."""
    env = gym.make(env_id)
    task = env.unwrapped.task
    cache = grasp_cache.load(grasp_cache.path_for("left", task.cfg.object))
    env.reset(seed=3)
    k = np.flatnonzero((cache.object_pose == task.start_object[0]).all(axis=1))
    assert len(k) == 1 and np.array_equal(cache.joints[k[0]], task.start_joints[0])
    np.testing.assert_array_equal(task.object_pos[0], cache.object_pose[k[0], :3])
    for _ in range(40):
        _, _, terminated, truncated, info = env.step(np.zeros(16, dtype=np.float32))
        assert not (terminated or truncated)
    assert info["object_drift"] < 0.005 and abs(info["rotation_angle"]) < 0.05


@pytest.mark.parametrize("env_id", ["G20Rotate-v0", "G20RotateZ-v0"])
def test_the_rotation_reward_is_the_objects_clipped_angular_velocity_about_the_axis(env_id):
    env = gym.make(env_id, rewards={"rotation_velocity": {"params": {"max_rate": 0.01}}})
    env.reset(seed=0)
    data, task = env.unwrapped.data, env.unwrapped.task
    rng = np.random.default_rng(1)
    seen = []
    for _ in range(10):
        _, _, _, _, info = env.step(rng.uniform(-1, 1, 16).astype(np.float32))
        adr = task.obj_vadr
        quat = data.qpos[task.obj_qadr + 3 : task.obj_qadr + 7]
        world = quat_rotate(quat[None], data.qvel[adr + 3 : adr + 6][None])[0]  # the free joint's is local
        about = float(world @ np.asarray(task.cfg.commands.axis))
        assert info["rotation_rate"] == pytest.approx(about, abs=1e-12)
        assert info["reward_rotation_velocity"] == pytest.approx(np.clip(about, -0.01, 0.01), abs=1e-12)
        seen.append(abs(about) > 0.01)
    assert any(seen)  # the clip was met


def test_a_drop_ends_the_episode_with_its_price():
    env = gym.make("G20Rotate-v0")
    env.reset(seed=0)
    task = env.unwrapped.task
    env.unwrapped.data.qpos[task.obj_qadr + 2] -= 0.1  # the object below the palm: off the hand
    _, reward, terminated, truncated, info = env.step(np.zeros(16, dtype=np.float32))
    assert terminated and not truncated and info["terminated_object_dropped"]
    assert info["reward_termination_penalty"] == -5.0 and reward < -4.5  # the weighted contribution


def test_reorientation_counts_each_goal_reached_and_draws_the_next():
    env = gym.make("G20Reorient-v0", commands={"success_tolerance": 3.2})  # > pi: every step reaches its goal
    env.reset(seed=0)
    task = env.unwrapped.task
    goals = [task.goal_quat[0].copy()]
    for k in range(1, 4):
        _, _, _, _, info = env.step(np.zeros(16, dtype=np.float32))
        assert info["successes"] == k and info["reward_goal_reached"] == 50.0  # the bonus, weighted
        goals.append(task.goal_quat[0].copy())
        assert not np.array_equal(goals[-1], goals[-2])
    assert np.allclose([np.linalg.norm(g) for g in goals], 1.0)


@pytest.mark.parametrize("kind", ["sdk255", "normalized", "nominal", "delta"])
def test_every_action_mapping_drives_the_hand(kind):
    env = gym.make("G20Rotate-v0", actions=kind)
    env.reset(seed=0)
    env.action_space.seed(0)
    before = env.unwrapped.task.qpos.copy()
    for _ in range(3):
        env.step(env.action_space.sample())
    assert not np.array_equal(before, env.unwrapped.task.qpos)


def test_a_bad_action_raises_and_changes_nothing():
    env = gym.make("G20Rotate-v0", actions={"out_of_range": "raise"})
    env.reset(seed=0)
    task = env.unwrapped.task
    before = (task.command.copy(), task.qpos.copy(), task.object_pos.copy())
    with pytest.raises(ActionError):
        env.step(np.full(16, 2.0, dtype=np.float32))
    with pytest.raises(ActionError):
        env.step(np.zeros(15, dtype=np.float32))
    after = (task.command, task.qpos, task.object_pos)
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"drive": "hard_write"}, r"^drive.kind: 'hard_write': the object tasks drive the hand's PD actuators only"),
        ({"object": {"size": 0.2}}, r"^object.size: 0.2 m is outside \[0.04, 0.08\] m"),
        ({"object": {"mass": 2.0}}, r"^object.mass: 2.0 kg is outside \[0.02, 0.5\] kg"),
        ({"object": {"friction": 0.01}}, r"^object.friction: 0.01 is outside \[0.3, 2\]"),
        (
            {"object": {"shape": "egg"}},
            r"^object.shape: 'egg'; choose one of \['cube', 'cylinder', 'sphere', 'capsule'\]",
        ),
        (
            {"object": {"size": 0.05}},
            r"^grasps: no cache at .*left_capsule_50mmx80mm_across.npz .*sample_grasps.py "
            r"--hand left --shape capsule --size 0.05 --length 0.08 --orientation across$",
        ),
        ({"object": {"shape": "cube"}}, r"^object.orientation: 'across' lays a cylinder, capsule or sphere across the"),
        ({"object": {"shape": "capsule", "length": None}}, r"^object.length: a capsule needs its length"),
        ({"object": {"length": 0.2}}, r"^object.length: 0.2 m is outside \[0.03, 0.1\] m"),
        ({"physics": {"timestep": 0.02}}, r"^physics.timestep: 0.02 s is outside \[0.0005, 0.0125\] s"),
        ({"physics": {"timestep": 0.003}}, r"^physics.timestep: 0.003 s does not divide the control step"),
        ({"physics": {"armature": 0.01}}, r"^physics.armature: 0.01 kg m\^2 is outside \[0.02, 0.5\] \(below kv"),
        ({"physics": {"contact": "soft"}}, r"^physics.contact: 'soft'; choose one of \['pads', 'spec'\]"),
        ({"physics": {"palm_friction": 3.0}}, r"^physics.palm_friction: 3.0 is outside \[0.05, 2\]"),
        (
            {"physics": {"timestep": 0.01, "armature": 0.05}},
            r"^grasps: the cache was made with physics .*'timestep': "
            r"0.005.*this task runs .*'timestep': 0.01.*--timestep "
            r"0.01 --armature 0.05 --contact pads",
        ),
        (
            {"physics": {"palm_friction": 0.5}},
            r"^grasps: the cache was made with physics .*'palm_friction': 0.3}, this task runs .*'palm_friction': 0.5}",
        ),
        (
            {"grasps": str(grasp_cache.GRASP_DIR / "right_cube_60mm.npz")},
            r"^grasps: the cache was made for the right hand",
        ),
        (
            {"grasps": str(grasp_cache.GRASP_DIR / "left_cube_50mm.npz")},
            r"^grasps: the cache was made for a cube of 0.05 m",
        ),
        ({"collision": {"projection": True}}, r"^collision.projection: true: collision projection is the hard-write"),
        ({"drive": {"track_test": True}}, r"^drive.track_test: true"),
        ({"commands": {"axis": (0, 0, 0)}}, r"^commands.axis: expected a non-zero"),
        ({"task": "spin"}, r"^task: 'spin'; choose one of \['rotate', 'rotate_z', 'reorient'\]"),
    ],
)
def test_bad_settings_are_refused_in_one_line_naming_the_key(kwargs, message):
    with pytest.raises(ConfigFieldError, match=message) as e:
        gym.make("G20Rotate-v0", **kwargs)
    assert "\n" not in str(e.value)


def test_an_empty_or_foreign_cache_file_is_refused(tmp_path):
    empty = grasp_cache.GraspCache("left", ObjectSpec(), np.zeros((0, 16)), np.zeros((0, 7)))
    path = grasp_cache.save(empty, tmp_path / "empty.npz")
    with pytest.raises(ConfigFieldError, match=r"^grasps: the cache holds no grasp; make one with"):
        gym.make("G20Rotate-v0", grasps=str(path))
    (tmp_path / "junk.npz").write_bytes(b"not a cache")
    with pytest.raises(ConfigFieldError, match=r"^grasps: .*junk.npz is no grasp cache"):
        gym.make("G20Rotate-v0", grasps=str(tmp_path / "junk.npz"))


def test_reset_options_are_refused():
    env = gym.make("G20Rotate-v0")
    with pytest.raises(ValueError, match=r"unknown options \['goal'\]; valid: \[\]"):
        env.reset(seed=0, options={"goal": "open"})


def test_the_actor_reads_proprioception_only_and_the_critic_everything():
    env = gym.make("G20Rotate-v0").unwrapped
    s = env.obs_slices
    assert s["last_action"].stop == 21 * 3 + 16 and env.policy_obs_dim == s["gait_phase"].stop == 21 * 3 + 16 + 2
    assert s["object_quat"].start >= env.policy_obs_dim and env.observation_space.shape == (s["rotation_axis"].stop,)
    blind = gym.make("G20Rotate-v0", privileged_obs=False).unwrapped
    assert blind.observation_space.shape == (env.policy_obs_dim,)


def test_gait_phase_is_the_sine_and_cosine_of_the_episode_time_at_the_period():
    """t = elapsed * dt = 0, 0.13, 0.26, 0.39 s at the 0.52 s period: angles 0, pi/2, pi, 3 pi/2."""
    task = SimpleNamespace(elapsed=np.array([0, 2, 4, 6]), dt=0.065)
    want = [[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0]]
    np.testing.assert_allclose(gait_phase(task, period=0.52), want, atol=1e-12)


def test_the_rolling_actor_reads_the_gait_clock_from_the_reset_and_the_spin_actor_does_not():
    """G20Rotate-v0's policy columns end with sin, cos of 2 pi k dt / 0.52 after k steps (dt 0.05 s), 0 again after a
    reset; G20RotateZ-v0 (no gait) has no clock."""
    env = gym.make("G20Rotate-v0").unwrapped
    cols = env.obs_slices["gait_phase"]
    hold = np.zeros(env.action_space.shape)
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs[cols], [0.0, 1.0])
    for k in range(1, 14):
        obs, *_ = env.step(hold)
        angle = 2.0 * np.pi * k * 0.05 / 0.52
        np.testing.assert_allclose(obs[cols], [np.sin(angle), np.cos(angle)], atol=1e-6)
    np.testing.assert_allclose(obs[cols], [1.0, 0.0], atol=1e-6)  # 13 steps: 0.65 s, a period and a quarter
    obs, _ = env.reset(seed=1)
    np.testing.assert_array_equal(obs[cols], [0.0, 1.0])
    assert "gait_phase" not in gym.make("G20RotateZ-v0").unwrapped.obs_slices
