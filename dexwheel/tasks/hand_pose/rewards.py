"""The hand-pose task's reward terms (mjlab names), each ``func(task, **params) -> (N,)``.

``task`` is the batched :class:`~dexwheel.tasks.hand_pose.task.G20HandTask`; the terms read its named
state (``qpos``, ``goal``, ``depth``, ``action``, ``last_action``, ...). The task multiplies each by its
weight and sums them in the table's order (:data:`~dexwheel.tasks.hand_pose.config.REWARDS`).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from dexwheel.tasks import kernels
from dexwheel.tasks.terms import Check


def joint_pos_tracking_exp(task, std: Annotated[float, Check(gt=0)]) -> np.ndarray:
    """``exp(-mean((q - goal)^2) / std^2)`` over the active joints: 1 at the goal. A wide ``std`` pulls
    from afar and is flat near the goal (0.97 at 0.05 rad for 0.3); a narrow one still pulls there (0.78 for
    0.1), so the default table pairs them, as mjlab's and Isaac Lab's coarse + fine tracking terms do."""
    return kernels.joint_pos_tracking_exp(task.qpos, task.active_idx, task.goal, -1.0 / (len(task.active_idx) * std**2))


def max_penetration(task) -> np.ndarray:
    """The deepest contact (m) between the hand's bodies (PD: over the control step's physics steps);
    hard-write projection keeps it below its tolerance, PD contacts are real."""
    return task.depth
