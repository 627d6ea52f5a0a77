"""The in-hand tasks' reward terms, each ``func(task, **params) -> (N,)`` over the batched
:class:`~dexwheel.tasks.in_hand.task.InHandTask` (its object state in the world frame: ``object_pos``,
``object_quat``, ``object_lin_vel``, ``object_ang_vel``; the command: ``axis``, ``goal_quat``)."""

from __future__ import annotations

from typing import Annotated

import numpy as np

from dexwheel.tasks import kernels
from dexwheel.tasks.in_hand.geometry import quat_angle, up_axis_angle
from dexwheel.tasks.terms import Check


def rotation_velocity(task, max_rate: Annotated[float, Check(gt=0, unit="rad/s")] = 0.6) -> np.ndarray:
    """The object's angular velocity about the commanded axis, clipped to +-``max_rate`` (HORA's and the LEAP hand's
    rotation reward): turning faster earns nothing more, so the policy keeps the object in hand rather than flick it."""
    return np.clip(kernels.row_dot(task.object_ang_vel, task.axis), -max_rate, max_rate)


def object_lin_vel_l2(task) -> np.ndarray:
    """``|v|^2`` of the object (m/s)^2: it should turn in place, not slide or bounce."""
    return kernels.sum_sq(task.object_lin_vel)


def object_drift_l2(task) -> np.ndarray:
    """The object's squared distance (m^2) from where the episode started it: a rotation in place."""
    return kernels.sum_sq(task.object_pos - task.object_start)


def object_drift_excess(task, free: Annotated[float, Check(ge=0, unit="m")] = 0.02) -> np.ndarray:
    """The squared distance (m^2) the object has moved from where the episode started beyond ``free``: the motion a
    turn needs (a roll shifts the object's centre by a centimetre or two) is free, wandering off is not."""
    excess = np.maximum(kernels.row_norm(task.object_pos - task.object_start) - free, 0.0)
    return excess * excess


def object_tilt(task) -> np.ndarray:
    """The angle (rad) between the object's vertical axis and the rotation axis: spin about the axis, not roll."""
    return up_axis_angle(task.object_quat, task.axis)


def orientation_error(task) -> np.ndarray:
    """The angle (rad) between the object's orientation and the goal's."""
    return quat_angle(task.object_quat, task.goal_quat)


def orientation_tracking(task, eps: Annotated[float, Check(gt=0, unit="rad")] = 0.1) -> np.ndarray:
    """``1 / (error + eps)``: Isaac Lab's and the Shadow hand tasks' reorientation reward, sharpest at the goal."""
    return 1.0 / (quat_angle(task.object_quat, task.goal_quat) + eps)


def goal_reached(task) -> np.ndarray:
    """1 in the step a goal is reached (then a new goal is drawn): the success bonus."""
    return task.goal_reached.astype(np.float64)
