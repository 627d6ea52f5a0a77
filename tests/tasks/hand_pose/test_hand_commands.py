"""The hand's command, its goal (``tasks/hand_pose/commands.py``): presets, free random poses, held joints."""

import numpy as np
import pytest

from dexwheel.robots.g20 import ACTIVE_JOINTS, GOAL_PRESETS
from dexwheel.tasks.hand_pose import commands
from dexwheel.tasks.hand_pose.config import make_cfg
from dexwheel.tasks.hand_pose.task import G20HandTask


@pytest.fixture(scope="module")
def task() -> G20HandTask:
    return G20HandTask(make_cfg(hand="left", goal_mode="random"), 1)


def test_random_goals_are_within_the_limits_and_collision_free(task):
    rng = np.random.default_rng(0)
    goals = np.stack([commands.sample_goal(task, rng) for _ in range(20)])
    assert np.all(goals >= task.coupling.active_lower) and np.all(goals <= task.coupling.active_upper)
    assert all(commands.pose_depth(task, g) <= task.cfg.collision.penetration_tol for g in goals)
    assert len({g.tobytes() for g in goals}) == 20  # draws, not a fixed pose


def test_preset_goals_are_the_presets():
    task = G20HandTask(make_cfg(hand="left", goal_mode="presets"), 1)
    rng = np.random.default_rng(1)
    presets = {task.presets[name].tobytes() for name in GOAL_PRESETS}
    assert all(commands.sample_goal(task, rng).tobytes() in presets for _ in range(10))


def test_a_given_goal_is_checked_not_clipped(task):
    commands.set_goal(task, 0, {"index_mcp_pitch": 0.5})
    assert task.goal[0, ACTIVE_JOINTS.index("index_mcp_pitch")] == 0.5
    with pytest.raises(ValueError, match="index_mcp_pitch"):
        commands.set_goal(task, 0, {"index_mcp_pitch": 9.0})
    assert task.goal[0, ACTIVE_JOINTS.index("index_mcp_pitch")] == 0.5  # unchanged by the refused goal
