"""The velocity task's compiled arithmetic (numba): the action mapping and the step's metrics (the loops its terms
share live in :mod:`dexwheel.tasks.kernels`).

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

#: ``info`` columns after the reward terms (:func:`tracking_metrics`).
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
def tracking_metrics(block: Array, commands: Array, lin_vel: Array, ang_vel: Array) -> None:
    """The step's :data:`METRIC_COLUMNS` of every env into ``block`` ``(N, 6+)``: the measured forward velocity and
    yaw rate, their commands, the absolute errors."""
    for i in range(block.shape[0]):
        v = block[i]
        vx, wz = lin_vel[i, 0], ang_vel[i, 2]
        v[0], v[1], v[2], v[3] = vx, wz, commands[i, 0], commands[i, 1]
        v[4], v[5] = abs(commands[i, 0] - vx), abs(commands[i, 1] - wz)
