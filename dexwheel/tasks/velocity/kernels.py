"""The velocity task's compiled arithmetic (numba): the action mapping and the loops its terms share.

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

#: ``info`` columns between the reward terms and the termination flags (:func:`tracking_metrics`).
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
def exp_sq_error(target: Array, value: Array, neg_inv_var: float) -> Array:
    """``exp((target - value)^2 * neg_inv_var)`` per env: the tracking kernels' shape (libm ``exp``)."""
    out = np.empty(target.shape[0])
    for i in range(target.shape[0]):
        e = target[i] - value[i]
        out[i] = math.exp(e * e * neg_inv_var)
    return out


@kernel
def sum_sq(x: Array) -> Array:
    """``sum_k x[:, k]^2`` per row, summed left to right (numpy's pairwise sums would change the bits)."""
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        acc = 0.0
        for k in range(x.shape[1]):
            acc += x[i, k] * x[i, k]
        out[i] = acc
    return out


@kernel
def sum_sq_diff(a: Array, b: Array) -> Array:
    """``sum_k (a[:, k] - b[:, k])^2`` per row in float64, left to right (float32 inputs widened first)."""
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        acc = 0.0
        for k in range(a.shape[1]):
            d = np.float64(a[i, k]) - np.float64(b[i, k])
            acc += d * d
        out[i] = acc
    return out


@kernel
def weigh_and_sum(values: Array, coef: Array, reward: Array) -> None:
    """Weigh the first ``len(coef)`` columns of ``values`` in place and put their sum, left to right, in ``reward``."""
    for i in range(values.shape[0]):
        total = 0.0
        for k in range(coef.shape[0]):
            values[i, k] *= coef[k]
            total += values[i, k]
        reward[i] = total


@kernel
def tracking_metrics(commands: Array, lin_vel: Array, ang_vel: Array, out: Array) -> None:
    """``out`` ``(N, 6)``: measured forward velocity and yaw rate, their commands and absolute errors."""
    for i in range(commands.shape[0]):
        vx, wz = lin_vel[i, 0], ang_vel[i, 2]
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = vx, wz, commands[i, 0], commands[i, 1]
        out[i, 4], out[i, 5] = abs(commands[i, 0] - vx), abs(commands[i, 1] - wz)
