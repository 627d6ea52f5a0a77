"""Inputs, one rule everywhere: what a user sees for a bad goal, action, option, config value or a
closed env (the error's type and message), and what a rendered frame shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from hydra import compose, initialize_config_dir

from dexwheel.control import ActionClipWarning, ActionError, G20SdkMapping, g20_nominal_mapping
from dexwheel.envs import register_envs
from dexwheel.envs.base import camera_kwargs
from dexwheel.envs.g20_hand import G20HandEnv
from dexwheel.envs.g20_vector import G20HandVectorEnv
from dexwheel.envs.wheel_leg import WheelLegEnv
from dexwheel.fields import ConfigFieldError
from dexwheel.rl.env_factory import make_env, make_vector_env
from dexwheel.rl.sb3.vec_env import GymVectorEnvAdapter
from dexwheel.rl.schema import ConfigError
from dexwheel.robots.g20 import ACTIVE_JOINTS, G20_OPEN_CMD
from dexwheel.tasks.spaces import IntegerBox

register_envs()

ROOT = Path(__file__).resolve().parents[2]
VEC = {"vectorization_mode": "vector_entry_point"}


def cfg(*overrides: str):
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        return compose(config_name="train", overrides=list(overrides))


# -- 5a: goals and start poses are checked, not clipped -----------------------------------------
@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"goal": {"index_pip": 5.0}}, r"goal\['index_pip'\] = 5.0 is outside the allowed range \[0, 1.74\]"),
        (
            {"goal": [0.3] + [0.0] * 15},
            r"goal\[0\] \(pinky_mcp_roll\) = 0.3 is outside the allowed range \[-0.23, 0.23\]",
        ),
        ({"goal": {"thumb_mcp": float("nan")}}, r"goal\['thumb_mcp'\] = nan is not finite; allowed range \[0, 1.26\]"),
        ({"init_qpos": [0.0] * 15 + [np.inf]}, r"init_qpos\[15\] \(thumb_mcp\) = inf is not finite"),
        ({"init_qpos": {"ring_pip": -0.1}}, r"init_qpos\['ring_pip'\] = -0.1 is outside the allowed range \[0, 1.74\]"),
        ({"goal": [0.0] * 3}, r"goal must have shape \(16,\)"),
        ({"goal": "fist"}, r"goal='fist' is not allowed; choose one of \['open', 'half_fist', 'full_fist'\]"),
    ],
)
def test_a_bad_goal_or_start_pose_raises_naming_joint_value_and_range_and_changes_nothing(options, match):
    env = G20HandEnv()
    env.reset(seed=0, options={"goal": "half_fist"})
    before = (env.goal, env.task.qpos.copy(), repr(env.np_random.bit_generator.state))
    with pytest.raises(ValueError, match=match):
        env.reset(seed=5, options=options)
    assert np.array_equal(before[0], env.goal) and np.array_equal(before[1], env.task.qpos)
    assert before[2] == repr(env.np_random.bit_generator.state)  # not even re-seeded
    env.step(np.zeros(16))  # still usable


def test_set_goal_and_the_vector_env_apply_the_same_rule():
    env = G20HandEnv(actions={"out_of_range": "clip"})  # clipping is for action streams: a given goal still raises
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"goal\['index_pip'\] = 5.0 is outside the allowed range \[0, 1.74\]"):
        env.set_goal({"index_pip": 5.0})
    env.set_goal({"index_pip": 1.74})  # the limit itself is in range
    assert env.goal[ACTIVE_JOINTS.index("index_pip")] == 1.74
    vec = G20HandVectorEnv(num_envs=2)
    with pytest.raises(ActionError, match=r"G20Hand: init_qpos\['index_pip'\] = 5.0"):
        vec.reset(seed=0, options={"init_qpos": {"index_pip": 5.0}})
    vec.reset(seed=0, options={"goal": "open"})
    vec.close()


# -- 5b: a mimic joint is not a command ---------------------------------------------------------
def test_naming_a_mimic_joint_says_whom_it_follows():
    with pytest.raises(
        ActionError, match=r"thumb_ip is a mimic joint: it follows thumb_mcp \(x 1.02\); command thumb_mcp"
    ):
        g20_nominal_mapping()({"thumb_ip": 0.5})
    env = G20HandEnv(actions="nominal")
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"ring_dip is a mimic joint: it follows ring_pip \(x 0.89\)"):
        env.step({"ring_pip": 1.0, "ring_dip": 0.89})
    with pytest.raises(ActionError, match=r"thumb_ip is a mimic joint"):
        env.reset(options={"goal": {"thumb_ip": 0.5}})
    vec = G20HandVectorEnv(num_envs=2, actions="nominal")
    vec.reset(seed=0)
    with pytest.raises(ActionError, match=r"pinky_dip is a mimic joint"):
        vec.step([{"pinky_pip": 0.5}, {"pinky_dip": 0.5}])
    vec.close()


# -- 5c: the SDK protocol takes integers 0..255 -------------------------------------------------
def test_fractional_sdk_values_are_refused_by_the_mapping_or_rounded_with_clip():
    with pytest.raises(
        ActionError, match=r"SDK channel 3 \(ring_mcp_pitch\) = 3.7 is not an integer; allowed: integers 0..255"
    ):
        G20SdkMapping()([255, 255, 255, 3.7])
    m = G20SdkMapping(out_of_range="clip")
    with pytest.warns(ActionClipWarning, match="clipped 1 out-of-range/non-finite/fractional"):
        rounded = m([255, 255, 255, 3.7]).copy()
    np.testing.assert_array_equal(rounded, G20SdkMapping()([255, 255, 255, 4]))
    assert m.clip_count == 1


@pytest.mark.parametrize("drive", ["hard_write", "pd"])
def test_a_fractional_sdk255_action_raises_naming_channel_and_joint_and_changes_nothing(drive):
    env = G20HandEnv(actions="sdk255", drive=drive)
    env.reset(seed=0)
    env.step(np.array(G20_OPEN_CMD, dtype=np.float64))
    before = (env.task.qpos.copy(), env.command, env.task.raw_action.copy())
    bad = np.array(G20_OPEN_CMD, dtype=np.float32)
    bad[16] = 100.5
    with pytest.raises(
        ActionError, match=r"SDK channel 16 \(index_pip\) = 100.5 is not an integer; allowed: integers 0..255"
    ):
        env.step(bad)
    after = (env.task.qpos, env.command, env.task.raw_action)
    assert all(np.array_equal(x, y) for x, y in zip(before, after, strict=True))


@pytest.mark.parametrize("drive", ["hard_write", "pd"])
@pytest.mark.slow
def test_the_vector_env_names_the_env_with_a_fractional_sdk255_value(drive):
    vec = G20HandVectorEnv(num_envs=3, actions="sdk255", drive=drive)  # hard-write: the threaded kernel
    vec.reset(seed=0)
    actions = np.full((3, 20), 128.0)
    actions[1, 5] = 128.25
    with pytest.raises(ActionError, match=r"env 1: .*SDK channel 5 \(thumb_cmc_roll\) = 128.25 is not an integer"):
        vec.step(actions)
    vec.step(np.rint(actions))
    vec.close()


@pytest.mark.parametrize("drive", ["hard_write", "pd"])
def test_clip_mode_rounds_fractional_sdk255_actions_and_counts_them(drive):
    rounded, fractional = (
        G20HandEnv(actions={"kind": "sdk255", "out_of_range": "clip"}, drive=drive) for _ in range(2)
    )
    for env in (rounded, fractional):
        env.reset(seed=0)
    cmd = np.array(G20_OPEN_CMD, dtype=np.float64)
    cmd[0], cmd[16] = 100.0, 80.0
    rounded.step(cmd)
    cmd[0], cmd[16] = 99.6, 80.4
    with pytest.warns(ActionClipWarning, match="clipped 2 out-of-range/fractional"):
        _, _, _, _, info = fractional.step(cmd)
    assert info["action_clipped"] == 2
    np.testing.assert_array_equal(fractional.task.qpos, rounded.task.qpos)


def test_the_sdk255_action_space_samples_valid_integer_commands():
    env = G20HandEnv(actions="sdk255")
    space = env.action_space
    assert isinstance(space, IntegerBox) and space.dtype == np.float32
    assert space == gym.spaces.Box(0.0, 255.0, (20,), np.float32)  # what a learner (SB3) sees
    space.seed(0)
    samples = np.array([space.sample() for _ in range(200)])
    assert np.array_equal(samples, np.rint(samples)) and samples.min() == 0 and samples.max() == 255
    assert space.contains(np.full(20, 3.0, np.float32)) and not space.contains(np.full(20, 3.5, np.float32))
    env.reset(seed=0)
    env.step(space.sample())
    vec = gym.make_vec("G20Hand-v0", num_envs=2, actions="sdk255", **VEC)
    assert isinstance(vec.action_space, IntegerBox) and vec.action_space.shape == (2, 20)
    vec.reset(seed=0)
    vec.step(vec.action_space.sample())
    vec.close()


def test_learners_float_actions_are_rounded_on_the_way_to_an_integer_space():
    c = cfg("robot=g20_left", "action=sdk255")
    env = make_env(c)
    env.reset(seed=0)
    env.step(np.full(20, 127.4, dtype=np.float32))  # SB3's Gaussian policy acts in floats
    assert np.array_equal(env.unwrapped.task.raw_action[0], np.full(20, 127.0))
    env.close()
    venv = GymVectorEnvAdapter(make_vector_env(c, 2))
    venv.reset()
    venv.step(np.full((2, 20), 200.6, dtype=np.float32))
    assert np.array_equal(venv.env.task.raw_action, np.full((2, 20), 201.0))
    venv.close()


# -- 5d, 5e: step before reset, reset options -------------------------------------------------
@pytest.mark.parametrize("env_id", ["Solenopsis-v0", "M20Legacy-v0"])
def test_wheel_leg_envs_need_a_reset_before_step(env_id):
    robot = "solenopsis" if env_id.startswith("Solenopsis") else "m20_legacy"
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) before step\(\)"):
        WheelLegEnv(robot=robot).step(np.zeros(8))
    vec = gym.make_vec(env_id, num_envs=2, **VEC)
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) before step\(\)"):
        vec.step(np.zeros((2, 8)))
    vec.close()


@pytest.mark.parametrize(
    ("make", "options", "match"),
    [
        (lambda: WheelLegEnv(), {"goal": 1}, r"Solenopsis.reset: unknown options \['goal'\]; valid: \['base_pose', 'command'\]"),
        (lambda: WheelLegEnv(), ["reset_mask"], r"Solenopsis.reset: options must be a dict or None, got list"),
        (lambda: gym.make_vec("Solenopsis-v0", num_envs=2, **VEC), {"mask": [True, False]},
         r"unknown options \['mask'\]; valid: \['reset_mask', 'base_pose', 'command'\]"),  # the task's, every face
        (lambda: G20HandEnv(), "open", r"G20Hand.reset: options must be a dict or None, got str"),
        (lambda: G20HandVectorEnv(num_envs=2), {"gaol": "open"},
         r"unknown options \['gaol'\]; valid: \['reset_mask', 'goal', 'init_qpos'\]"),
        (lambda: G20HandVectorEnv(num_envs=2), [("goal", "open")], "options must be a dict or None, got list"),
    ],
)  # fmt: skip
def test_reset_refuses_unknown_and_non_dict_options(make, options, match):
    env = make()
    with pytest.raises(ValueError, match=match):
        env.reset(seed=0, options=options)
    env.reset(seed=0, options=None)
    env.close()


@pytest.mark.parametrize(
    ("options", "match"),
    [({"base_pose": (float("nan"), 0.0, 0.0)}, r"options\['base_pose'\] must be 3 finite numbers"),
     ({"command": (0.5,)}, r"options\['command'\] must be 2 finite numbers")],
)  # fmt: skip
def test_a_refused_wheel_leg_reset_option_changes_nothing(options, match):
    env, ref = WheelLegEnv(), WheelLegEnv()
    _refused_reset_changes_nothing(env, ref, options, match)


def test_a_rough_base_pose_off_the_terrain_is_refused_naming_the_ranges():
    """Past the terrain's edge there is no ground: the pose is refused, and the episode goes on untouched."""
    env, ref = (gym.make("Solenopsis-Rough-v0").unwrapped for _ in range(2))
    xmin, xmax, ymin, ymax = env.task.terrain.desc.bounds
    ranges = rf"x in \[{xmin + 0.5:g}, {xmax - 0.5:g}\] and y in \[{ymin + 0.5:g}, {ymax - 0.5:g}\] \(m\)"
    match = rf"Solenopsis.reset: options\['base_pose'\]: \({xmax:g}, 0\) puts the robot off the terrain; {ranges}"
    _refused_reset_changes_nothing(env, ref, {"base_pose": (xmax, 0.0, 0.0)}, match)
    env.reset(seed=1, options={"base_pose": (xmax - 0.5, 0.0, 0.0)})  # the footprint's edge on the terrain's
    assert env.data.qpos[0] == xmax - 0.5


def _refused_reset_changes_nothing(env, ref, options, match):
    env.reset(seed=0)
    ref.reset(seed=0)
    a = np.full(8, 0.3)
    env.step(a)
    ref.step(a)
    with pytest.raises(ValueError, match=match):
        env.reset(seed=4, options=options)
    # the episode goes on as if the call had not been made: same state, same generator
    np.testing.assert_array_equal(env.step(a)[0], ref.step(a)[0])
    np.testing.assert_array_equal(env.data.qpos, ref.data.qpos)
    assert env.np_random.random() == ref.np_random.random()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"options": {"reset_mask": [True, False]}}, r"reset_mask'\] must be 3 booleans .*shape \(2,\)"),
        ({"options": {"reset_mask": [1, 0, 1]}}, r"reset_mask'\] must be 3 booleans .*got dtype int64"),
        ({"options": {"reset_mask": "yes"}}, r"reset_mask'\] must be 3 booleans"),
        ({"seed": [1, 2, -5]}, r"seed of env 2: -5; give a non-negative int or None"),
        ({"seed": [1, 2]}, r"seed: 2 seeds for 3 envs"),
        ({"seed": -1}, r"seed of env 0: -1"),
        ({"seed": "0"}, r"seed: '0'; give a non-negative int"),
    ],
)
@pytest.mark.parametrize("env_id", ["Solenopsis-v0", "G20Hand-v0"])
def test_a_refused_vector_reset_changes_no_env(env_id, kwargs, match):
    vec, ref = (gym.make_vec(env_id, num_envs=3, **VEC) for _ in range(2))
    obs, _ = vec.reset(seed=0)
    ref.reset(seed=0)
    a = np.zeros((3, *vec.single_action_space.shape))
    vec.step(a)
    ref.step(a)
    with pytest.raises((ValueError, TypeError), match=match):
        vec.reset(**kwargs)
    np.testing.assert_array_equal(vec.step(a)[0], ref.step(a)[0])
    vec.close()
    ref.close()


@pytest.mark.parametrize("action", [np.full(16, 0.5) + 1j, [None] * 16, np.array(["a"] * 16)])
@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
def test_g20_refuses_actions_that_are_not_real_numbers(action, vector):
    """A complex action would lose its imaginary part and an object one turn ``None`` into NaN: refused."""
    env = gym.make_vec("G20Hand-v0", num_envs=2, **VEC) if vector else G20HandEnv()
    env.reset(seed=0)
    batch = np.stack([np.asarray(action)] * 2) if vector else action
    with pytest.raises(ActionError, match=r"must be numeric with shape .*got dtype"):
        env.step(batch)
    env.close()


@pytest.mark.parametrize("value", ["1.0", None, 1 + 0j, [1.0]])
def test_a_g20_joint_value_that_is_no_number_is_refused_naming_the_joint_and_changes_nothing(value):
    """The ``{joint: radians}`` path agrees with the array path: a string is no radians."""
    env = G20HandEnv(actions="nominal")
    env.reset(seed=0)
    before = (env.command.copy(), env.goal.copy(), env.task.qpos.copy())
    for call, field in [(env.step, "target"), (env.set_goal, "goal")]:
        with pytest.raises(
            ActionError, match=rf"{field}\['index_pip'\] = .* is not a number; allowed range \[0, 1.74\]"
        ):
            call({"middle_pip": 0.5, "index_pip": value})
    with pytest.raises(ActionError, match=r"init_qpos\['index_pip'\] = .* is not a number"):
        env.reset(options={"init_qpos": {"index_pip": value}})
    for now, then in zip((env.command, env.goal, env.task.qpos), before, strict=True):
        np.testing.assert_array_equal(now, then)
    env.close()


# -- 5f: any real dtype for wheel-leg actions ---------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.int64, np.int8, ">f8"])
def test_wheel_leg_envs_take_any_real_action_dtype(dtype):
    a = np.array([0.5, -0.5, 0.25, 0, 1, -1, 0.5, 0], dtype=np.float64)
    values = a if np.dtype(dtype).kind == "f" else np.rint(a)
    ref, env = WheelLegEnv(), WheelLegEnv()
    ref.reset(seed=0)
    env.reset(seed=0)
    np.testing.assert_array_equal(env.step(values.astype(dtype))[0], ref.step(values.astype(np.float32))[0])
    vec = gym.make_vec("M20Legacy-v0", num_envs=2, **VEC)
    vec.reset(seed=0)
    vec.step(np.tile(values, (2, 1)).astype(dtype))
    vec.close()
    with pytest.raises(ActionError, match="numeric"):
        env.step(np.array(["a"] * 8))


# -- 5g: a closed env says so ------------------------------------------------------------------
ALL_IDS = [("G20Hand-v0", {}), ("G20Hand-v0", {"drive": "pd"}), ("Solenopsis-v0", {}), ("M20Legacy-v0", {})]


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
@pytest.mark.parametrize(("env_id", "kwargs"), ALL_IDS, ids=["g20", "g20_pd", "solenopsis", "m20"])
def test_a_closed_env_refuses_step_and_reset(env_id, kwargs, vector):
    env = gym.make_vec(env_id, num_envs=2, **VEC, **kwargs) if vector else gym.make(env_id, **kwargs)
    env.reset(seed=0)
    action = env.action_space.sample()
    env.step(action)
    env.close()
    env.close()  # idempotent
    with pytest.raises(gym.error.ClosedEnvironmentError, match="the env is closed"):
        env.step(action)
    with pytest.raises(gym.error.ClosedEnvironmentError, match="the env is closed"):
        env.reset(seed=0)


# -- 5h: domain-randomisation ranges --------------------------------------------------------------
@pytest.mark.parametrize(
    ("domain_rand", "field", "match"),
    [
        ({"friction": (-0.1, 1.0)}, "friction", r"above 0 \(low > 0\), got \(-0.1, 1.0\)"),
        ({"friction": (1.5, 0.35)}, "friction", r"low <= high, got \(1.5, 0.35\)"),
        ({"friction": (0.5, float("inf"))}, "friction", "finite"),
        ({"link_mass_scale": (0.0, 1.2)}, "link_mass_scale", "low > 0"),
        ({"kp_scale": (-1.0, 1.0)}, "kp_scale", "low > 0"),
        ({"kd_scale": (1.2, 0.8)}, "kd_scale", "low <= high"),
        ({"push_interval_s": (0.0, 5.0)}, "push_interval_s", "low > 0"),
        ({"push_velocity": -0.5}, "push_velocity", ">= 0, got -0.5"),
        ({"base_com_offset": -0.01}, "base_com_offset", ">= 0"),
        ({"base_mass_add": (-20.0, 3.0)}, "base_mass_add", r"base \(base_link, 17.401 kg\).*low end must be > -17.401"),
        ({"friction": "high"}, "friction", r"expected a \(low, high\) pair of numbers or None, got 'high'"),
    ],
)
def test_bad_domain_randomisation_ranges_fail_at_construction_naming_the_key(domain_rand, field, match):
    with pytest.raises(ConfigFieldError, match=rf"^domain_rand\.{field}: .*{match}") as info:
        WheelLegEnv(domain_rand=domain_rand)
    assert info.value.field == f"domain_rand.{field}"


@pytest.mark.parametrize(
    ("kwargs", "field", "match"),
    [
        ({"knee_kp": float("inf")}, "knee_kp", "must be a finite number >= 0, got inf"),
        ({"reset_noise_scale": float("inf")}, "reset_noise_scale", "must be a finite number >= 0, got inf"),
        ({"composer": {"override_knee_kp": -100.0}}, "composer.override_knee_kp", ">= 0, got -100.0"),
        ({"composer": {"override_wheel_kd": float("nan")}}, "composer.override_wheel_kd", ">= 0, got nan"),
        ({"commands": {"lin_vel_x": (-float("inf"), 1.0)}}, "commands.lin_vel_x", r"finite \(low, high\)"),
        ({"commands": {"resampling_time_s": (1.0, float("inf"))}}, "commands.resampling_time_s", "finite"),
        ({"actions": {"knee_scale": float("inf")}}, "actions.knee_scale", "must be a finite number > 0, got inf"),
        ({"stance": (float("nan"), 0.0, 0.0, 0.0)}, "stance", "4 finite knee angles"),
        ({"domain_randomization": "yes"}, "domain_randomization", "expected True, False or a dict"),
        ({"terminations": {"out_of_bounds": {"params": {"distance_buffer": -5.0}}}},
         "terminations.out_of_bounds.params.distance_buffer", "finite number >= 0"),
    ],
)  # fmt: skip
def test_non_finite_or_negative_wheel_leg_settings_fail_at_construction_naming_the_key(kwargs, field, match):
    task = "velocity_rough" if "terminations" in kwargs else "velocity"
    with pytest.raises(ConfigFieldError, match=match) as info:
        WheelLegEnv(task_name=task, **kwargs)
    assert info.value.field == field


# -- 6: config errors raised inside an env name the config key ----------------------------------
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["robot=g20_left", "task.hand_pose.control_hz=abc"], "task.hand_pose.control_hz: expected a number, got 'abc'"),
        (["robot=g20_left", "drive.hand.drive.slew_rad_s=-1"], "drive.hand.drive.slew_rad_s: must be finite and >= 0, got -1"),
        (["robot=solenopsis", "+task.velocity.domain_rand.friction=[1.5,0.2]"],
         "task.velocity.domain_rand.friction: expected a finite (low, high) range with low <= high, got (1.5, 0.2)"),
        (["robot=m20_legacy", "action.wheel_leg.actions.knee_scale=0"], "action.wheel_leg.actions.knee_scale: must be a finite number > 0, got 0"),
        (["robot=solenopsis", "composer.wheel_leg.composer.layers=[stance]"],
         "composer.wheel_leg.composer.layers: a 'policy' layer is required"),
    ],
)  # fmt: skip
def test_env_config_errors_name_the_full_config_path(overrides, message):
    with pytest.raises(ConfigError) as info:
        make_env(cfg(*overrides))
    assert str(info.value).startswith(message)


def _script(name: str, *overrides: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(ROOT / "scripts" / name), *overrides, f"hydra.run.dir={tmp_path}"]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("script", "overrides", "line"),
    [
        ("train.py", ["task.velocity.decimation=0"], "error: task.velocity.decimation: must be a positive integer, got 0"),
        ("train.py", ["robot=g20_left", "task.hand_pose.goal_mode=nosuch"],
         "error: task.hand_pose.goal_mode='nosuch' is not allowed; choose one of ['mixed', 'presets', 'random']"),
        ("train.py", ["robot=g20_left", "task.hand_pose.control_hz=abc"], "error: task.hand_pose.control_hz: expected a number, got 'abc'"),
        ("view.py", ["robot=g20_left", "source=random", "task.hand_pose.goal_mode=nosuch"], "error: task.hand_pose.goal_mode='nosuch'"),
        ("view.py", ["run=some_run", "source=policy", "task.velocity.episode_length_s=2"],
         "error: task.velocity.episode_length_s=2: source=policy plays the run as it was trained (its config.yaml)"),
        ("view.py", ["robot=g20_left", "source=presets", "action=normalized"],
         "error: action=normalized: the hand's presets are SDK commands: source=presets plays them with action=sdk255"),
        ("view.py", ["robot=solenopsis", "+sourc=presets"], "error: +sourc=presets: sourc is not a key of the config"),
        ("view.py", ["run=5", "source=policy"], "error: run=5: no config.yaml there"),  # Hydra's int 5: the folder 5
        ("view.py", ["run=5.0", "source=policy"], "error: run: a path, got 5.0; quote a path"),
        ("evaluate.py", ["robot=solenopsis", "policy=zero", "task.velocity.decimation=0"],
         "error: task.velocity.decimation: must be a positive integer"),
    ],
)  # fmt: skip
@pytest.mark.slow
def test_scripts_report_an_env_config_error_in_one_line_with_exit_status_2(script, overrides, line, tmp_path):
    done = _script(script, *overrides, tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(line), done.stderr


# -- 7: a frame a person can read ------------------------------------------------------------------
@pytest.mark.parametrize("hand", ["left", "right"])
@pytest.mark.slow
def test_g20_frames_are_lit_with_a_backdrop_and_frame_the_hand(hand):
    env = G20HandEnv(hand=hand, render_mode="rgb_array")
    env.reset(seed=0, options={"goal": "open"})
    try:
        frame = env.render()
    except Exception as exc:  # no OpenGL backend on this machine
        pytest.skip(f"offscreen rendering unavailable (MUJOCO_GL): {exc}")
    assert frame.shape == (480, 480, 3) and frame.mean() > 100  # was about 6/255: a dim hand on black
    # which pixels show the hand (segmentation from the same camera)
    model = env.model
    renderer = mujoco.Renderer(model, 480, 480)
    cam = mujoco.MjvCamera()
    mujoco.mjv_defaultFreeCamera(model, cam)
    view = camera_kwargs(env.task, None, None)["default_cam_config"]
    cam.lookat[:] = view.pop("lookat")
    for key, value in view.items():
        setattr(cam, key, value)
    renderer.update_scene(env.data, camera=cam)
    renderer.enable_segmentation_rendering()
    seg = renderer.render()
    renderer.close()
    geom = (seg[..., 1] == mujoco.mjtObj.mjOBJ_GEOM) & (seg[..., 0] >= 0)
    body = np.where(geom, model.geom_bodyid[np.clip(seg[..., 0], 0, model.ngeom - 1)], 0)
    hand_px = (body > 0) & (body != model.body("studio").id)
    ys, xs = np.nonzero(hand_px)
    assert 0.05 < hand_px.mean() < 0.5  # about 10 %
    assert xs.min() > 48 and xs.max() < 432 and ys.min() > 48 and ys.max() < 432  # whole, away from the edges
    assert abs(0.5 * (xs.min() + xs.max()) - 240) < 48 and abs(0.5 * (ys.min() + ys.max()) - 240) < 48
    assert abs(frame[hand_px].mean() - frame[~hand_px].mean()) > 30  # the hand stands out from the scene
    env.close()


def test_the_rendered_floor_and_lights_take_no_part_in_the_physics():
    model = G20HandEnv().model
    floor = model.geom("studio_floor")
    assert (floor.contype[0], floor.conaffinity[0]) == (0, 0)
    assert floor.id == model.ngeom - 1 and model.body("studio").id == model.nbody - 1  # robot indices unchanged
    assert model.body("studio").jntnum[0] == 0 and model.nlight >= 2


# -- issue 57: the same answer from every env ----------------------------------------------------
@pytest.mark.parametrize(
    "env_id, typo, message",
    [("G20Hand-v0", "drvie", "G20Hand: drvie: unknown keyword argument (did you mean drive?); valid: hand, actions, drive,"),
     ("Solenopsis-v0", "episode_lenght_s",
      "episode_lenght_s: unknown keyword argument (did you mean episode_length_s?); valid: robot, decimation,"),
     ("M20Legacy-v0", "wheel_kp", "wheel_kp: unknown keyword argument (did you mean wheel_kd?); valid: robot,")],
)  # fmt: skip
@pytest.mark.parametrize("vector", [False, True])
def test_an_unknown_keyword_is_one_error_type_naming_it_the_closest_and_the_valid_ones(env_id, typo, message, vector):
    """``gym.make`` raised ValueError on Solenopsis and TypeError on the G20; both now raise the type every bad
    config field raises (a ValueError)."""
    with pytest.raises(ConfigFieldError) as raised:
        gym.make_vec(env_id, num_envs=2, **VEC, **{typo: 1}) if vector else gym.make(env_id, **{typo: 1})
    assert str(raised.value).startswith(message) and raised.value.field == typo


@pytest.mark.parametrize("env_id", ["G20Hand-v0", "Solenopsis-v0"])
@pytest.mark.parametrize("num_envs", [-1, 0, 1.5])
def test_a_vector_env_refuses_a_bad_num_envs_naming_it(env_id, num_envs):
    with pytest.raises(ValueError, match=rf"VectorEnv: num_envs must be an integer >= 1, got {num_envs}$"):
        gym.make_vec(env_id, num_envs=num_envs, **VEC)
