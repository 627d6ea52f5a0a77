"""The random goals the Isaac Lab G20 task draws from are the MuJoCo task's own ``sample_goal``'s, bit for bit."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from dexwheel.tasks.hand_pose import goal_set, sample_goals
from dexwheel.tasks.hand_pose.config import make_cfg
from dexwheel.tasks.hand_pose.task import G20HandTask


@pytest.mark.parametrize("hand", ["left", "right"])
def test_the_committed_set_is_the_mujoco_tasks_seeded_draws(hand):
    cfg = make_cfg(hand=hand)
    goals = goal_set.lookup(cfg)  # both hands' default configs are in the file
    assert goals.shape == (goal_set.SIZE, 16)
    task = G20HandTask(make_cfg(hand=hand, goal_mode="random"))
    rng = np.random.default_rng(goal_set.SEED)
    assert np.array_equal(goals, np.stack([task.sample_goal(rng) for _ in range(goal_set.SIZE)])), (
        "stale random_goals.npz: python -m dexwheel.tasks.hand_pose.sample_goals --write"
    )
    # collision-free by the task's own check (or the open hand, its fallback)
    assert all(task.pose_depth(q) <= cfg.penetration_tol for q in goals[:64])
    assert len(np.unique(goals, axis=0)) > goal_set.SIZE // 2


def test_a_config_the_file_lacks_is_drawn_by_the_same_function_in_the_core_venv(monkeypatch):
    cfg = make_cfg(composer_layers=("policy", "hold"), hold_joints="thumb", penetration_tol=1e-3)
    assert goal_set.lookup(cfg) is None
    monkeypatch.setenv("DEXWHEEL_MUJOCO_PYTHON", sys.executable)
    goals = goal_set.goal_set(cfg)
    assert np.array_equal(goals, sample_goals.compute(json.loads(json.dumps(goal_set.key(cfg)))))
    task = G20HandTask(goal_set.config_of(goal_set.key(cfg)))
    thumb = task._held_idx
    assert np.all(goals[:, thumb] == task.presets["open"][thumb])  # held joints at their held position
    monkeypatch.setenv("DEXWHEEL_MUJOCO_PYTHON", "/nonexistent/python")
    goal_set._computed.cache_clear()
    with pytest.raises(FileNotFoundError, match=r"not in random_goals\.npz.*DEXWHEEL_MUJOCO_PYTHON"):
        goal_set.goal_set(cfg)
