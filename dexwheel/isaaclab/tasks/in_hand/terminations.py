"""The in-hand tasks' termination terms (:mod:`dexwheel.tasks.in_hand.terminations`) and the step record for the
goals and evaluations: a termination term that never terminates."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv

from dexwheel.isaaclab.tasks.in_hand.commands import InHandCommand

#: What :func:`in_hand_step` records per env: the MuJoCo env's info entries its metrics read.
STEP_INFO_KEYS = ("rotation_rate", "rotation_angle", "object_drift", "orientation_error", "successes")


def object_dropped(env: ManagerBasedRLEnv, command_name: str, max_distance: float = 0.05,
                   min_height: float = -0.02) -> torch.Tensor:  # fmt: skip
    """The object left the hand: more than ``max_distance`` from where its episode started, or its centre below
    ``min_height`` relative to its start."""
    c: InHandCommand = env.command_manager.get_term(command_name)
    offset = c.object_pos() - c.object_start
    return (torch.linalg.norm(offset, dim=1) > max_distance) | (offset[:, 2] < min_height)


def in_hand_step(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """Never terminates. After the physics and before the rewards and resets (the termination terms run there), as
    the MuJoCo task's step: the turn about the axis (``rotation_angle += rate * dt``), and with reorientation a goal
    reached (within ``success_tolerance``: the bonus's step; the command draws the next goal after the resets) and
    counted; records the step's ``rotation_rate``, ``rotation_angle``, ``object_drift``, ``orientation_error`` and
    ``successes`` in ``env.dexwheel_step_info`` (an evaluation reads an episode's last step from it)."""
    c: InHandCommand = env.command_manager.get_term(command_name)
    rate = torch.sum(c.object_ang_vel() * c.axis, dim=1)
    c.rotation_angle += rate * env.step_dt
    error = c.orientation_error()
    if c.cfg.reorient:
        torch.lt(error, c.cfg.success_tolerance, out=c.goal_reached)
        c.successes += c.goal_reached
    drift = torch.linalg.norm(c.object_pos() - c.object_start, dim=1)
    env.dexwheel_step_info = {"rotation_rate": rate, "rotation_angle": c.rotation_angle.clone(), "object_drift": drift,
                              "orientation_error": error, "successes": c.successes.clone()}  # fmt: skip
    return torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
