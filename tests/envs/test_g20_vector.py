"""Native vector env of G20Hand-v0: N envs in one batched task, bit-identical to N single envs."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from vecutil import assert_same

from dexwheel.control import ActionError
from dexwheel.envs import register_envs
from dexwheel.envs.g20_hand import REWARD_TERMS, G20HandEnv
from dexwheel.envs.g20_vector import G20HandVectorEnv

register_envs()  # explicit: a stale editable install can make ``import dexwheel`` a namespace package


def test_make_vec_gives_the_native_vector_env():
    env = gym.make_vec("G20Hand-v0", num_envs=3, vectorization_mode="vector_entry_point", actions="sdk255")
    assert isinstance(env.unwrapped, G20HandVectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_action_space.shape == (20,) and env.action_space.shape == (3, 20)
    assert env.observation_space.shape == (3, 78) and env.single_observation_space.dtype == np.float32
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, 78) and info["_tracking_error"].all()
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert obs.shape == (3, 78) and reward.shape == (3,) and terminated.dtype == bool
    assert np.array_equal(reward, sum(info[f"reward_{t}"] for t in REWARD_TERMS))
    env.close()


@pytest.mark.parametrize("drive", ["hard_write", "pd"])
def test_vector_env_matches_n_single_envs_bit_for_bit(drive):
    """Same seeds (env i: seed + i), same actions: same observations, rewards, infos, autoresets.

    The reference is gymnasium's own SyncVectorEnv over single envs in SAME_STEP mode, so the info
    layout (``final_obs``, ``final_info``, masks) is checked too.
    """
    n, steps = 4, 24
    kwargs = {"drive": drive, "actions": "normalized", "goal_switch_steps": 5, "max_episode_steps": 9}
    vec = gym.make_vec("G20Hand-v0", num_envs=n, vectorization_mode="vector_entry_point", num_threads=2, **kwargs)
    ref = gym.make_vec(
        "G20Hand-v0",
        num_envs=n,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
        **kwargs,
    )
    assert_same(vec.reset(seed=7), ref.reset(seed=7))
    rng = np.random.default_rng(0)
    done_seen = False
    for _ in range(steps):
        actions = rng.uniform(-1, 1, (n, 16)).astype(np.float32)
        out_vec, out_ref = vec.step(actions), ref.step(actions)
        for a, b in zip(out_vec, out_ref, strict=True):
            assert_same(a, b)
        done_seen |= bool(out_vec[3].any())
    assert done_seen
    vec.close()
    ref.close()


def test_vector_env_matches_single_envs_created_with_seed_plus_i():
    n = 3
    vec = G20HandVectorEnv(num_envs=n, drive="pd", actions="delta")
    singles = [G20HandEnv(drive="pd", actions="delta") for _ in range(n)]
    obs, _ = vec.reset(seed=100)
    for i, e in enumerate(singles):
        assert np.array_equal(obs[i], e.reset(seed=100 + i)[0])
    rng = np.random.default_rng(1)
    for _ in range(10):
        actions = rng.uniform(-1, 1, (n, 16))
        obs, reward, *_ = vec.step(actions)
        for i, e in enumerate(singles):
            o, r, *_ = e.step(actions[i])
            assert np.array_equal(obs[i], o) and reward[i] == r


def test_pd_vector_env_reports_the_same_penetration_as_single_envs_in_contact():
    """The batch reads the contact sensor after every physics step, as the single env's loop does."""
    n = 2
    vec = G20HandVectorEnv(num_envs=n, drive="pd", actions="nominal", reset_noise_scale=0.0)
    singles = [G20HandEnv(drive="pd", actions="nominal", reset_noise_scale=0.0) for _ in range(n)]
    fist = vec.task.presets["full_fist"]
    _, info = vec.reset(seed=0, options={"init_qpos": fist})  # the thumb starts 1.08 mm in the palm
    for i, e in enumerate(singles):
        assert e.reset(seed=i, options={"init_qpos": fist})[1]["max_penetration"] == info["max_penetration"][i]
    depths = []
    for _ in range(4):
        _, _, _, _, info = vec.step(np.stack([fist] * n))
        for i, e in enumerate(singles):
            assert e.step(fist)[4]["max_penetration"] == info["max_penetration"][i]
        depths.append(info["max_penetration"][0])
    assert depths[0] > 5e-4


def test_a_bad_action_in_one_env_raises_and_changes_no_env():
    vec = G20HandVectorEnv(num_envs=3, actions="sdk255")
    vec.reset(seed=0)
    vec.step(np.full((3, 20), 128.0))
    task = vec.task
    before = (task.qpos.copy(), task.command.copy(), task.goal.copy(), task.elapsed.copy(), task.raw_action.copy())
    bad = np.full((3, 20), 128.0)
    bad[2, 16] = 256.0
    with pytest.raises(ActionError, match=r"env 2: .*SDK channel 16 \(index_pip\)"):
        vec.step(bad)
    with pytest.raises(ActionError, match=r"shape \(3, 20\)"):
        vec.step(np.zeros((2, 20)))
    after = (task.qpos, task.command, task.goal, task.elapsed, task.raw_action)
    for x, y in zip(before, after, strict=True):
        assert np.array_equal(x, y)


def test_reset_mask_resets_only_the_masked_envs():
    vec = G20HandVectorEnv(num_envs=3)
    vec.reset(seed=0)
    for _ in range(3):
        vec.step(np.full((3, 16), 0.5, dtype=np.float32))
    qpos = vec.task.qpos.copy()
    _, info = vec.reset(options={"reset_mask": np.array([False, True, False])})
    assert np.array_equal(vec.task.elapsed, [3, 0, 3])
    assert np.array_equal(vec.task.qpos[[0, 2]], qpos[[0, 2]])
    assert np.array_equal(info["_tracking_error"], [False, True, False])


def test_vector_rgb_array_render_gives_one_frame_per_env():
    vec = G20HandVectorEnv(num_envs=2, render_mode="rgb_array", width=64, height=48)
    vec.reset(seed=0)
    try:
        frames = vec.render()
    except Exception as exc:  # no OpenGL backend on this machine
        pytest.skip(f"offscreen rendering unavailable (MUJOCO_GL): {exc}")
    assert len(frames) == 2 and frames[0].shape == (48, 64, 3)
    vec.close()


def test_nominal_vector_env_takes_one_joint_dict_per_env():
    vec = G20HandVectorEnv(num_envs=2, actions="nominal", drive={"track_test": True})
    vec.reset(seed=0)
    before = vec.task.command.copy()
    vec.step([{"index_pip": 1.0}, {"thumb_mcp": 0.5}])
    after = vec.task.command
    pip, mcp = (vec.task.coupling.active_layout.index(j) for j in ("index_pip", "thumb_mcp"))
    limits = (vec.task.coupling.active_lower, vec.task.coupling.active_upper)
    assert after[0, pip] == 1.0 and after[1, mcp] == 0.5
    composed = np.float32(np.delete(before[0], pip)).astype(np.float64)  # through the composer's float32 frame
    assert np.array_equal(np.delete(after[0], pip), np.clip(composed, *(np.delete(x, pip) for x in limits)))
    with pytest.raises(ActionError, match="unknown joint names"):
        vec.step([{"index_pip": 1.0}, {"thumb": 0.5}])
