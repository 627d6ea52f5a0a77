"""The in-hand tasks' observation terms, each ``func(task, **params) -> (N,) or (N, k)``.

The ``policy`` group is proprioception only (the hand's joints and its last action: what the real hand's servos
report); the ``critic`` group adds what a simulator knows and a real hand does not (the object's pose and velocity,
the fingers' contacts, the command), for an asymmetric actor-critic; a ``state`` variant puts them in the policy
group too.
"""

from __future__ import annotations

import numpy as np


def object_pos_rel(task) -> np.ndarray:
    """The object's position (m) from where its episode started."""
    return task.object_pos - task.object_start


def object_quat(task) -> np.ndarray:
    """The object's orientation (w x y z, w >= 0)."""
    q = task.object_quat
    return np.where(q[:, :1] < 0.0, -q, q)


def object_lin_vel(task) -> np.ndarray:
    """The object's linear velocity (m/s, world frame)."""
    return task.object_lin_vel


def object_ang_vel(task) -> np.ndarray:
    """The object's angular velocity (rad/s, world frame)."""
    return task.object_ang_vel


def fingertip_contacts(task) -> np.ndarray:
    """Whether each finger's distal segment and the thumb's touch the object (0 / 1: thumb, index ... pinky)."""
    return np.minimum(task.tip_contacts, 1.0)


def rotation_axis(task) -> np.ndarray:
    """The commanded rotation axis (world frame, unit)."""
    return task.axis


def goal_quat(task) -> np.ndarray:
    """The goal orientation (w x y z, w >= 0)."""
    q = task.goal_quat
    return np.where(q[:, :1] < 0.0, -q, q)


def gait_phase(task, period: float = 0.52) -> np.ndarray:
    """A clock at the gait's period (s): ``sin`` and ``cos`` of ``2 pi t / period``, ``t`` the episode's time (s) at
    this observation (its control steps since the reset times ``dt``). What a real hand's controller knows too (its
    own clock): the finger gait's 0.52 s cycle, which three frames of joint positions tell a policy only slowly."""
    angle = (2.0 * np.pi / period) * (task.elapsed * task.dt)
    return np.stack([np.sin(angle), np.cos(angle)], axis=1)
