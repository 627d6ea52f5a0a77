"""The velocity task's compiled arithmetic (numba): the action mapping and the step's weighing and metrics
(the loops its terms share live in :mod:`dexwheel.tasks.kernels`).

The single env (N = 1) and the native vector env run these same kernels over the env axis, so they agree
bit for bit by construction. Sums run left to right and ``exp`` is libm's (``math.exp``), which gives
the same bits on every x86-64 CPU; numpy's SIMD ``exp`` differs in the last bit between CPUs with and
without AVX-512.

Kernels are compiled on first use and cached next to this file (``cache=True``), so only the first
process pays the compile time (a few seconds).
"""

from __future__ import annotations

import math

import numpy as np

from dexwheel.jit import kernel
from dexwheel.tasks.kernels import any_row, weigh_and_sum  # noqa: F401  (any_row: the task reads it here)

#: ``info`` columns between the reward terms and the termination flags (:func:`finish_step`).
METRIC_COLUMNS = (
    "lin_vel_x",
    "ang_vel_z",
    "command_lin_vel_x",
    "command_ang_vel_z",
    "lin_vel_x_error",
    "ang_vel_z_error",
)
Array = np.ndarray


@kernel
def map_actions(actions: Array, clip: bool, scale: Array, offset: Array, action: Array, block: Array) -> int:
    """``actions`` ``(N, A)`` -> ``action`` (float32, clipped to [-1, 1] when ``clip``) and the policy layer.

    ``block`` is the policy buffer ``(5, N, A)`` (rows position, kp, kd, velocity, torque); the first
    ``len(offset)`` columns are knees (position ``offset + scale a``), the rest wheels (velocity
    ``scale a``), computed in float64 from the float32 action and rounded once. Returns -1, or the flat
    index of the first non-finite entry, in which case nothing was written.
    """
    n, a = actions.shape
    for i in range(n):
        for j in range(a):
            if not math.isfinite(actions[i, j]):
                return i * a + j
    nk = offset.shape[0]
    for i in range(n):
        for j in range(a):
            x = actions[i, j]
            if clip:
                x = min(max(x, -1.0), 1.0)
            action[i, j] = x
            y = np.float64(action[i, j]) * scale[j]
            if j < nk:
                block[0, i, j] = y + offset[j]
            else:
                block[3, i, j] = y
    return -1


@kernel
def finish_step(values: Array, coef: Array, reward: Array, commands: Array, lin_vel: Array, ang_vel: Array,
                flags: Array) -> None:  # fmt: skip
    """One step's ``values`` rows, in ``info`` order, and the reward.

    Weighs the reward-term columns (the first ``len(coef)``) in place and sums them, left to right, into
    ``reward``; then :data:`METRIC_COLUMNS` (measured forward velocity and yaw rate, their commands, the
    absolute errors) and the termination ``flags`` as 0.0 / 1.0.
    """
    nr = coef.shape[0]
    m = nr + 6
    for i in range(values.shape[0]):
        v = values[i]
        reward[i] = weigh_and_sum(v, coef)
        vx, wz = lin_vel[i, 0], ang_vel[i, 2]
        v[nr], v[nr + 1], v[nr + 2], v[nr + 3] = vx, wz, commands[i, 0], commands[i, 1]
        v[nr + 4], v[nr + 5] = abs(commands[i, 0] - vx), abs(commands[i, 1] - wz)
        for k in range(flags.shape[1]):
            v[m + k] = 1.0 if flags[i, k] else 0.0
