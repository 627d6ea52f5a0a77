"""The wheel-leg task's per-step arithmetic, compiled with numba: one loop over the env axis for any N.

The single env (N = 1) and the native vector env run these same kernels, so they agree bit for bit by
construction, and a step costs one call per kernel instead of a few dozen numpy calls on rows of eight
numbers (numpy's per-call cost is what made the step's overhead, not the arithmetic). ``exp`` is libm's
(``math.exp``), which gives the same bits on every x86-64 CPU; numpy's SIMD ``exp`` differs in the last
bit between CPUs with and without AVX-512.

Kernels are compiled on first use and cached next to this file (``cache=True``), so only the first
process pays the compile time (a few seconds).
"""

from __future__ import annotations

import math

import numpy as np

from dexwheel.jit import kernel

#: ``values`` columns after the reward terms, in ``info`` order (the flags are stored as 0.0 / 1.0).
EXTRA_COLUMNS = (
    "lin_vel_x",
    "ang_vel_z",
    "command_lin_vel_x",
    "command_ang_vel_z",
    "lin_vel_x_error",
    "ang_vel_z_error",
    "terminated_contact",
    "terminated_tilt",
)
NUM_TERMS = 9  # REWARD_TERMS, in that order (see rewards_and_observations)
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
def rewards_and_observations(sd: Array, idx: Array, groups: Array, coef: Array, neg_inv_var: Array, cos_tilt: float,
                             commands: Array, action: Array, last_action: Array, values: Array, reward: Array,
                             terminated: Array, obs_src: Array, obs_scale: Array, obs_offset: Array, obs_dst: Array,
                             cols: Array, priv: Array, obs: Array) -> None:  # fmt: skip
    """Reward terms, terminations and the observation of every env from its sensors.

    ``sd`` ``(N, nsensordata)``; ``idx`` the sensor columns the terms read, grouped as
    ``vx, wz | vz, wx, wy, gx, gy, torques... | undesired contacts... | terminal contacts... | zz`` with
    the group ends in ``groups`` (squared, undesired, terminal). Writes ``values`` ``(N, 9 + 8)``
    (weighted terms, then :data:`EXTRA_COLUMNS`), ``reward`` (their sum, left to right), ``terminated``,
    and ``obs``: ``obs[:, obs_dst[k]] = sd[:, obs_src[k]] * obs_scale[k] + obs_offset[k]``, the commands
    at ``cols[0]``, the last action at ``cols[1]`` and ``priv`` at ``cols[2]`` (when >= 0).
    """
    n = sd.shape[0]
    sq_end, und_end, term_end = groups[0], groups[1], groups[2]
    for i in range(n):
        s = sd[i]
        vx, wz = s[idx[0]], s[idx[1]]
        ex, ez = commands[i, 0] - vx, commands[i, 1] - wz
        t = values[i]
        t[0] = math.exp(ex * ex * neg_inv_var[0])
        t[1] = math.exp(ez * ez * neg_inv_var[1])
        t[2] = s[idx[2]] * s[idx[2]]
        t[3] = s[idx[3]] * s[idx[3]] + s[idx[4]] * s[idx[4]]
        t[4] = s[idx[5]] * s[idx[5]] + s[idx[6]] * s[idx[6]]
        acc = 0.0
        for k in range(7, sq_end):
            acc += s[idx[k]] * s[idx[k]]
        t[5] = acc
        acc = 0.0
        for k in range(action.shape[1]):
            d = np.float64(action[i, k]) - np.float64(last_action[i, k])
            acc += d * d
        t[6] = acc
        count = 0
        for k in range(sq_end, und_end):
            if s[idx[k]] > 0.0:
                count += 1
        t[7] = count
        contact = False
        for k in range(und_end, term_end):
            if s[idx[k]] > 0.0:
                contact = True
        tilt = s[idx[term_end]] < cos_tilt
        terminated[i] = contact or tilt
        t[8] = 1.0 if contact or tilt else 0.0
        total = 0.0
        for k in range(NUM_TERMS):
            t[k] *= coef[k]
            total += t[k]
        reward[i] = total
        e = NUM_TERMS
        t[e], t[e + 1], t[e + 2], t[e + 3] = vx, wz, commands[i, 0], commands[i, 1]
        t[e + 4], t[e + 5], t[e + 6], t[e + 7] = abs(ex), abs(ez), contact, tilt

        _observe(s, commands[i], action[i], priv[i], obs_src, obs_scale, obs_offset, obs_dst, cols, obs[i])


@kernel
def observations(sd: Array, commands: Array, last_action: Array, obs_src: Array, obs_scale: Array, obs_offset: Array,
                 obs_dst: Array, cols: Array, priv: Array, obs: Array) -> None:  # fmt: skip
    """The observation part of :func:`rewards_and_observations` alone (resets, command changes)."""
    for i in range(sd.shape[0]):
        _observe(sd[i], commands[i], last_action[i], priv[i], obs_src, obs_scale, obs_offset, obs_dst, cols, obs[i])


@kernel
def _observe(s: Array, command: Array, last_action: Array, priv: Array, obs_src: Array, obs_scale: Array,
             obs_offset: Array, obs_dst: Array, cols: Array, o: Array) -> None:  # fmt: skip
    """One env's observation row ``o`` (see :func:`rewards_and_observations`)."""
    for k in range(obs_src.shape[0]):
        o[obs_dst[k]] = s[obs_src[k]] * obs_scale[k] + obs_offset[k]
    o[cols[0]], o[cols[0] + 1] = command[0], command[1]
    for k in range(last_action.shape[0]):
        o[cols[1] + k] = last_action[k]
    if cols[2] >= 0:
        for k in range(priv.shape[0]):
            o[cols[2] + k] = priv[k]
