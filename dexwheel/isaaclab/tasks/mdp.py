"""Terms the wheel-leg task defines differently from Isaac Lab's stock ones (same names as the MuJoCo task).

The MuJoCo task reads its base velocity from a velocimeter at the base origin (the IMU site), Isaac Lab's
stock terms from the base's centre of mass; the base CoM sits 7.7 cm above the origin on Solenopsis, so
pitching moves the two apart. Its command has no lateral part, so the tracking term is x only and the
observation carries (vx, wz), not (vx, vy, wz).
"""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import SceneEntityCfg

_ROBOT = SceneEntityCfg("robot")


def velocity_commands(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The commanded (vx, wz): the MuJoCo task's ``velocity_commands`` columns."""
    return env.command_manager.get_command(command_name)[:, [0, 2]]


def track_lin_vel_x_exp(
    env: ManagerBasedRLEnv, std: float, command_name: str, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """exp(-(vx* - vx)^2 / std^2), vx of the base origin in the base frame."""
    vx = env.scene[asset_cfg.name].data.root_link_lin_vel_b.torch[:, 0]
    return torch.exp(-torch.square(env.command_manager.get_command(command_name)[:, 0] - vx) / std**2)


def lin_vel_z_l2(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """vz^2 of the base origin in the base frame."""
    return torch.square(env.scene[asset_cfg.name].data.root_link_lin_vel_b.torch[:, 2])
