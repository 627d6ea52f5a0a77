"""The velocity task's termination terms, each ``func(task, **params) -> (N,) bool``.

``info["terminated_<term>"]`` says which one ended an episode; the ``is_terminated`` reward reads their union.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dexwheel.tasks import kernels


def illegal_contact(task, bodies: Sequence[str]) -> np.ndarray:
    """A listed body touches the floor: the robot fell onto its base or arms (wheels are meant to touch)."""
    return kernels.count_positive(task.floor_contact, task.body_columns(bodies)) > 0.0


def bad_orientation(task, limit_angle: float) -> np.ndarray:
    """The base tilts past ``limit_angle`` (rad) from upright: past it no policy recovers a wheel-leg base."""
    return task.world_z_in_base[:, 2] < math.cos(limit_angle)
