"""The G20 task's per-step arithmetic after the drive, compiled with numba: one loop over the env axis.

The single env (N = 1) and the native vector env run the same kernel, so they agree bit for bit by
construction; one call replaces the two dozen numpy calls (each costing more than its 16-element
arithmetic) that made most of a step's overhead. ``exp`` is libm's, the same bits on every x86-64 CPU.
Compiled on first use and cached next to this file.
"""

from __future__ import annotations

import math

import numpy as np

from dexwheel.jit import kernel

#: ``values`` columns, in ``info`` order: the reward terms (REWARD_TERMS), then the errors and depth.
VALUE_KEYS = (
    "reward_joint_pos_tracking",
    "reward_penetration",
    "reward_action_rate_l2",
    "tracking_error",
    "mean_joint_error",
    "command_error",
    "max_penetration",
)
Array = np.ndarray


@kernel
def rewards_and_observations(qpos: Array, qvel: Array, targets: Array, active_idx: Array, raw: Array,
                             last_norm: Array, norm_sub: Array, norm_div: Array, norm_one: float, depth: Array,
                             weights: Array, values: Array, reward: Array, obs: Array) -> None:  # fmt: skip
    """Reward terms, tracking errors and the observation of every env after its drive step.

    ``qpos``/``qvel`` ``(N, 21)``; ``targets`` ``(N, 2, 16)`` goal and command; ``raw`` the accepted
    action ``(N, A)``, normalised as ``(raw - norm_sub) / norm_div - norm_one`` into ``last_norm`` (in
    place, after the action-rate term has read the previous one); ``depth`` the step's deepest contact.
    ``weights``: ``-1 / (16 std^2)``, tracking weight, ``-penetration_weight``, ``-action_rate_weight``.
    Writes ``values`` (:data:`VALUE_KEYS`), ``reward`` (the terms' sum, in order) and ``obs``
    ``[qpos, qvel, goal, normalised action]`` (float32).
    """
    na, nf, a = active_idx.shape[0], qpos.shape[1], raw.shape[1]
    for i in range(qpos.shape[0]):
        sq = 0.0
        abs_sum = 0.0
        worst = 0.0
        worst_cmd = 0.0
        for k in range(na):
            q = qpos[i, active_idx[k]]
            e = q - targets[i, 0, k]
            sq += e * e
            abs_sum += abs(e)
            worst = max(worst, abs(e))
            worst_cmd = max(worst_cmd, abs(q - targets[i, 1, k]))
        rate = 0.0
        for k in range(a):
            x = (raw[i, k] - norm_sub[k]) / norm_div[k] - norm_one
            d = x - last_norm[i, k]
            rate += d * d
            last_norm[i, k] = x
        r_track = math.exp(sq * weights[0]) * weights[1]
        r_pen = 0.0 + depth[i] * weights[2]  # +0.0 without contact, not -0.0
        r_rate = rate * weights[3]
        reward[i] = r_track + r_pen + r_rate
        v = values[i]
        v[0], v[1], v[2] = r_track, r_pen, r_rate
        v[3], v[4], v[5], v[6] = worst, abs_sum / na, worst_cmd, depth[i]
        o = obs[i]
        for k in range(nf):
            o[k] = qpos[i, k]
            o[nf + k] = qvel[i, k]
        for k in range(na):
            o[2 * nf + k] = targets[i, 0, k]
        for k in range(a):
            o[2 * nf + na + k] = last_norm[i, k]
