"""The G20's step goes through the composer: mapping -> layers -> resolver -> drive, selectable from Hydra."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from spec_tables import G20_LIMITS

import dexwheel  # noqa: F401
from dexwheel.control import G20SdkMapping
from dexwheel.envs.g20_vector import G20HandVectorEnv
from dexwheel.fields import ConfigFieldError
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.schema import ConfigError
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, G20_HALF_FIST_CMD

CONFIGS = str(__import__("pathlib").Path(__file__).resolve().parents[3] / "configs")
THUMB = [j for j in ACTIVE_JOINTS if j.startswith("thumb_")]
FINGERS = [j for j in ACTIVE_JOINTS if not j.startswith("thumb_")]


def _idx(names: list[str]) -> list[int]:
    return [ACTIVE_JOINTS.index(j) for j in names]


@pytest.mark.parametrize("drive", ["hard_write", "pd"])
def test_a_hold_layer_keeps_the_thumb_at_its_preset_while_the_policy_drives_the_fingers(drive: str) -> None:
    env = gym.make(
        "G20Hand-v0",
        drive={"kind": drive, "track_test": True},
        actions="nominal",
        composer={"layers": ["policy", "hold"], "hold_joints": "thumb", "hold_pose": "half_fist"},
    ).unwrapped
    env.reset(seed=0)
    half_fist = G20SdkMapping("left")(G20_HALF_FIST_CMD)[[ALL_JOINTS.index(j) for j in ACTIVE_JOINTS]]
    wanted = np.array([G20_LIMITS[j][1] for j in ACTIVE_JOINTS])  # the policy asks every joint for its upper limit
    for _ in range(60):
        env.step(wanted)
    np.testing.assert_allclose(env.command[_idx(THUMB)], half_fist[_idx(THUMB)], atol=1e-6)  # held: float32 frame
    np.testing.assert_allclose(env.command[_idx(FINGERS)], wanted[_idx(FINGERS)], atol=1e-6)  # the policy's
    q = env.data.qpos[[ALL_JOINTS.index(j) for j in ACTIVE_JOINTS]]
    tol = 1e-9 if drive == "hard_write" else 0.02  # track_test: the vendor bridge's <= 0.02 rad
    np.testing.assert_allclose(q[_idx(THUMB)], half_fist[_idx(THUMB)], atol=tol)


def test_the_step_runs_the_composer_and_the_resolver() -> None:
    env = gym.make("G20Hand-v0", actions="nominal", drive={"track_test": True}).unwrapped
    env.reset(seed=0)
    goal = np.array([np.mean(G20_LIMITS[j]) for j in ACTIVE_JOINTS])
    env.step(goal)
    path = env.task.command_path
    np.testing.assert_array_equal(path.policy.position, goal.astype(np.float32))  # the policy layer's buffer
    np.testing.assert_array_equal(path.composer.frame.qpos, goal.astype(np.float32))  # the composed frame
    np.testing.assert_array_equal(env.command, goal.astype(np.float32).astype(np.float64))  # what the drive got


def test_vector_envs_hold_every_envs_thumb() -> None:
    vec = G20HandVectorEnv(
        num_envs=3,
        composer={"layers": ("policy", "hold"), "hold_joints": tuple(THUMB), "hold_pose": "open"},
    )
    vec.reset(seed=0)
    open_pose = vec.task.presets["open"][_idx(THUMB)]
    for _ in range(20):
        vec.step(np.ones((3, 16)))
    np.testing.assert_allclose(vec.task.command[:, _idx(THUMB)], np.tile(open_pose, (3, 1)), atol=1e-6)
    assert np.all(vec.task.command[:, _idx(FINGERS)] > vec.task.presets["open"][_idx(FINGERS)])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"composer": {"layers": ["hold"]}}, "composer.layers: .*'policy'"),
     ({"composer": {"layers": ["policy", "teleop"]}}, "composer.layers"),
     ({"composer": {"layers": ["policy", "hold"], "hold_joints": "wrist"}}, "hold_joints: unknown joint group 'wrist'"),
     ({"composer": {"layers": ["policy", "hold"], "hold_joints": ["thumb_ip"]}}, r"hold_joints: \['thumb_ip'\]"),
     ({"composer": {"hold_pose": "fist"}}, "hold_pose")],
)  # fmt: skip
def test_bad_composer_settings_name_the_field(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigFieldError, match=message):
        gym.make("G20Hand-v0", **kwargs)


def test_hydra_composer_option_for_the_hand_and_refused_for_the_wheel_leg_robots() -> None:
    with initialize_config_dir(config_dir=CONFIGS, version_base="1.3"):
        cfg = compose(
            "train", overrides=["robot=g20_right", "composer=hold_thumb", "composer.hand.composer.hold_pose=full_fist"]
        )
        env = make_env(cfg)
        assert env.unwrapped.task.command_path.describe()["hold"] == tuple(THUMB)
        with pytest.raises(ConfigError, match="composer=hold_thumb is not available for robot solenopsis"):
            make_env(compose("train", overrides=["robot=solenopsis", "composer=hold_thumb"]))


@pytest.mark.parametrize("goal_mode", ["presets", "random"])
def test_held_joints_are_no_goal_so_perfect_finger_tracking_succeeds(goal_mode: str) -> None:
    """composer=hold_thumb: the thumb's goal is its held pose, so a policy that puts every free joint on its
    goal meets the success threshold (mean joint error <= 0.05 rad), which it could not if the thumb were scored
    against goals it is not allowed to reach."""
    env = gym.make(
        "G20Hand-v0",
        actions="nominal",
        drive={"track_test": True},
        composer={"layers": ["policy", "hold"], "hold_joints": "thumb", "hold_pose": "open"},
        goal_mode=goal_mode,
    ).unwrapped
    open_thumb = env.task.presets["open"][_idx(THUMB)]
    for seed in range(5):
        env.reset(seed=seed)
        np.testing.assert_array_equal(env.goal[_idx(THUMB)], open_thumb)  # sampled goals hold the thumb
        for _ in range(3):
            *_, info = env.step(env.goal)  # every free joint straight onto its goal
        assert info["mean_joint_error"] <= 1e-6 and info["reward_joint_pos_tracking_fine"] == pytest.approx(1.0)
    env.set_goal("full_fist")  # a given goal too: the thumb's part is its held pose
    np.testing.assert_array_equal(env.goal[_idx(THUMB)], open_thumb)
    np.testing.assert_array_equal(env.goal[_idx(FINGERS)], env.task.presets["full_fist"][_idx(FINGERS)])
