"""The in-hand tasks' termination terms, each ``func(task, **params) -> (N,) bool``."""

from __future__ import annotations

from typing import Annotated

import numpy as np

from dexwheel.tasks import kernels
from dexwheel.tasks.terms import Check


def object_dropped(task, max_distance: Annotated[float, Check(gt=0, unit="m")] = 0.05,
                   min_height: Annotated[float, Check(unit="m")] = -0.02) -> np.ndarray:  # fmt: skip
    """The object left the hand: more than ``max_distance`` from where its episode started, or its centre below
    ``min_height`` relative to its start (off the palm's edge)."""
    offset = task.object_pos - task.object_start
    return (kernels.row_norm(offset) > max_distance) | (offset[:, 2] < min_height)
