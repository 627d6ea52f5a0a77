"""The pose task's compiled loop (numba): the step's metrics, one row per env.

The single env (N = 1) and the native vector env run the same kernel, so they agree bit for bit by construction.
Compiled on first use and cached next to this file.
"""

from __future__ import annotations

import numpy as np

from dexwheel.jit import kernel

Array = np.ndarray

#: ``info`` columns after the reward terms, each with its type: the errors and depth, what projection did, then
#: what clipping and goal switching did (:func:`pose_metrics`; the goal switches by the task).
METRIC_FIELDS: tuple[tuple[str, type], ...] = (
    ("tracking_error", float),
    ("mean_joint_error", float),
    ("command_error", float),
    ("max_penetration", float),
    ("projection_checks", int),
    ("projection_limited", int),
    ("projection_fallback", bool),
    ("action_clipped", int),
    ("goal_switched", bool),
)


@kernel
def pose_metrics(block: Array, qpos: Array, active_idx: Array, targets: Array, depth: Array, checks: Array,
                 limited: Array, fallback: Array, clipped: Array) -> None:  # fmt: skip
    """The step's metrics of every env into ``block`` (:data:`METRIC_FIELDS` order but the last): the largest and
    the mean ``|q - goal|`` and the largest ``|q - command|`` over the active joints (``targets`` ``(N, 2, 16)``:
    goal, command), the deepest contact, what projection did (``checks``/``limited``/``fallback``) and how many
    action entries were clipped."""
    na = active_idx.shape[0]
    for i in range(block.shape[0]):
        worst = 0.0
        abs_sum = 0.0
        worst_cmd = 0.0
        for k in range(na):
            q = qpos[i, active_idx[k]]
            e = abs(q - targets[i, 0, k])
            abs_sum += e
            worst = max(worst, e)
            worst_cmd = max(worst_cmd, abs(q - targets[i, 1, k]))
        v = block[i]
        v[0], v[1], v[2], v[3] = worst, abs_sum / na, worst_cmd, depth[i]
        v[4], v[5], v[6], v[7] = checks[i], limited[i], 1.0 if fallback[i] else 0.0, clipped[i]
