"""The compiled loops (numba) that the tasks' terms share, one row per env.

Sums run left to right and ``exp`` is libm's (``math.exp``), which gives the same bits on every x86-64
CPU; numpy's pairwise sums and SIMD ``exp`` would change the last bit (between array sizes, and between
CPUs with and without AVX-512). The single env (N = 1) and the native vector envs run the same loops, so
they agree bit for bit by construction.
"""

from __future__ import annotations

import math

import numpy as np

from dexwheel.jit import kernel

Array = np.ndarray


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
def count_positive(x: Array, cols: Array) -> Array:
    """How many of the columns ``cols`` of each row are > 0 (as float64)."""
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        for c in cols:
            if x[i, c] > 0.0:
                out[i] += 1.0
    return out


@kernel
def any_row(flags: Array, out: Array) -> None:
    """``out[i]``: whether any flag of row ``i`` is set."""
    for i in range(flags.shape[0]):
        out[i] = False
        for k in range(flags.shape[1]):
            if flags[i, k]:
                out[i] = True


@kernel
def weigh_and_sum(v: Array, coef: Array) -> float:
    """Row ``v``'s reward-term columns (its first ``len(coef)``) times their weights, in place, and their
    sum, left to right from 0.0: the reward of one env (both tasks' ``finish_step``)."""
    total = 0.0
    for k in range(coef.shape[0]):
        v[k] *= coef[k]
        total += v[k]
    return total


@kernel
def joint_pos_tracking_exp(qpos: Array, active_idx: Array, goal: Array, neg_inv_var: float) -> Array:
    """``exp(sum_k (q_k - goal_k)^2 * neg_inv_var)`` per env over the active joints (``qpos[:, active_idx]``),
    summed left to right; ``neg_inv_var = -1 / (16 std^2)`` makes it ``exp(-mean(err^2) / std^2)``."""
    out = np.empty(qpos.shape[0])
    for i in range(qpos.shape[0]):
        sq = 0.0
        for k in range(active_idx.shape[0]):
            e = qpos[i, active_idx[k]] - goal[i, k]
            sq += e * e
        out[i] = math.exp(sq * neg_inv_var)
    return out


@kernel
def row_dot(a: Array, b: Array) -> Array:
    """``sum_k a[:, k] * b[:, k]`` per row, left to right (``einsum`` picks its order by the CPU's vector width)."""
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[i, k] * b[i, k]
        out[i] = acc
    return out


@kernel
def row_norm(x: Array) -> Array:
    """``|x[i]|`` per row: the square root of :func:`sum_sq`'s left-to-right sum."""
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        acc = 0.0
        for k in range(x.shape[1]):
            acc += x[i, k] * x[i, k]
        out[i] = math.sqrt(acc)
    return out


@kernel
def weigh_rows(values: Array, coef: Array, reward: Array) -> None:
    """:func:`weigh_and_sum` for every row of ``values``: each env's reward-term columns weighed in place (what
    ``info["reward_<term>"]`` reports) and their left-to-right sum into ``reward``."""
    for i in range(values.shape[0]):
        reward[i] = weigh_and_sum(values[i], coef)


@kernel
def box_muller(u1: Array, u2: Array) -> Array:
    """Standard normal numbers from two arrays of uniforms in [0, 1) (Box-Muller; libm's ``log1p`` and ``cos``)."""
    out = np.empty(u1.shape)
    for i in range(u1.shape[0]):
        for k in range(u1.shape[1]):
            out[i, k] = math.sqrt(-2.0 * math.log1p(-u1[i, k])) * math.cos(2.0 * math.pi * u2[i, k])
    return out
