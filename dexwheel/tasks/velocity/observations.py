"""The velocity task's observation terms, each ``func(task, **params) -> (N,) or (N, k)``.

The task writes them, times their ``scale``, into consecutive columns in the table's order: the "policy"
group first (what a deployed policy reads), then the "critic" group when privileged observations are on.
"""

from __future__ import annotations

import numpy as np

from dexwheel.robots.wheel_leg import LEGS

#: Columns of ``task.model_params``: what domain randomisation drew for each env this episode.
MODEL_PARAM_COLUMNS = {"friction": slice(0, 1), "base_mass_add": slice(1, 2), "base_com_offset": slice(2, 5),
                       "link_mass_scale": slice(5, 5 + 2 * len(LEGS))}  # fmt: skip


def base_ang_vel(task) -> np.ndarray:
    """Base angular velocity (rad/s, base frame)."""
    return task.base_ang_vel


def projected_gravity(task) -> np.ndarray:
    """Gravity's direction in the base frame (upright: (0, 0, -1))."""
    return task.world_z_in_base * -1.0


def velocity_commands(task) -> np.ndarray:
    """The commanded forward velocity (m/s) and yaw rate (rad/s)."""
    return task.commands


def joint_pos_rel(task) -> np.ndarray:
    """Knee angles minus the stance (rad); wheel angles carry no information."""
    return task.knee_pos - task.stance


def joint_vel_rel(task) -> np.ndarray:
    """Knee and wheel velocities (rad/s), task order."""
    return task.joint_vel


def last_action(task) -> np.ndarray:
    """The action applied in the last step, in [-1, 1]."""
    return task.last_action


def base_lin_vel(task) -> np.ndarray:
    """Base linear velocity (m/s, base frame): privileged, a real robot estimates it."""
    return task.base_lin_vel


def friction(task) -> np.ndarray:
    """Floor friction minus its nominal value (domain randomisation; 0 without)."""
    return task.model_params[:, MODEL_PARAM_COLUMNS["friction"]]


def base_mass_add(task) -> np.ndarray:
    """Mass added to the base (kg)."""
    return task.model_params[:, MODEL_PARAM_COLUMNS["base_mass_add"]]


def base_com_offset(task) -> np.ndarray:
    """The base's centre-of-mass offset (m, x y z)."""
    return task.model_params[:, MODEL_PARAM_COLUMNS["base_com_offset"]]


def link_mass_scale(task) -> np.ndarray:
    """Each arm's and wheel's mass factor minus 1 (knees then wheels)."""
    return task.model_params[:, MODEL_PARAM_COLUMNS["link_mass_scale"]]
