"""The rough task's terrain curriculum (the MuJoCo task's ``terrain_levels`` event)."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import ManagerTermBase, SceneEntityCfg

from dexwheel.isaaclab.tasks.terms import ROBOT, env_index
from dexwheel.isaaclab.tasks.velocity.terrain import scene_terrain


class terrain_levels(ManagerTermBase):
    """The MuJoCo task's ``terrain_levels`` event as a curriculum term (Isaac Lab runs curricula first at a
    reset, before the reset events, as the MuJoCo event runs on the ending episode): Isaac Lab's
    ``terrain_levels_vel`` rule with the description's tile size. ``distance`` is the base origin's horizontal
    distance from its env origin; promote when ``distance > size_x / 2``, else demote when ``distance <
    |command (vx, vy)| * episode_length_s / 2``; past the top row a uniformly drawn level, level 0 stays 0
    (the importer's :meth:`update_env_origins`). An env's first reset only places it (the importer drew its
    tile), as the MuJoCo event's first reset draws it."""

    def __init__(self, cfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self._started = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)

    def __call__(self, env: ManagerBasedRLEnv, env_ids, command_name: str, asset_cfg: SceneEntityCfg = ROBOT):
        terrain = scene_terrain(env, "events.terrain_levels")
        ids = env_index(env_ids, env.num_envs, env.device)
        ids = ids[self._started[ids]]
        self._started[env_index(env_ids, env.num_envs, env.device)] = True
        if len(ids):
            p = env.scene[asset_cfg.name].data.root_link_pos_w.torch[ids, :2]
            distance = torch.linalg.norm(p - env.scene.env_origins[ids, :2], dim=1)
            command = env.command_manager.get_command(command_name)[ids, :2]
            up = distance > terrain.description.tile_size[0] / 2
            down = ~up & (distance < torch.linalg.norm(command, dim=1) * env.max_episode_length_s * 0.5)
            terrain.update_env_origins(ids, up, down)
        return torch.mean(terrain.terrain_levels.float())
