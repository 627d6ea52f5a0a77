"""Each hand-pose term alone, on a mock state (numbers by hand), and the tables' wiring in G20Hand-v0."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS
from dexwheel.tasks import mdp
from dexwheel.tasks.hand_pose import events, observations, rewards, terminations
from dexwheel.tasks.hand_pose.config import EVENTS, OBSERVATIONS, REWARDS, TERMINATIONS, make_cfg
from dexwheel.tasks.terms import ConfigFieldError

ACTIVE_IDX = np.array([ALL_JOINTS.index(j) for j in ACTIVE_JOINTS], dtype=np.intp)


def mock(n: int = 2) -> SimpleNamespace:
    """Two envs: env 0 on its goal, env 1 off by 0.2 rad on every active joint."""
    qpos = np.zeros((n, len(ALL_JOINTS)))
    goal = np.zeros((n, len(ACTIVE_JOINTS)))
    goal[1] = -0.2
    return SimpleNamespace(qpos=qpos, qvel=np.arange(n * 21, dtype=float).reshape(n, 21), goal=goal,
                           active_idx=ACTIVE_IDX, depth=np.array([0.0, 0.003]),
                           action=np.array([[0.5] * 16, [1.0] * 16]), last_action=np.array([[0.5] * 16, [0.0] * 16]))  # fmt: skip


def test_tracking_is_exp_of_the_mean_squared_error_over_the_active_joints():
    t = mock()
    np.testing.assert_allclose(rewards.joint_pos_tracking_exp(t, std=0.3), [1.0, math.exp(-0.04 / 0.09)], rtol=1e-12)
    np.testing.assert_allclose(rewards.joint_pos_tracking_exp(t, std=0.1), [1.0, math.exp(-4.0)], rtol=1e-12)
    t.qpos[1, ALL_JOINTS.index("thumb_ip")] = 5.0  # a mimic joint: not part of the error
    np.testing.assert_allclose(rewards.joint_pos_tracking_exp(t, std=0.1), [1.0, math.exp(-4.0)], rtol=1e-12)


def test_penetration_and_action_rate():
    t = mock()
    np.testing.assert_array_equal(rewards.max_penetration(t), [0.0, 0.003])
    np.testing.assert_array_equal(mdp.action_rate_l2(t), [0.0, 16.0])  # 16 joints moved by 1


def test_observations_are_the_named_state():
    t = mock()
    assert mdp.joint_pos(t) is t.qpos and mdp.joint_vel(t) is t.qvel
    assert observations.goal_pose(t) is t.goal and mdp.last_action(t) is t.last_action


def test_deep_contact_terminates_past_its_limit():
    np.testing.assert_array_equal(terminations.deep_contact(mock(), limit=0.002), [False, True])


class _Coupling:
    active_lower = np.full(16, -1.0)
    active_upper = np.full(16, 1.0)


def test_reset_noise_keeps_a_collision_free_pose_and_clips_to_the_limits():
    depth = {"value": 0.0}
    t = SimpleNamespace(start_pose=np.full((1, 16), 0.99), coupling=_Coupling(), cfg=SimpleNamespace(collision=SimpleNamespace(penetration_tol=5e-4)),
                        pose_depth=lambda q: depth["value"])  # fmt: skip
    events.reset_joints_by_offset(t, 0, np.random.default_rng(0), scale=0.05)
    u = np.random.default_rng(0).uniform(-0.05, 0.05, 16)
    np.testing.assert_array_equal(t.start_pose[0], np.clip(0.99 + u, -1.0, 1.0))
    assert t.start_pose.max() == 1.0  # clipped at the upper limit
    depth["value"] = 1e-3  # the noisy pose penetrates: the start pose stays
    before = t.start_pose.copy()
    events.reset_joints_by_offset(t, 0, np.random.default_rng(1), scale=0.05)
    np.testing.assert_array_equal(t.start_pose, before)
    rng = np.random.default_rng(2)
    events.reset_joints_by_offset(t, 0, rng, scale=0.0)  # 0: nothing drawn
    assert rng.random() == np.random.default_rng(2).random()


def test_the_default_tables():
    assert list(REWARDS) == ["joint_pos_tracking", "joint_pos_tracking_fine", "penetration", "action_rate_l2"]
    assert [(t.weight, dict(t.params)) for t in REWARDS.values()] == [(1.0, {"std": 0.3}), (1.0, {"std": 0.1}),
                                                                      (-100.0, {}), (-0.01, {})]  # fmt: skip
    assert list(OBSERVATIONS) == ["qpos", "qvel", "goal", "last_action"] and TERMINATIONS == {}
    assert list(EVENTS) == ["reset_joints"] and EVENTS["reset_joints"].params == {"scale": 0.05}


def test_earlier_flat_fields_change_the_entries_that_hold_them():
    cfg = make_cfg(tracking_std=0.2, penetration_weight=50.0, action_rate_weight=0.0, reset_noise_scale=0.0)
    assert cfg.rewards["joint_pos_tracking"].params == {"std": 0.2}
    assert cfg.rewards["penetration"].weight == -50.0 and cfg.rewards["action_rate_l2"].weight == 0.0
    assert cfg.events["reset_joints"].params == {"scale": 0.0}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"rewards": {"joint_pos_tracking": {"params": {"std": 0}}}},
            r"rewards\.joint_pos_tracking\.params\.std: must be a finite number > 0, got 0",
        ),
        ({"observations": {"qpos": {"group": "critic"}}}, r"observations\.qpos\.group: 'critic'; G20Hand has one"),
        (
            {"events": {"reset_joints": {"mode": "interval", "interval_range_s": (1.0, 2.0)}}},
            r"events\.reset_joints\.mode",
        ),
        ({"events": {"reset_joints": {"params": {"scale": -1}}}}, r"events\.reset_joints\.params\.scale"),
        ({"tracking_std": "wide"}, "tracking_std must be a finite number"),
        ({"rewardz": {}}, r"rewardz: unknown keyword argument \(did you mean rewards\?\); valid: hand,"),
    ],
)
def test_bad_entries_are_refused_naming_them(kwargs, match):
    with pytest.raises((ConfigFieldError, TypeError), match=match):
        make_cfg(**kwargs)
