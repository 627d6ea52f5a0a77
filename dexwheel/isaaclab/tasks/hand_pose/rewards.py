"""The G20 task's reward terms, per control step as the MuJoCo task's (:mod:`dexwheel.tasks.hand_pose.rewards`).

Isaac Lab's reward manager multiplies each term by the control period; the MuJoCo G20 task does not (its reward is
the per-step sum of its terms), so these terms divide by it: value * weight * dt / dt.
"""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import SceneEntityCfg

from dexwheel.isaaclab.tasks.hand_pose.action import HandPoseAction
from dexwheel.isaaclab.tasks.hand_pose.contacts import contact_depth
from dexwheel.isaaclab.tasks.terms import ROBOT


def joint_pos_tracking(env: ManagerBasedRLEnv, std: float, command_name: str,
                       asset_cfg: SceneEntityCfg = ROBOT) -> torch.Tensor:  # fmt: skip
    """exp(-mean((q - goal)^2) / std^2) over the goal's joints (``asset_cfg.joint_ids``, in its order)."""
    q = env.scene[asset_cfg.name].data.joint_pos.torch[:, asset_cfg.joint_ids]
    err = torch.square(q - env.command_manager.get_command(command_name)).mean(dim=1)
    return torch.exp(-err / std**2) / env.step_dt


def penetration(env: ManagerBasedRLEnv, action_name: str) -> torch.Tensor:
    """The deepest contact (m) over the control step's physics steps (:class:`HandPoseAction`'s record and
    the last physics step's contacts)."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    return torch.maximum(term.depth, contact_depth(env.num_envs, env.device)) / env.step_dt


def action_rate_l2(env: ManagerBasedRLEnv, action_name: str) -> torch.Tensor:
    """sum((a - a_prev)^2) over the action scaled to [-1, 1] (the MuJoCo task's ``action_rate_l2``)."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    return torch.sum(torch.square(term.normalized - term.prev_normalized), dim=1).float() / env.step_dt
