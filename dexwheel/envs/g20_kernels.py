"""The G20 task's per-step arithmetic, compiled with numba: one loop over the env axis.

The single env (N = 1) and the native vector env run the same kernels, so they agree bit for bit by
construction; one call replaces the dozens of numpy calls (each costing more than its 16-element
arithmetic) that made most of a step's overhead. ``exp`` is libm's, the same bits on every x86-64 CPU.
Compiled on first use and cached next to this file.

* :func:`rewards_and_observations`: after a drive step (the PD drive).
* :func:`hard_write_advance`: a whole hard-write control step toward the composed joint targets (the
  drive's :func:`~dexwheel.sim.hand_drive.hard_write_env` with its MuJoCo calls, rewards, observation,
  truncation) in one call; the action is checked and mapped before, by :mod:`dexwheel.control`. Its state is one record per env (:func:`task_dtype`), its settings one
  record (:func:`task_params_dtype`): a few arguments, since each costs a kernel call ~0.1 us.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from typing import Any

import numba
import numpy as np
from numba import prange

from dexwheel.jit import fetch_add, kernel
from dexwheel.sim.hand_drive import hard_write_env

#: A step's ``info``, in order, each key with its type: the reward terms (in the order they are summed),
#: the errors and depth, then what projection, clipping, goal switching and divergence did. Each env keeps
#: the values as one float64 row of its record (counts and flags are exact there); this table is the one
#: place that names them: the single env's dict, the vector env's arrays and reset infos derive from it.
INFO_FIELDS: tuple[tuple[str, type], ...] = (
    ("reward_joint_pos_tracking", float),
    ("reward_joint_pos_tracking_fine", float),
    ("reward_penetration", float),
    ("reward_action_rate_l2", float),
    ("tracking_error", float),
    ("mean_joint_error", float),
    ("command_error", float),
    ("max_penetration", float),
    ("projection_checks", int),
    ("projection_limited", int),
    ("projection_fallback", bool),
    ("action_clipped", int),
    ("goal_switched", bool),
    ("diverged", bool),
)
INFO_KEYS = tuple(key for key, _ in INFO_FIELDS)
# the kernels' column numbers (module constants: numba compiles them in)
R_TRACKING, R_FINE, R_PENETRATION, R_ACTION_RATE, TRACKING_ERROR, MEAN_ERROR, COMMAND_ERROR, MAX_PENETRATION = (
    INFO_KEYS.index(k) for k in INFO_KEYS[:8]
)
CHECKS, LIMITED, FALLBACK, CLIPPED, SWITCHED, DIVERGED = (
    INFO_KEYS.index(k) for k in ("projection_checks", "projection_limited", "projection_fallback", "action_clipped",
                                 "goal_switched", "diverged")
)  # fmt: skip
_TYPES = tuple(kind for _, kind in INFO_FIELDS)
_DTYPES = {float: np.float64, int: np.int64, bool: np.bool_}


def info_dict(row: list[float]) -> dict[str, Any]:
    """One env's info from its row (``tolist()``), each value as its key's type."""
    return {key: kind(v) for key, kind, v in zip(INFO_KEYS, _TYPES, row, strict=True)}


def info_arrays(block: np.ndarray) -> dict[str, np.ndarray]:
    """A vector step's info from its ``(len(INFO_KEYS), N)`` block: a row per key, as the key's dtype."""
    rows = zip(INFO_FIELDS, block, strict=True)
    return {key: row if kind is float else row.astype(_DTYPES[kind]) for (key, kind), row in rows}


def zero_info(n: int) -> dict[str, np.ndarray]:
    """``n`` envs' info of all zeros (False), each key in its dtype: what a reset info starts from."""
    return {key: np.zeros(n, dtype=_DTYPES[kind]) for key, kind in INFO_FIELDS}


@kernel
def gather_results(tasks: Array, block: Array, truncated: Array) -> int:
    """Copy every env's info row and reward into ``block`` (``(len(INFO_KEYS) + 1, N)``, one column per
    env, the reward last) and its ``truncated`` flag; returns how many envs were truncated: the episodes
    that ended (pose tracking never terminates).

    Each env's step writes its own record (a thread never writes next to another's results); this one
    serial pass lays the results out so that a vector step hands them out as rows of one copy.
    """
    ended = 0
    nk = block.shape[0] - 1
    for i in range(tasks.shape[0]):
        t = tasks[i]
        for k in range(nk):
            block[k, i] = t.info[k]
        block[nk, i] = t.reward
        truncated[i] = t.truncated
        ended += t.truncated
    return ended


Array = np.ndarray


@functools.cache  # one dtype object per shape: numba types records fast only for a dtype it has seen
def task_dtype(nactive: int, nfull: int, action_dim: int, drive: np.dtype | None = None) -> np.dtype:
    """One env's task state, a record (the task's arrays are views of these fields); ``drive``: the
    drive's own record (:func:`~dexwheel.sim.hand_drive.hard_write_dtype`), nested as field ``drive``."""
    f8 = np.float64
    return np.dtype(
        ([("drive", drive)] if drive is not None else [])
        + [
            ("targets", f8, (2, nactive)),  # [goal, command]: both tracking errors from one block
            ("raw_action", f8, (action_dim,)),  # the last accepted action, in its own units
            ("last_norm", f8, (action_dim,)),  # the same scaled to [-1, 1]
            ("qpos", f8, (nfull,)),
            ("qvel", f8, (nfull,)),
            ("info", f8, (len(INFO_KEYS),)),
            ("reward", f8),
            ("elapsed", np.int64),
            ("truncated", np.bool_),
        ],
        align=True,
    )


@functools.cache
def task_params_dtype(nactive: int, drive: np.dtype | None = None) -> np.dtype:
    """The task's settings for :func:`hard_write_advance`, one record; ``drive``: the drive's settings
    (:func:`~dexwheel.sim.hand_drive.hard_write_params_dtype`), nested as field ``drive``."""
    f8, ip = np.float64, np.intp
    return np.dtype(
        ([("drive", drive)] if drive is not None else [])
        + [
            ("active_idx", ip, (nactive,)),
            ("weights", f8, (6,)),  # see rewards_and_observations
            ("inv_dt", f8),
            ("max_steps", np.int64),  # truncate after this many steps (0: never)
            ("workers", ip),  # worker threads of hard_write_advance_threaded (use_threads sets numba's)
        ],
        align=True,
    )


@kernel
def _reward_and_observation(qpos: Array, qvel: Array, targets: Array, active_idx: Array, norm: Array,
                            last_norm: Array, depth: float, weights: Array, info: Array, obs: Array) -> float:  # fmt: skip
    """One env's reward terms, errors and observation (see :func:`rewards_and_observations`); returns the reward."""
    na, nf, a = active_idx.shape[0], qpos.shape[0], norm.shape[0]
    sq = 0.0
    abs_sum = 0.0
    worst = 0.0
    worst_cmd = 0.0
    for k in range(na):
        q = qpos[active_idx[k]]
        e = q - targets[0, k]
        sq += e * e
        abs_sum += abs(e)
        worst = max(worst, abs(e))
        worst_cmd = max(worst_cmd, abs(q - targets[1, k]))
    rate = 0.0
    for k in range(a):
        x = norm[k]
        d = x - last_norm[k]
        rate += d * d
        last_norm[k] = x
    r_track = math.exp(sq * weights[0]) * weights[1]
    r_fine = math.exp(sq * weights[2]) * weights[3]
    r_pen = 0.0 + depth * weights[4]  # +0.0 without contact, not -0.0
    r_rate = rate * weights[5]
    info[R_TRACKING], info[R_FINE], info[R_PENETRATION], info[R_ACTION_RATE] = r_track, r_fine, r_pen, r_rate
    info[TRACKING_ERROR], info[MEAN_ERROR], info[COMMAND_ERROR] = worst, abs_sum / na, worst_cmd
    info[MAX_PENETRATION] = depth
    for k in range(nf):
        obs[k] = qpos[k]
        obs[nf + k] = qvel[k]
    for k in range(na):
        obs[2 * nf + k] = targets[0, k]
    for k in range(a):
        obs[2 * nf + na + k] = last_norm[k]
    return r_track + r_fine + r_pen + r_rate


@kernel
def rewards_and_observations(qpos: Array, qvel: Array, targets: Array, active_idx: Array, norm: Array,
                             last_norm: Array, depth: Array, weights: Array, infos: Array, reward: Array,
                             obs: Array) -> None:  # fmt: skip
    """Reward terms, tracking errors and the observation of every env after its drive step.

    ``qpos``/``qvel`` ``(N, 21)``; ``targets`` ``(N, 2, 16)`` goal and command; ``norm`` the accepted
    action scaled to [-1, 1] (:meth:`~dexwheel.envs.g20_hand.G20ActionMap.normalize`), copied into
    ``last_norm`` after the action-rate term has read the previous one; ``depth`` the step's deepest contact.
    ``weights``: ``-1 / (16 std^2)``, tracking weight, the same two of the fine term, ``-penetration_weight``,
    ``-action_rate_weight``.
    Writes ``infos`` (the reward, error and depth columns of :data:`INFO_KEYS`), ``reward`` (the terms' sum, in order) and ``obs``
    ``[qpos, qvel, goal, normalised action]`` (float32).
    """
    for i in range(qpos.shape[0]):
        reward[i] = _reward_and_observation(qpos[i], qvel[i], targets[i], active_idx, norm[i], last_norm[i], depth[i],
                                            weights, infos[i], obs[i])  # fmt: skip


@kernel
def _advance_env(t: Any, p: Any, command: Array, raw: Array, norm: Array, obs: Array) -> None:
    """One env's hard-write control step: record ``t`` (drive record nested) toward ``command``, the
    composed joint targets of the accepted action ``raw`` (``norm``: scaled to [-1, 1])."""
    s = t.drive
    for k in range(command.shape[0]):
        t.targets[1, k] = command[k]
    for k in range(raw.shape[0]):
        t.raw_action[k] = raw[k]
    hard_write_env(s, p.drive, t.targets[1])
    for k in range(t.qpos.shape[0]):
        t.qvel[k] = (s.full[k] - t.qpos[k]) * p.inv_dt
        t.qpos[k] = s.full[k]
    t.reward = _reward_and_observation(t.qpos, t.qvel, t.targets, p.active_idx, norm, t.last_norm, s.depth, p.weights,
                                       t.info, obs)  # fmt: skip
    t.info[CHECKS], t.info[LIMITED], t.info[FALLBACK] = s.checks, s.limited, s.fallback
    t.elapsed += 1
    t.truncated = p.max_steps > 0 and t.elapsed >= p.max_steps


@kernel
def hard_write_advance(commands: Array, raws: Array, norms: Array, tasks: Array, params: Array, obs: Array) -> None:
    """One hard-write control step of every env toward its composed joint targets.

    ``commands`` ``(N, 16)`` the composer's targets for the active joints (the action already checked and
    mapped by :mod:`dexwheel.control`); ``raws`` ``(N, A)`` the accepted actions, ``norms`` the same scaled
    to [-1, 1]; ``tasks`` one record per env (:func:`task_dtype` with the drive's record nested);
    ``params`` one record (:func:`task_params_dtype`, the drive's nested); ``obs`` ``(N, D)`` float32.
    ``qvel`` is the joint motion of the step divided by ``dt`` (the written qvel is 0).
    """
    p = params[0]
    for i in range(commands.shape[0]):
        _advance_env(tasks[i], p, commands[i], raws[i], norms[i], obs[i])


@kernel(parallel=True)
def hard_write_advance_threaded(commands: Array, raws: Array, norms: Array, tasks: Array, params: Array,
                                obs: Array) -> None:  # fmt: skip
    """:func:`hard_write_advance` with the envs spread over numba's worker threads (see
    :func:`use_threads`).

    Collision projection makes env costs uneven (an env in contact may bisect a dozen trials per
    joint while another does one check), so the envs are not split in advance: each worker takes the
    next env from a shared counter, so a busy env does not hold up the envs queued behind it.
    Each env has its own MjData and touches nothing of another's, so the result is the serial one,
    bit for bit, whatever the thread count and order.
    """
    n = commands.shape[0]
    taken = np.zeros(1, dtype=np.int64)  # envs handed out so far
    for _ in prange(min(params[0].workers, n)):  # one iteration per worker thread
        i = fetch_add(taken, 0)
        while i < n:  # no record variable crosses into the loop: numba cannot pass one in
            _advance_env(tasks[i], params[0], commands[i], raws[i], norms[i], obs[i])
            i = fetch_add(taken, 0)


_thread_settings = threading.local()
# GNU OpenMP's worker pool does not survive fork(): numba ends a forked child at its first parallel
# call if the parent had started the pool. Such a child steps its envs on its own thread instead.
_pool = {"started": False, "forked": False}
os.register_at_fork(after_in_child=lambda: _pool.update(forked=_pool["started"]))


def threads_usable() -> bool:
    """Whether this process may run the threaded kernel (not a fork of a process whose OpenMP pool ran)."""
    if _pool["forked"] and numba.threading_layer() == "omp":
        return False
    _pool["started"] = True
    return True


def use_threads(num_threads: int) -> None:
    """numba's thread count for the calling thread's parallel kernels. It is a setting of the calling
    thread and costs about 1 us to set, so it is set only when it changes (a call from inside a kernel
    would make the kernel uncacheable)."""
    if getattr(_thread_settings, "num_threads", None) != num_threads:
        numba.set_num_threads(num_threads)
        _thread_settings.num_threads = num_threads
