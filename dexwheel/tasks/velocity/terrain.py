"""The velocity task's terrain state: the generated terrain (one for all envs) and where each env is on it.

Built once per task from ``cfg.terrain`` (:mod:`dexwheel.terrain`): the description, which the MuJoCo model
holds as static geoms (every env's model has the same terrain), a height raster for the height scan (built
on first use), and per env its level (row), its tile column and its origin (the spawn point of that tile, world
frame). Levels and columns are drawn from each env's own generator at its
first reset (the ``terrain_levels`` event) and again at a seeded one, so a vector env's env ``i`` lands where a
single env with the same seed lands, and a seed repeats its trajectory.

A :class:`~dexwheel.terrain.TerrainDescription` in place of the config is a fixed scene, used as it is (the
step benchmark's, :mod:`dexwheel.protocols.steps`): its origins are the tiles, and there is no curriculum.
"""

from __future__ import annotations

import functools

import numpy as np

from dexwheel.control._xp import namespace
from dexwheel.terrain import HeightRaster, TerrainCfg, TerrainDescription, generate, height_at
from dexwheel.terrain.config import ROBOT_FOOTPRINT_M

#: The height raster's sample spacing (m): the scan reads the nearest sample (:class:`HeightRaster`).
RASTER_RESOLUTION_M = 0.02


class TaskTerrain:
    """The terrain of a task with ``num_envs`` envs (:attr:`level` -1 until an env's first reset)."""

    def __init__(self, cfg: TerrainCfg | TerrainDescription, num_envs: int) -> None:
        if isinstance(cfg, TerrainDescription):  # a fixed scene: its origins as the tiles, no curriculum
            self.cfg, self.desc = TerrainCfg(curriculum=False), cfg
        else:
            self.cfg, self.desc = cfg, generate(cfg)
        self.level = np.full(num_envs, -1, dtype=np.int64)
        self.column = np.zeros(num_envs, dtype=np.int64)
        self.origin = np.zeros((num_envs, 3))

    @functools.cached_property
    def raster(self) -> HeightRaster:
        return HeightRaster(self.desc, RASTER_RESOLUTION_M)

    @property
    def max_init_level(self) -> int:
        top = self.desc.num_rows - 1
        return min(self.cfg.max_init_terrain_level, top) if self.cfg.curriculum else top

    def assign(self, env: int, rng: np.random.Generator) -> None:
        """Env ``env``'s first tile: a level uniform in ``[0, max_init_level]``, a column uniform over the
        columns (so each type in proportion, in expectation). Two draws."""
        self.level[env] = rng.integers(self.max_init_level + 1)
        self.column[env] = rng.integers(self.desc.num_cols)
        self.move(env, int(self.level[env]))

    def forget(self, env: int) -> None:
        """Env ``env`` as before its first reset: its next reset draws its first tile again."""
        self.level[env] = -1

    def move(self, env: int, level: int) -> None:
        self.level[env] = level
        self.origin[env] = self.desc.origins[level, self.column[env]]

    @staticmethod
    @functools.cache
    def scan_pattern(size: tuple[float, float], resolution: float) -> np.ndarray:
        """The scan's points ``(P, 2)`` in the yaw-aligned base frame: a grid of ``size`` (x, y) m centred on the
        base, ``resolution`` apart, x-major (point ``ix * ny + iy``)."""
        nx, ny = (int(round(s / resolution)) + 1 for s in size)
        xs = (np.arange(nx) - (nx - 1) / 2) * resolution
        ys = (np.arange(ny) - (ny - 1) / 2) * resolution
        return np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)


def ground_under(desc: TerrainDescription, x: float, y: float) -> float:
    """The spawn height at ``(x, y)``: the highest surface under the robot's footprint around it (as each tile's
    origin is placed, :func:`~dexwheel.terrain.generate`). Where the MuJoCo task stands a robot placed at a pose
    (:meth:`~dexwheel.tasks.velocity.task.WheelLegTask.place_base`), and the Isaac Lab step benchmark too."""
    s = np.linspace(-ROBOT_FOOTPRINT_M / 2 + 0.01, ROBOT_FOOTPRINT_M / 2 - 0.01, 21)
    sx, sy = np.meshgrid(x + s, y + s, indexing="ij")
    z = height_at(desc, sx, sy)
    return float(np.nanmax(z)) if np.isfinite(z).any() else 0.0


def yaw_heading(quat_wxyz):
    """The cosine and sine ``(N,)`` each of each base's yaw: its x axis projected onto the ground plane (along
    world x where it points straight up). numpy or torch, as :func:`scan_heights` and the climbing teacher read it."""
    xp = namespace(quat_wxyz)
    w, qx, qy, qz = quat_wxyz[:, 0], quat_wxyz[:, 1], quat_wxyz[:, 2], quat_wxyz[:, 3]
    hx, hy = 1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (w * qz + qx * qy)  # the base's x axis, projected
    norm = xp.sqrt(hx * hx + hy * hy)
    flat = norm > 0.0
    c = xp.where(flat, hx / xp.where(flat, norm, 1.0), 1.0)
    s = xp.where(flat, hy / xp.where(flat, norm, 1.0), 0.0)
    return c, s


def scan_heights(raster: HeightRaster, pos, quat_wxyz, pts):
    """Base height minus the ground height (``raster``) at the scan points ``pts`` ``(P, 2)`` around each base:
    ``(N, P)``. ``pos`` ``(N, 3)`` and ``quat_wxyz`` ``(N, 4)`` are the bases' origins and orientations; the
    points turn with each base's yaw, not its roll and pitch (Isaac Lab's ``ray_alignment="yaw"``). One
    implementation for numpy (the MuJoCo task) and torch (the Isaac Lab task)."""
    c, s = yaw_heading(quat_wxyz)
    c, s = c[:, None], s[:, None]
    px, py = pts[:, 0][None], pts[:, 1][None]
    x = pos[:, 0:1] + (c * px - s * py)
    y = pos[:, 1:2] + (s * px + c * py)
    return pos[:, 2:3] - raster.lookup(x, y)
