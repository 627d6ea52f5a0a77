"""The in-hand tasks' reward terms, per control step as the MuJoCo tasks' (:mod:`dexwheel.tasks.in_hand.rewards`).

Isaac Lab's reward manager multiplies each term by the control period; the MuJoCo tasks do not (their reward is the
per-step sum of the terms), so these terms divide by it: value * weight * dt / dt.
"""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv

from dexwheel.isaaclab.tasks.in_hand.commands import InHandCommand
from dexwheel.isaaclab.tasks.in_hand.physics import actuator_force_sq


def _command(env: ManagerBasedRLEnv, command_name: str) -> InHandCommand:
    return env.command_manager.get_term(command_name)


def rotation_velocity(env: ManagerBasedRLEnv, command_name: str, max_rate: float = 0.6) -> torch.Tensor:
    """The object's angular velocity about the axis, clipped to +-``max_rate`` (rad/s)."""
    c = _command(env, command_name)
    rate = torch.sum(c.object_ang_vel() * c.axis, dim=1)
    return torch.clamp(rate, -max_rate, max_rate) / env.step_dt


def object_lin_vel_l2(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """``|v|^2`` of the object (m/s)^2."""
    return torch.sum(torch.square(_command(env, command_name).object_lin_vel()), dim=1) / env.step_dt


def object_drift_l2(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The object's squared distance (m^2) from where the episode started it."""
    c = _command(env, command_name)
    return torch.sum(torch.square(c.object_pos() - c.object_start), dim=1) / env.step_dt


def object_drift_excess(env: ManagerBasedRLEnv, command_name: str, free: float = 0.02) -> torch.Tensor:
    """The object's squared distance (m^2) from where the episode started it beyond ``free`` (m)."""
    c = _command(env, command_name)
    excess = torch.clamp(torch.linalg.norm(c.object_pos() - c.object_start, dim=1) - free, min=0.0)
    return excess * excess / env.step_dt


def object_tilt(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The angle (rad) between the object's vertical axis and the rotation axis."""
    c = _command(env, command_name)
    w, x, y, z = c.object_quat().T
    up = torch.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], dim=1)
    return torch.arccos(torch.clamp(torch.sum(up * c.axis, dim=1), -1.0, 1.0)) / env.step_dt


def joint_torques_l2(env: ManagerBasedRLEnv) -> torch.Tensor:
    """``sum tau^2`` over the hand's 21 actuators (N m)^2 (the last physics step's, as the MuJoCo sensors)."""
    return actuator_force_sq(env.num_envs, env.device) / env.step_dt


def orientation_tracking(env: ManagerBasedRLEnv, command_name: str, eps: float = 0.1) -> torch.Tensor:
    """``1 / (error + eps)``, the error the angle (rad) between the object's orientation and the goal's."""
    return 1.0 / (_command(env, command_name).orientation_error() + eps) / env.step_dt


def goal_reached(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """1 in the step a goal is reached (the step record decides it: :func:`.terminations.in_hand_step`)."""
    return _command(env, command_name).goal_reached.float() / env.step_dt


def is_terminated(env: ManagerBasedRLEnv) -> torch.Tensor:
    """1 where the episode just ended by a termination term (a drop)."""
    return env.termination_manager.terminated.float() / env.step_dt
