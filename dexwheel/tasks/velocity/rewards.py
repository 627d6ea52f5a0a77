"""The velocity task's reward terms (mjlab / Isaac Lab names), each ``func(task, **params) -> (N,)``.

``task`` is the batched :class:`~dexwheel.tasks.velocity.task.WheelLegTask`; the terms read its named
state (``commands``, ``base_lin_vel``, ``actuator_force``, ...). The task multiplies each by its weight
(and the control period) and sums them in the table's order (:data:`~dexwheel.tasks.velocity.config.REWARDS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import numpy as np

from dexwheel.robots.wheel_leg import NON_WHEEL_BODIES
from dexwheel.tasks import kernels
from dexwheel.tasks.terms import Check

Std = Annotated[float, Check(gt=0)]
Bodies = Annotated[Sequence[str], Check(among=NON_WHEEL_BODIES)]


def track_lin_vel_x_exp(task, std: Std) -> np.ndarray:
    """``exp(-(v_x,cmd - v_x)^2 / std^2)``: forward-velocity tracking (base frame), 1 when exact."""
    return kernels.exp_sq_error(task.commands[:, 0], task.base_lin_vel[:, 0], -1.0 / (std * std))


def track_ang_vel_z_exp(task, std: Std) -> np.ndarray:
    """``exp(-(w_z,cmd - w_z)^2 / std^2)``: yaw-rate tracking, 1 when exact."""
    return kernels.exp_sq_error(task.commands[:, 1], task.base_ang_vel[:, 2], -1.0 / (std * std))


def lin_vel_z_l2(task) -> np.ndarray:
    """``v_z^2``: bouncing of the base (base frame)."""
    return kernels.sum_sq(task.base_lin_vel[:, 2:3])


def ang_vel_xy_l2(task) -> np.ndarray:
    """``w_x^2 + w_y^2``: roll and pitch rates of the base."""
    return kernels.sum_sq(task.base_ang_vel[:, :2])


def flat_orientation_l2(task) -> np.ndarray:
    """``g_x^2 + g_y^2`` of gravity in the base frame: 0 when the base is level."""
    return kernels.sum_sq(task.world_z_in_base[:, :2])


def undesired_contacts(task, bodies: Bodies) -> np.ndarray:
    """How many of ``bodies`` touch the floor (a count per env)."""
    return kernels.count_positive(task.floor_contact, task.body_columns(bodies))
