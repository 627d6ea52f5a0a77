"""The hand-pose task's observation terms, each ``func(task, **params) -> (N,) or (N, k)``.

The task writes them, times their ``scale``, as float32 into consecutive columns in the table's order;
``env.obs_slices`` names the columns by term.
"""

from __future__ import annotations

import numpy as np


def joint_pos(task) -> np.ndarray:
    """All 21 joint positions (rad, ``ALL_JOINTS`` order; the mimic joints included)."""
    return task.qpos


def joint_vel(task) -> np.ndarray:
    """All 21 joint velocities (rad/s); hard-write: the last step's motion divided by ``dt`` (its written
    qvel is 0)."""
    return task.qvel


def goal_pose(task) -> np.ndarray:
    """The goal of the 16 active joints (rad, ``ACTIVE_JOINTS`` order): the task's command."""
    return task.goal


def last_action(task) -> np.ndarray:
    """The action applied in the last step, scaled to [-1, 1] (16 values; 20 for ``sdk255``)."""
    return task.last_action
