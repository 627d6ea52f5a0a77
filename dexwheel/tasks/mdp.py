"""The generic terms: what any task's tables may name, each written once (Isaac Lab's and mjlab's ``mdp`` vocabulary).

Each reads only what every task provides (:data:`dexwheel.tasks.runtime.COMMON_READS`) or what a family names in its
:attr:`~dexwheel.tasks.runtime.TaskRuntime.READS` (``qpos``, ``qvel``, ``actuator_force``); a task without such a field
refuses the term when it is built, naming it. A family's own terms live in its folder (``tasks/<task>/rewards.py``).
"""

from __future__ import annotations

import numpy as np

from dexwheel.tasks import kernels

# -- rewards -------------------------------------------------------------------------------------------------


def action_rate_l2(task) -> np.ndarray:
    """``sum (a - a_prev)^2`` of the actions as the terms see them ([-1, 1]): smoothness (a fresh episode's previous
    action is the one that holds its start)."""
    return kernels.sum_sq_diff(task.action, task.last_action)


def joint_torques_l2(task) -> np.ndarray:
    """``sum tau^2`` over every actuator (N m)^2 (``actuator_force``): effort."""
    return kernels.sum_sq(task.actuator_force)


def is_terminated(task) -> np.ndarray:
    """1 where the episode just ended by a termination term (not by time): its one-off price."""
    return task.terminated.astype(np.float64)


# -- observations --------------------------------------------------------------------------------------------


def last_action(task) -> np.ndarray:
    """The action applied in the last step, as the terms see it ([-1, 1])."""
    return task.last_action


def joint_pos(task) -> np.ndarray:
    """The joint positions (rad, ``qpos``: the hand's 21 in ``ALL_JOINTS`` order, mimic joints included)."""
    return task.qpos


def joint_vel(task) -> np.ndarray:
    """The joint velocities (rad/s, ``qvel``; hard-write: the last step's motion divided by ``dt``)."""
    return task.qvel
