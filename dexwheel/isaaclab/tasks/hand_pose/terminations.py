"""The G20 task's step record for evaluations: a termination term that never terminates."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv

from dexwheel.isaaclab.tasks.hand_pose.action import HandPoseAction
from dexwheel.isaaclab.tasks.hand_pose.commands import HandGoalCommand
from dexwheel.isaaclab.tasks.hand_pose.contacts import contact_depth

#: What :func:`hand_step_info` records per env: the MuJoCo env's info entries of a step.
STEP_INFO_KEYS = ("mean_joint_error", "tracking_error", "max_penetration")


def hand_step_info(env: ManagerBasedRLEnv, action_name: str, command_name: str) -> torch.Tensor:
    """Never terminates; records the step's ``mean_joint_error``, ``tracking_error`` and ``max_penetration``
    (as the MuJoCo env's info: the active joints against the goal, the deepest contact over the step's physics
    steps) in ``env.dexwheel_step_info``, after the physics and before the resets (the termination terms run
    there: an evaluation reads an episode's last step from it)."""
    command: HandGoalCommand = env.command_manager.get_term(command_name)
    term: HandPoseAction = env.action_manager.get_term(action_name)
    err = command.errors()
    env.dexwheel_step_info = {"mean_joint_error": err.mean(dim=1), "tracking_error": err.max(dim=1).values,
                              "max_penetration": torch.maximum(term.depth, contact_depth(env.num_envs, env.device))}  # fmt: skip
    return torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
