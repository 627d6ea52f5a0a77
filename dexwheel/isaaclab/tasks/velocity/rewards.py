"""Reward terms of the wheel-leg task that Isaac Lab's stock ones define otherwise (same names as the MuJoCo task's,
:mod:`dexwheel.tasks.velocity.rewards`): the base velocity of the base origin, not of the centre of mass (as
:mod:`.observations`); the command has no lateral part, so the tracking term is x only."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import SceneEntityCfg

from dexwheel.isaaclab.tasks.terms import ROBOT


def track_lin_vel_x_exp(
    env: ManagerBasedRLEnv, std: float, command_name: str, asset_cfg: SceneEntityCfg = ROBOT
) -> torch.Tensor:
    """exp(-(vx* - vx)^2 / std^2), vx of the base origin in the base frame."""
    vx = env.scene[asset_cfg.name].data.root_link_lin_vel_b.torch[:, 0]
    return torch.exp(-torch.square(env.command_manager.get_command(command_name)[:, 0] - vx) / std**2)


def lin_vel_z_l2(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = ROBOT) -> torch.Tensor:
    """vz^2 of the base origin in the base frame."""
    return torch.square(env.scene[asset_cfg.name].data.root_link_lin_vel_b.torch[:, 2])
