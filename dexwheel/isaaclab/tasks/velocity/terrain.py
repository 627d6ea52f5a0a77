"""The scene's dexwheel terrain as the rough task's terms read it (built by :mod:`dexwheel.isaaclab.terrain`)."""

from __future__ import annotations

from isaaclab.envs import ManagerBasedRLEnv

from dexwheel.isaaclab.terrain import DescriptionTerrainImporter


def scene_terrain(env: ManagerBasedRLEnv, term: str) -> DescriptionTerrainImporter:
    """The scene's terrain, or refuse ``term`` (a config key) on a scene without one (a flat task)."""
    terrain = env.scene.terrain
    if not isinstance(terrain, DescriptionTerrainImporter):
        raise ValueError(f"{term} reads the dexwheel terrain, and this scene has none (a task with terrain=...)")
    return terrain
