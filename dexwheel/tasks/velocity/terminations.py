"""The velocity task's termination terms, each ``func(task, **params) -> (N,) bool``.

``info["terminated_<term>"]`` says which one ended an episode; the ``is_terminated`` reward reads their union.
"""

from __future__ import annotations

import math
from typing import Annotated

import numpy as np

from dexwheel.tasks import kernels
from dexwheel.tasks.terms import Check
from dexwheel.tasks.velocity.rewards import Bodies


def illegal_contact(task, bodies: Bodies) -> np.ndarray:
    """A listed body touches the floor: the robot fell onto its base or arms (wheels are meant to touch)."""
    return kernels.count_positive(task.floor_contact, task.body_columns(bodies)) > 0.0


def bad_orientation(task, limit_angle: Annotated[float, Check(gt=0, le=math.pi, unit="rad")]) -> np.ndarray:
    """The base tilts past ``limit_angle`` (rad) from upright: past it no policy recovers a wheel-leg base."""
    return task.world_z_in_base[:, 2] < math.cos(limit_angle)


def terrain_out_of_bounds(task, distance_buffer: Annotated[float, Check(ge=0, unit="m")] = 1.0) -> np.ndarray:
    """The base is within ``distance_buffer`` (m) of the terrain's outer edge (Isaac Lab's
    ``terrain_out_of_bounds``). Why: past the border there is no ground; ending the episode there keeps
    a robot that drove across the grid from falling off it. Flat tasks have no terrain and never end here."""
    terrain = getattr(task, "terrain", None)
    if terrain is None:
        return np.zeros(task.num_envs, dtype=bool)
    xmin, xmax, ymin, ymax = terrain.desc.bounds
    q = task.physics.qpos
    x, y = q[:, 0], q[:, 1]
    b = distance_buffer
    return (x < xmin + b) | (x > xmax - b) | (y < ymin + b) | (y > ymax - b)
