"""The hand-pose task's observation terms, each ``func(task, **params) -> (N,) or (N, k)``.

The task writes them, times their ``scale``, as float32 into consecutive columns in the table's order;
``env.obs_slices`` names the columns by term.
"""

from __future__ import annotations

import numpy as np


def goal_pose(task) -> np.ndarray:
    """The goal of the 16 active joints (rad, ``ACTIVE_JOINTS`` order): the task's command."""
    return task.goal
