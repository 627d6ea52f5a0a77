"""Terrain, described once: a seeded grid of sub-terrain tiles (Isaac Lab's ``TerrainGeneratorCfg`` /
mjlab's terrains) as a backend-neutral list of boxes and height fields, its surface height
(:func:`height_at`), and its MuJoCo build (:mod:`dexwheel.terrain.mujoco`)."""

from dexwheel.terrain.config import (
    ROUGH_SUB_TERRAINS,
    TYPES,
    SubTerrainCfg,
    TerrainCfg,
    make_terrain_cfg,
    validate,
)
from dexwheel.terrain.description import HeightField, HeightRaster, TerrainDescription, height_at
from dexwheel.terrain.generator import column_types, generate

__all__ = [
    "ROUGH_SUB_TERRAINS",
    "TYPES",
    "HeightField",
    "HeightRaster",
    "SubTerrainCfg",
    "TerrainCfg",
    "TerrainDescription",
    "column_types",
    "generate",
    "height_at",
    "make_terrain_cfg",
    "validate",
]
