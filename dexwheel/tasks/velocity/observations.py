"""The velocity task's observation terms, each ``func(task, **params) -> (N,) or (N, k)``.

The task writes them, times their ``scale``, into consecutive columns in the table's order: the "policy"
group first (what a deployed policy reads), then the "critic" group when privileged observations are on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any

import numpy as np

from dexwheel.fields import ConfigFieldError
from dexwheel.robots.wheel_leg import LEGS
from dexwheel.tasks.terms import Check
from dexwheel.tasks.velocity.terrain import scan_heights

#: Columns of ``task.model_params``: what domain randomisation drew for each env this episode.
MODEL_PARAM_COLUMNS = {"friction": slice(0, 1), "base_mass_add": slice(1, 2), "base_com_offset": slice(2, 5),
                       "link_mass_scale": slice(5, 5 + 2 * len(LEGS))}  # fmt: skip


def base_ang_vel(task) -> np.ndarray:
    """Base angular velocity (rad/s, base frame)."""
    return task.base_ang_vel


def projected_gravity(task) -> np.ndarray:
    """Gravity's direction in the base frame (upright: (0, 0, -1))."""
    return task.world_z_in_base * -1.0


def velocity_commands(task) -> np.ndarray:
    """The commanded forward velocity (m/s) and yaw rate (rad/s)."""
    return task.commands


def joint_pos_rel(task) -> np.ndarray:
    """Knee angles minus the stance (rad); wheel angles carry no information."""
    return task.knee_pos - task.stance


def joint_vel_rel(task) -> np.ndarray:
    """Knee and wheel velocities (rad/s), task order."""
    return task.joint_vel


def base_lin_vel(task) -> np.ndarray:
    """Base linear velocity (m/s, base frame): privileged, a real robot estimates it."""
    return task.base_lin_vel


def friction(task) -> np.ndarray:
    """Floor friction minus its nominal value (domain randomisation; 0 without)."""
    return task.model_params[:, MODEL_PARAM_COLUMNS["friction"]]


def base_mass_add(task) -> np.ndarray:
    """Mass added to the base (kg)."""
    return task.model_params[:, MODEL_PARAM_COLUMNS["base_mass_add"]]


def base_com_offset(task) -> np.ndarray:
    """The base's centre-of-mass offset (m, x y z)."""
    return task.model_params[:, MODEL_PARAM_COLUMNS["base_com_offset"]]


def link_mass_scale(task) -> np.ndarray:
    """Each arm's and wheel's mass factor minus 1 (knees then wheels)."""
    return task.model_params[:, MODEL_PARAM_COLUMNS["link_mass_scale"]]


def _terrain(task, term: str):
    if getattr(task, "terrain", None) is None:
        raise ValueError(f"{term} reads the terrain, and this task has none; give it one (terrain=..., or the "
                         "Solenopsis-Rough-v0 / M20Legacy-Rough-v0 envs)")  # fmt: skip
    return task.terrain


def height_scan(task, size: Annotated[tuple[float, float], Check(ge=0, unit="m")] = (1.0, 0.6),
                resolution: Annotated[float, Check(gt=0, unit="m")] = 0.1,
                offset: Annotated[float, Check(unit="m")] = 0.28) -> np.ndarray:  # fmt: skip
    """The terrain around the base: base height minus the ground height at a grid of points, minus ``offset``
    (m), as Isaac Lab's ``height_scan``. ~0 on flat ground at the stance height, positive over a dip, negative
    over a rise. Its table entry clips it (``clip``, +-1 m in the rough task) and may add ``noise``, as every
    observation term's (:mod:`dexwheel.tasks.manager`).

    The grid is ``size`` (x, y; m) centred on the base, ``resolution`` apart, turning with the base's yaw but
    not its roll and pitch (Isaac Lab's ``ray_alignment="yaw"``): 1.0 x 0.6 m at 0.1 m (11 x 7 = 77 points,
    x-major) covers the robot (0.71 m base, arms to ~0.9 m) and one 0.5 m tread ahead and behind. Each size
    must be a whole number of ``resolution`` steps: the grid spans exactly ``size``. The heights come from the
    terrain's raster, a direct lookup in the terrain's description (:class:`dexwheel.terrain.HeightRaster`), not
    ray casts: exact on boxes and height fields but within 1 cm of a vertical edge, O(1) per point, and the same
    arithmetic for every env (a single env and a vector env agree bit for bit).
    """
    terrain = _terrain(task, "observations.height_scan")
    pts = terrain.scan_pattern(tuple(size), float(resolution))
    q = task.physics.qpos
    return scan_heights(terrain.raster, q[:, 0:3], q[:, 3:7], pts) - offset


def _check_scan_grid(params: Mapping[str, Any], where: str) -> None:
    """The scan's rule across its parameters: ``size`` is (x, y), each a whole number of ``resolution`` steps, so
    the grid spans exactly the stated extent."""
    size, res = params.get("size", (1.0, 0.6)), params.get("resolution", 0.1)
    if not (isinstance(size, (tuple, list)) and len(size) == 2):
        raise ConfigFieldError(f"{where}.params.size", f"{where}.params.size: expected (x, y) >= 0 m, got {size!r}")
    for axis, v in zip("xy", size, strict=True):
        if abs(v / res - round(v / res)) > 1e-6:
            lower, upper = math.floor(v / res) * res, math.ceil(v / res) * res
            raise ConfigFieldError(f"{where}.params.size", f"{where}.params.size: {axis} = {v:g} m is not a whole "
                                   f"number of resolution steps ({res:g} m): the grid would not span it; use "
                                   f"{lower:g} or {upper:g} m, or a resolution that divides {v:g}")  # fmt: skip


height_scan.check_params = _check_scan_grid  # read by dexwheel.tasks.terms.check_params


def height_scan_mirror(size: tuple[float, float] = (1.0, 0.6), resolution: float = 0.1, **_) -> np.ndarray:
    """The left-right mirror of :func:`height_scan`'s columns (y -> -y: each x row reversed)."""
    nx, ny = (int(round(v / resolution)) + 1 for v in size)
    return np.arange(nx * ny).reshape(nx, ny)[:, ::-1].ravel()
