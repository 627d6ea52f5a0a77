"""Observation terms of the wheel-leg task that Isaac Lab's stock ones define otherwise (same names as the MuJoCo
task's, :mod:`dexwheel.tasks.velocity.observations`).

The MuJoCo task reads its base velocity from a velocimeter at the base origin (the IMU site), Isaac Lab's stock terms
from the base's centre of mass; the base CoM sits 7.7 cm above the origin on Solenopsis, so pitching moves the two
apart. Its command has no lateral part, so the observation carries (vx, wz), not (vx, vy, wz).
"""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import SceneEntityCfg

from dexwheel.isaaclab.tasks.terms import ROBOT
from dexwheel.isaaclab.tasks.velocity.terrain import scene_terrain


def velocity_commands(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The commanded (vx, wz): the MuJoCo task's ``velocity_commands`` columns."""
    return env.command_manager.get_command(command_name)[:, [0, 2]]


def joint_pos_rel(env: ManagerBasedRLEnv, offset: list[float], asset_cfg: SceneEntityCfg = ROBOT) -> torch.Tensor:
    """Joint angles minus ``offset`` (the MuJoCo task's knee angles minus the commanded stance; Isaac Lab's own
    term subtracts the default pose, which is the settled stance here)."""
    q = env.scene[asset_cfg.name].data.joint_pos.torch[:, asset_cfg.joint_ids]
    return q - torch.tensor(offset, device=q.device, dtype=q.dtype)


def base_lin_vel(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = ROBOT) -> torch.Tensor:
    """Base linear velocity (m/s) of the base origin in the base frame (privileged: the MuJoCo velocimeter's)."""
    return env.scene[asset_cfg.name].data.root_link_lin_vel_b.torch


#: Columns of the per-env draw record (:func:`model_params`), as the MuJoCo task's ``model_params``:
#: friction - nominal, base mass added, base CoM offset (3), link mass factors - 1 (knees, then wheels).
MODEL_PARAM_COLUMNS = {"friction": (0, 1), "base_mass_add": (1, 2), "base_com_offset": (2, 5),
                       "link_mass_scale": (5, 13)}  # fmt: skip


def model_params(env: ManagerBasedRLEnv) -> torch.Tensor:
    """What :class:`randomize_model` drew per env this episode (offsets from nominal; zeros without it)."""
    draws = getattr(env, "_dexwheel_model_params", None)
    if draws is None:
        draws = env._dexwheel_model_params = torch.zeros(env.num_envs, 13, device=env.device)
    return draws


def model_param(env: ManagerBasedRLEnv, column: str) -> torch.Tensor:
    """One privileged domain-randomisation observation (``friction``, ``base_mass_add``, ``base_com_offset``,
    ``link_mass_scale``): the columns of :func:`model_params`, as the MuJoCo task's terms of those names."""
    lo, hi = MODEL_PARAM_COLUMNS[column]
    return model_params(env)[:, lo:hi]


def height_scan(env: ManagerBasedRLEnv, size: tuple[float, float], resolution: float, offset: float,
                asset_cfg: SceneEntityCfg = ROBOT) -> torch.Tensor:  # fmt: skip
    """The MuJoCo task's ``height_scan``: base height minus the ground height at its grid of points (yaw-aligned,
    x-major), minus ``offset``; the same lookup in the same description's raster
    (:func:`dexwheel.tasks.velocity.terrain.scan_heights`, on torch), not ray casts. Its clip and noise are the
    term's (:func:`~dexwheel.isaaclab.tasks.term_map.observation_term`), as on MuJoCo."""
    from dexwheel.tasks.velocity.terrain import TaskTerrain, scan_heights

    terrain = scene_terrain(env, "observations.height_scan")
    data = env.scene[asset_cfg.name].data
    pos, quat = data.root_link_pos_w.torch, data.root_link_quat_w.torch[:, [3, 0, 1, 2]]  # xyzw -> wxyz
    pts = torch.as_tensor(TaskTerrain.scan_pattern(tuple(size), float(resolution)), device=pos.device,
                          dtype=pos.dtype)  # fmt: skip
    return scan_heights(terrain.raster, pos, quat, pts) - offset
