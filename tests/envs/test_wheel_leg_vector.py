"""The native wheel-leg vector env: batched spaces, SAME_STEP autoreset, bit-identical to N single envs."""

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from vecutil import assert_same

from dexwheel.control import ActionError
from dexwheel.envs import register_envs
from dexwheel.envs.wheel_leg import WheelLegEnv
from dexwheel.envs.wheel_leg_vector import WheelLegVectorEnv
from dexwheel.robots.wheel_leg import KNEE_EFFORT, ROBOT_JOINT_ORDER, WHEEL_EFFORT

register_envs()


def test_make_vec_gives_the_native_vector_env_with_batched_spaces():
    venv = gymnasium.make_vec("Solenopsis-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(venv.unwrapped, WheelLegVectorEnv)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.single_observation_space.shape == (28,) and venv.observation_space.shape == (4, 28)
    assert venv.single_action_space.shape == (8,) and venv.action_space.shape == (4, 8)
    obs, _ = venv.reset(seed=0)
    obs, reward, terminated, truncated, infos = venv.step(np.zeros((4, 8), np.float32))
    assert obs.shape == (4, 28) and obs.dtype == np.float32
    assert reward.shape == terminated.shape == truncated.shape == (4,)
    assert infos["reward_track_lin_vel_x_exp"].shape == (4,) and infos["_reward_track_lin_vel_x_exp"].all()
    venv.close()


@pytest.mark.parametrize(("robot", "num_envs", "extra"), [
    ("solenopsis", 4, {"domain_randomization": True}),
    ("m20_legacy", 3, {"layers": ("policy", "stance"), "privileged_obs": True}),
    ("solenopsis", 1, {}),
])  # fmt: skip
def test_matches_n_single_envs_bit_for_bit(robot, num_envs, extra):
    """Same seeds (s + i) and actions as gymnasium's SyncVectorEnv of single envs in SAME_STEP mode:
    the same observations, rewards, infos, and autoreset layout (``final_obs``, ``final_info``, reset infos,
    masks); terminations (tight tilt limit) and truncations included."""
    env_id = {"solenopsis": "Solenopsis-v0", "m20_legacy": "M20Legacy-v0"}[robot]
    kw = dict(max_tilt=0.3, episode_length_s=0.8, **extra)
    venv = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kw)
    ref = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync",
                             vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, **kw)  # fmt: skip
    assert_same(venv.reset(seed=10), ref.reset(seed=10))
    rng = np.random.default_rng(1)
    dim = venv.single_action_space.shape[0]
    dones = 0
    for _ in range(150):
        actions = rng.uniform(-1, 1, (num_envs, dim)).astype(np.float32)
        out, expected = venv.step(actions), ref.step(actions)
        assert_same(out, expected)
        dones += int((out[2] | out[3]).sum())
    assert dones >= num_envs  # the comparison covered resets
    venv.close()
    ref.close()


def test_reset_seeds_envs_with_consecutive_seeds_and_honours_a_reset_mask():
    venv = WheelLegVectorEnv(3)
    obs, _ = venv.reset(seed=5)
    single = WheelLegEnv()
    for i in range(3):
        assert np.array_equal(obs[i], single.reset(seed=5 + i)[0])
    obs2, _ = venv.reset(seed=[7, 8, 9])
    assert np.array_equal(obs2[1], single.reset(seed=8)[0])
    for _ in range(5):
        venv.step(np.zeros((3, 8), np.float32))
    before = venv.task.obs.copy()
    obs3, _ = venv.reset(options={"reset_mask": np.array([False, True, False])})
    assert np.array_equal(obs3[0], before[0]) and not np.array_equal(obs3[1], before[1])
    with pytest.raises(ValueError, match="seeds"):
        venv.reset(seed=[1, 2])


def test_batch_physics_efforts_stay_within_limits():
    venv = WheelLegVectorEnv(4, knee_kp=2000.0, wheel_kd=20.0)
    venv.reset(seed=0)
    limit = np.array([KNEE_EFFORT if "knee" in j else WHEEL_EFFORT for j in ROBOT_JOINT_ORDER])
    frc = venv.task.sensors.actuator_force
    peak = np.zeros(len(limit))
    action = np.ones((4, 8), np.float32)
    for k in range(60):
        action = -action if k % 5 == 0 else action
        venv.step(action)
        np.maximum(peak, np.abs(venv.task.physics.sensordata[:, frc]).max(axis=0), out=peak)
    assert np.all(peak <= limit + 1e-9) and np.allclose(peak, limit)


def test_override_and_commands_apply_to_every_env():
    venv = WheelLegVectorEnv(2, layers=("policy", "override"))
    venv.reset(seed=0)
    venv.set_command(0.5, 0.0)
    for _ in range(30):
        obs, *_ = venv.step(np.ones((2, 8), np.float32))
    sl = venv.obs_slices["velocity_commands"]
    assert np.allclose(obs[:, sl], (0.5, 0.0))
    assert np.abs(venv.task.physics.qvel[:, 6:][:, 1::2]).max() < 0.5  # wheels held by the override
    with pytest.raises(ValueError, match="render_mode"):
        WheelLegVectorEnv(2, render_mode="human")


@pytest.mark.parametrize("n", [1, 2])
def test_rgb_array_render_gives_one_frame_per_env(n):
    venv = WheelLegVectorEnv(n, render_mode="rgb_array", width=96, height=64)
    venv.reset(seed=0)
    for _ in range(3):
        venv.step(np.full((n, 8), 0.5, np.float32))
    try:
        frames = venv.render()
    except Exception as exc:  # no offscreen GL on this machine
        pytest.skip(f"offscreen rendering unavailable: {exc}")
    assert len(frames) == n and all(f.shape == (64, 96, 3) and f.dtype == np.uint8 and f.std() > 0 for f in frames)
    venv.close()


def test_bad_actions_name_the_env_and_the_joint():
    venv = WheelLegVectorEnv(3)
    venv.reset(seed=0)
    bad = np.zeros((3, 8), np.float32)
    bad[2, 6] = np.nan
    with pytest.raises(ActionError, match=r"env 2: action\[6\] \(hl_wheel_joint\) = nan"):
        venv.step(bad)
    with pytest.raises(ActionError, match=r"shape \(3, 8\).*got \(8,\)"):
        venv.step(np.zeros(8, np.float32))
    venv.close()


def test_max_episode_steps_truncates_as_the_g20_vector_env_does():
    """``make_vec(..., max_episode_steps=k)``, as for G20Hand-v0: each env truncates after k steps (then resets)."""
    import copy

    venv = gymnasium.make_vec("Solenopsis-v0", num_envs=4, max_episode_steps=5)
    assert isinstance(venv, WheelLegVectorEnv) and venv.max_episode_steps == 5
    venv.reset(seed=0)
    zero = np.zeros((4, 8), np.float32)
    for _ in range(4):
        assert not venv.step(zero)[3].any()
    twin = copy.deepcopy(venv)  # continues the same episodes
    _, _, terminated, truncated, infos = venv.step(zero)
    assert truncated.all() and not terminated.any() and infos["_final_obs"].all()
    assert twin.step(zero)[3].all()
    assert not venv.step(zero)[3].any()  # a new episode
    venv.close()
    twin.close()
    with pytest.raises(ValueError, match="max_episode_steps must be None or an integer >= 1, got 0"):
        gymnasium.make_vec("Solenopsis-v0", num_envs=2, max_episode_steps=0)


def _distinct(models) -> int:
    return len({id(m) for m in models})


@pytest.mark.parametrize("extra", [{}, {"layers": ("policy", "stance", "override")}])
def test_envs_share_one_model_without_domain_randomisation(extra):
    """Memory per env: without an event that writes models, every env (physics, drive, batch) runs on one MjModel
    without the render-only textures; with domain randomisation each env has its own copy (also textureless)."""
    venv = WheelLegVectorEnv(4, **extra)
    venv.reset(seed=0)
    venv.step(np.zeros(venv.action_space.shape, np.float32))
    task = venv.task
    assert task.models_shared and _distinct(task.models) == 1 and task.drive.shared
    assert task.physics.models == task.models and task.physics._batch.models is task.models[0]  # one model, not a list
    assert task.models[0].ntexdata < 100 < 5_000_000 < task.render_model.ntexdata  # 1 x 1 texels; the skybox
    assert task.render_model is WheelLegVectorEnv(2).task.render_model  # built once per process
    venv.close()

    dr = WheelLegVectorEnv(4, domain_rand=True)
    assert not dr.task.models_shared and _distinct(dr.task.models) == 4 and not dr.task.drive.shared
    assert dr.task.physics._batch.models == tuple(dr.task.models)
    assert all(m.ntexdata < 100 for m in dr.task.models)
    dr.close()
    single = WheelLegEnv()
    assert single.model.ntexdata > 5_000_000 and single.task.render_model is single.model  # one env: as built
    single.close()


def test_the_physics_model_is_the_render_model_but_for_its_textures():
    """Textures take no part in the physics: the textureless model compiles every other field to the same bits."""
    from dexwheel.robots import get_robot
    from dexwheel.tasks.velocity.scene import build_scene

    for robot in ("solenopsis", "m20_legacy"):
        full, _ = build_scene(get_robot(robot))
        lite, _ = build_scene(get_robot(robot), textures=False)
        differ = []
        for name in dir(full):
            a = getattr(full, name)
            if not name.startswith("_") and isinstance(a, np.ndarray):
                b = getattr(lite, name)
                if a.shape != b.shape or a.tobytes() != b.tobytes():
                    differ.append(name)
        assert differ == ["tex_adr", "tex_data", "tex_height", "tex_width"], robot
        assert (full.ntex, full.nmat) == (lite.ntex, lite.nmat) and lite.nbuffer < full.nbuffer / 100
        for struct in ("opt", "stat", "vis"):
            assert str(getattr(full, struct)) == str(getattr(lite, struct))


def test_envs_whose_gains_come_to_differ_get_their_own_models():
    """A per-env edit of a layer's gains splits the shared model: each env then runs on its own copy, and each
    still matches a single env with the same seed and the same edit, bit for bit (copies included)."""
    import copy

    venv = WheelLegVectorEnv(2)
    singles = [WheelLegEnv() for _ in range(2)]
    venv.reset(seed=5)
    for i, s in enumerate(singles):
        s.reset(seed=5 + i)
    rng = np.random.default_rng(2)

    def step(envs_actions):
        out = venv.step(envs_actions)
        for i, s in enumerate(singles):
            o, r, *_ = s.step(envs_actions[i])
            assert np.array_equal(out[0][i], o) and out[1][i] == r
        return out

    step(rng.uniform(-1, 1, (2, 8)).astype(np.float32))
    assert venv.task.models_shared
    for task, env in ((venv.task, 1), (singles[1].task, 0)):  # env 1's knees: stiffer
        kp = task.buffers["policy"].block[1].reshape(task.num_envs, -1)
        kp[env, : task._nk] *= 1.5
    step(rng.uniform(-1, 1, (2, 8)).astype(np.float32))
    task = venv.task
    assert not task.models_shared and _distinct(task.models) == 2 and not task.drive.shared
    assert task.drive.models == task.models == task.physics.models and task.physics._batch.models == tuple(task.models)
    assert task.models[0].actuator_biasprm[0, 1] != task.models[1].actuator_biasprm[0, 1]
    twin = copy.deepcopy(venv)
    assert not twin.task.models_shared and twin.task.models[1].actuator_biasprm.tobytes() == (
        task.models[1].actuator_biasprm.tobytes()
    )
    for _ in range(20):
        a = rng.uniform(-1, 1, (2, 8)).astype(np.float32)
        assert_same(twin.step(a), step(a))
    venv.close()
    twin.close()


@pytest.mark.slow
def test_vector_frames_are_drawn_with_the_textured_scene():
    """The physics models leave the textures out; the frames are those of the scene as built, pixel for pixel."""
    import mujoco

    from dexwheel.robots import get_robot
    from dexwheel.tasks.velocity.scene import build_scene

    venv = WheelLegVectorEnv(2, render_mode="rgb_array", width=96, height=64)
    venv.reset(seed=0)
    venv.step(np.full((2, 8), 0.5, np.float32))
    try:
        frames = venv.render()
    except Exception as exc:  # no offscreen GL on this machine
        pytest.skip(f"offscreen rendering unavailable: {exc}")
    full, _ = build_scene(get_robot("solenopsis"))
    with mujoco.Renderer(full, 64, 96) as built, mujoco.Renderer(venv.task.models[1], 64, 96) as bare:
        for i in range(2):
            d = venv.task.physics.sync_data(i)
            built.update_scene(d, camera="track")
            assert np.array_equal(frames[i], built.render())
            bare.update_scene(d, camera="track")
            assert not np.array_equal(frames[i], bare.render())  # the textures show (the check can fail)
    venv.close()
