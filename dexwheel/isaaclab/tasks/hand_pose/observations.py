"""The G20 task's observation terms that Isaac Lab's stock ones do not cover (:mod:`dexwheel.tasks.hand_pose.
observations`)."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv

from dexwheel.isaaclab.tasks.hand_pose.action import HandPoseAction


def last_action(env: ManagerBasedRLEnv, action_name: str) -> torch.Tensor:
    """The action just applied, scaled to [-1, 1] (the MuJoCo task's ``last_action`` observation)."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    return term.normalized.float()
