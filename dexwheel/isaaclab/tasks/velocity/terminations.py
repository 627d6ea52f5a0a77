"""Termination terms of the wheel-leg task: leaving the terrain (the MuJoCo task's, :mod:`dexwheel.tasks.velocity.
terminations`), and the record of each step's base position for the step benchmark."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import SceneEntityCfg

from dexwheel.isaaclab.tasks.terms import ROBOT
from dexwheel.isaaclab.tasks.velocity.terrain import scene_terrain


def terrain_out_of_bounds(
    env: ManagerBasedRLEnv, distance_buffer: float, asset_cfg: SceneEntityCfg = ROBOT
) -> torch.Tensor:
    """The MuJoCo task's ``terrain_out_of_bounds``: the base origin within ``distance_buffer`` (m) of the
    description's outer edge (Isaac Lab's term reads a generator config this terrain has not)."""
    xmin, xmax, ymin, ymax = scene_terrain(env, "terminations.out_of_bounds").description.bounds
    p = env.scene[asset_cfg.name].data.root_link_pos_w.torch
    b = distance_buffer
    return (p[:, 0] < xmin + b) | (p[:, 0] > xmax - b) | (p[:, 1] < ymin + b) | (p[:, 1] > ymax - b)


def record_base_position(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = ROBOT) -> torch.Tensor:
    """Never terminates; keeps each env's base origin (world, ``(N, 3)``) after the step's physics and before the
    resets in ``env.dexwheel_base_pos_w`` (the termination terms run there), so a run that judges positions reads
    an ended episode's last position, not its reset's (the step benchmark, :mod:`dexwheel.isaaclab.step_benchmark`)."""
    env.dexwheel_base_pos_w = env.scene[asset_cfg.name].data.root_link_pos_w.torch.clone()
    return torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
