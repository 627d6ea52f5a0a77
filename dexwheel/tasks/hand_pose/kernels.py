"""The hand-pose task's compiled loops (numba), one row per env.

* :func:`hard_write_advance` (and its threaded twin): a whole hard-write drive step toward the composed
  joint targets (the drive's :func:`~dexwheel.sim.hand_drive.hard_write_env` with its MuJoCo calls), then
  the joint state the terms read. The action is checked and mapped before, by :mod:`dexwheel.control`.
  Its state is one record per env (:func:`task_dtype`), its settings one record
  (:func:`task_params_dtype`): a few arguments, since each costs a kernel call ~0.1 us.
* :func:`finish_step`: weighs and sums the reward terms and fills the step's metrics.

The single env (N = 1) and the native vector env run the same kernels, so they agree bit for bit by
construction. ``exp`` is libm's, the same bits on every x86-64 CPU. Compiled on first use and cached
next to this file.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

import numba
import numpy as np
from numba import prange

from dexwheel.jit import fetch_add, kernel
from dexwheel.sim.hand_drive import hard_write_env
from dexwheel.tasks.kernels import weigh_and_sum

Array = np.ndarray

#: ``info`` columns after the reward terms (and before the termination flags), each with its type: the
#: errors and depth (:func:`finish_step`), then what projection, clipping, goal switching and divergence did.
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
    ("diverged", bool),
)
METRIC_KEYS = tuple(key for key, _ in METRIC_FIELDS)


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
            ("last_action", f8, (action_dim,)),  # the last action scaled to [-1, 1]
            ("qpos", f8, (nfull,)),
            ("qvel", f8, (nfull,)),
            ("elapsed", np.int64),
        ],
        align=True,
    )


@functools.cache
def task_params_dtype(drive: np.dtype | None = None) -> np.dtype:
    """The task's settings for :func:`hard_write_advance`, one record; ``drive``: the drive's settings
    (:func:`~dexwheel.sim.hand_drive.hard_write_params_dtype`), nested as field ``drive``."""
    return np.dtype(
        ([("drive", drive)] if drive is not None else [])
        + [
            ("inv_dt", np.float64),
            ("workers", np.intp),  # worker threads of hard_write_advance_threaded (use_threads sets numba's)
        ],
        align=True,
    )


@kernel
def _advance_env(t: Any, p: Any, command: Array, raw: Array) -> None:
    """One env's hard-write control step: record ``t`` (drive record nested) toward ``command``, the
    composed joint targets of the accepted action ``raw``."""
    s = t.drive
    for k in range(command.shape[0]):
        t.targets[1, k] = command[k]
    for k in range(raw.shape[0]):
        t.raw_action[k] = raw[k]
    hard_write_env(s, p.drive, t.targets[1])
    for k in range(t.qpos.shape[0]):
        t.qvel[k] = (s.full[k] - t.qpos[k]) * p.inv_dt
        t.qpos[k] = s.full[k]
    t.elapsed += 1


@kernel
def hard_write_advance(commands: Array, raws: Array, tasks: Array, params: Array) -> None:
    """One hard-write control step of every env toward its composed joint targets.

    ``commands`` ``(N, 16)`` the composer's targets for the active joints (the action already checked and
    mapped by :mod:`dexwheel.control`); ``raws`` ``(N, A)`` the accepted actions; ``tasks`` one record per
    env (:func:`task_dtype` with the drive's record nested); ``params`` one record
    (:func:`task_params_dtype`, the drive's nested). ``qvel`` is the joint motion of the step divided by
    ``dt`` (the written qvel is 0).
    """
    p = params[0]
    for i in range(commands.shape[0]):
        _advance_env(tasks[i], p, commands[i], raws[i])


@kernel(parallel=True)
def hard_write_advance_threaded(commands: Array, raws: Array, tasks: Array, params: Array) -> None:
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
            _advance_env(tasks[i], params[0], commands[i], raws[i])
            i = fetch_add(taken, 0)


@kernel
def finish_step(values: Array, coef: Array, reward: Array, qpos: Array, active_idx: Array, targets: Array,
                depth: Array, checks: Array, limited: Array, fallback: Array, flags: Array) -> None:  # fmt: skip
    """One step's ``values`` rows (``info`` order) and the reward of every env.

    Weighs the reward-term columns (the first ``len(coef)``) in place and sums them, left to right, into
    ``reward``; then the :data:`METRIC_KEYS` the step measured: the largest and the mean ``|q - goal|``
    and the largest ``|q - command|`` over the active joints (``targets`` ``(N, 2, 16)``: goal, command),
    the deepest contact, what projection did (``checks``/``limited``/``fallback``); and the termination
    ``flags`` as 0.0 / 1.0 after the metrics. Clipping, goal switches and divergence are filled by the task.
    """
    nr, na = coef.shape[0], active_idx.shape[0]
    m = nr + len(METRIC_KEYS)
    for i in range(values.shape[0]):
        v = values[i]
        reward[i] = weigh_and_sum(v, coef)
        worst = 0.0
        abs_sum = 0.0
        worst_cmd = 0.0
        for k in range(na):
            q = qpos[i, active_idx[k]]
            e = abs(q - targets[i, 0, k])
            abs_sum += e
            worst = max(worst, e)
            worst_cmd = max(worst_cmd, abs(q - targets[i, 1, k]))
        v[nr], v[nr + 1], v[nr + 2], v[nr + 3] = worst, abs_sum / na, worst_cmd, depth[i]
        v[nr + 4], v[nr + 5], v[nr + 6] = checks[i], limited[i], 1.0 if fallback[i] else 0.0
        for k in range(flags.shape[1]):
            v[m + k] = 1.0 if flags[i, k] else 0.0


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
