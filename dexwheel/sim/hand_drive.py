"""Drives for a batch of MjData: kinematic hard-write and PD through position actuators (vendor bridge §5.2).

Both drives step ``N`` independent MjData (one per env; ``N = 1`` for a single env) and take the
commanded active-joint positions as an ``(N, nactive)`` array:

* :class:`HardWriteDrive` (the vendor bridge's default): slew toward the command, optional collision
  projection, write qpos (mimic joints completed) and the matching ctrl, ``qvel = 0``, one
  ``mj_forward``. No ``mj_step``. One step is one physics step of length ``dt``, compiled whole,
  MuJoCo calls included (:func:`hard_write_env` per env, on worker threads for several).
* :class:`PDDrive` (``--pd-drive``): the slewed targets (mimic joints coupled: ``ratio * source``)
  go into the position actuators of all joints and ``mj_step`` runs ``nsub`` times per call.

The PD targets of all envs come from one compiled loop, and several envs' PD steps run in one
``mujoco.batch.Batch`` call on its C++ thread pool. Each env is computed by the same arithmetic
whatever ``N`` and the thread count are, so a batch reproduces single envs bit for bit.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Sequence
from typing import Any

import mujoco
import numba
import numpy as np
from numba import prange

from dexwheel.control.coupling import MimicCompletion, complete_into
from dexwheel.jit import compiled_for, fetch_add, kernel
from dexwheel.sim.divergence import DivergenceMonitor
from dexwheel.sim.mujoco_c import (
    CTRL,
    DATA,
    GEOM_XMAT,
    GEOM_XPOS,
    QPOS,
    QVEL,
    SENSORDATA,
    STATE_TIME,
    XANCHOR,
    XAXIS,
    data_addresses,
    f64_array,
    mj_forward,
    mj_setState,
)
from dexwheel.sim.physics import BatchPhysics
from dexwheel.sim.projection import (
    CollisionProjector,
    contact_depth,
    deepest_contact_adr,
    project_pose,
    sensor_depth,
)
from dexwheel.sim.slew import slew_budget, slew_toward
from dexwheel.sim.snapshot import PartOfTask


def default_threads(num_envs: int) -> int:
    """Worker threads for ``num_envs`` envs: one per core, never more than the envs."""
    return max(1, min(num_envs, os.cpu_count() or 1))


class _BatchDrive(PartOfTask):
    """What both hand drives share: the model, one MjData per env, the joint/actuator index maps and ``q``,
    the slew state ``(N, nactive)``. Both implement :class:`dexwheel.sim.drive.Drive`: ``step(targets)`` with
    ``targets`` the ``(N, nactive)`` commanded active-joint positions."""

    def __init__(
        self,
        model: mujoco.MjModel,
        datas: Sequence[mujoco.MjData],
        coupling: MimicCompletion,
        qpos_adr: np.ndarray,
        ctrl_idx: np.ndarray,
        models: Sequence[mujoco.MjModel] | None = None,
    ) -> None:
        self.model = model
        self.datas = list(datas)
        self.num_envs = len(self.datas)
        #: Env ``i`` runs on ``models[i]``: ``model`` for every env, or copies of it that a task randomises.
        self.models = list(models) if models is not None else [model] * self.num_envs
        self.coupling = coupling
        self.qpos_adr = np.asarray(qpos_adr, dtype=np.intp)
        self.ctrl_idx = np.asarray(ctrl_idx, dtype=np.intp)
        # The G20 (and most fixed-base hands) store the joints as all of qpos/ctrl in order: plain copies.
        self._qpos_whole = model.nq == coupling.nfull and bool(np.array_equal(self.qpos_adr, np.arange(model.nq)))
        self._ctrl_whole = model.nu == coupling.nfull and bool(np.array_equal(self.ctrl_idx, np.arange(model.nu)))
        #: Deepest active penetration (m) per env after the last write/step.
        self.depth = np.zeros(self.num_envs)

    def _write(self, d: mujoco.MjData, full: np.ndarray) -> None:
        if self._qpos_whole:
            d.qpos[:] = full
        else:
            d.qpos[self.qpos_adr] = full
        if self._ctrl_whole:
            d.ctrl[:] = full
        else:
            d.ctrl[self.ctrl_idx] = full

    def sync_data(self, i: int) -> mujoco.MjData:
        """Env ``i``'s MjData at its current state (for rendering)."""
        return self.datas[i]

    def set_pose(self, i: int, full: np.ndarray) -> None:
        """Put env ``i`` at rest in pose ``full`` with matching actuator targets (episode start)."""
        d = self.datas[i]
        self._write(d, full)
        d.qvel[:] = 0.0
        mujoco.mj_forward(self.models[i], d)
        self.depth[i] = contact_depth(d)


@functools.cache  # one dtype object per shape: numba types records fast only for a dtype it has seen
def hard_write_dtype(nactive: int, nfull: int) -> np.dtype:
    """One env's hard-write state, a record (the drive keeps one per env; fields are its arrays)."""
    f8, i8 = np.float64, np.int64
    return np.dtype(
        [
            ("q", f8, (nactive,)),  # the applied pose (active joints): the slew state
            ("full", f8, (nfull,)),  # the written pose, mimic joints completed
            ("qvel", f8, (nfull,)),  # the last step's motion of ``full`` over dt (the written qvel is 0)
            ("last_safe", f8, (nactive,)),  # the last pose known not to penetrate
            ("stalled_cand", f8, (nactive,)),  # the candidate whose projection was a fixed point
            ("candidate", f8, (nactive,)),  # scratch: the slewed command
            ("scratch", f8, (nfull,)),  # scratch: projection trials
            ("time", f8),
            ("depth", f8),  # deepest penetration (m) after the last write
            ("checks", i8),
            ("limited", i8),
            ("fallback", np.bool_),
            ("safe", np.bool_),  # the current pose is known not to penetrate
            ("stalled", np.bool_),
            ("addr", np.intp, (XAXIS + 1,)),  # mujoco_c.data_addresses
        ],
        align=True,
    )


def hard_write_sizes(coupling: MimicCompletion, projector: CollisionProjector) -> tuple[int, ...]:
    """``(nactive, nfull, nmimic, npairs, nmovers, nmover_geoms)``: what :func:`hard_write_params_dtype`
    is shaped by."""
    movers = projector.movers
    return (coupling.nactive, coupling.nfull, int(coupling.mimic_idx.size), len(projector.pairs), len(movers[1]),
            len(movers[4]))  # fmt: skip


@functools.cache
def hard_write_params_dtype(nactive: int, nfull: int, nmimic: int, npairs: int, nmovers: int,
                            nmover_geoms: int) -> np.dtype:  # fmt: skip
    """What every env's hard-write step shares: the model and the drive's settings, as one record."""
    na, nf, nm, npr = nactive, nfull, nmimic, npairs
    ip, f8 = np.intp, np.float64
    return np.dtype(
        [
            ("model", ip),
            ("nq", ip),
            ("nv", ip),
            ("nu", ip),
            ("nsensordata", ip),
            ("ngeom", ip),
            ("njnt", ip),
            ("dt", f8),
            ("inv_dt", f8),
            ("workers", ip),  # worker threads of the threaded step (use_threads sets numba's)
            ("step", f8, (na,)),  # slew: largest move per step of each active joint (inf: jump)
            ("project", np.bool_),
            ("tol", f8),
            ("iters", ip),
            ("group_free", np.bool_),
            ("sensor_adr", ip, (na + 1,)),  # CollisionProjector.sensor_adr
            ("pair_start", ip, (na + 1,)),  # CollisionProjector.pair_start, .pairs, .pair_reach
            ("pairs", ip, (npr, 2)),
            ("pair_reach", f8, (npr,)),
            # CollisionProjector.movers
            ("mover_start", ip, (na + 1,)),
            ("mover_full", ip, (nmovers,)),
            ("mover_jnt", ip, (nmovers,)),
            ("mover_geom_start", ip, (nmovers + 1,)),
            ("mover_geoms", ip, (nmover_geoms,)),
            ("qpos_adr", ip, (nf,)),
            ("ctrl_idx", ip, (nf,)),
            # MimicCompletion.arrays
            ("active_idx", ip, (na,)),
            ("mimic_idx", ip, (nm,)),
            ("mimic_src", ip, (nm,)),
            ("mimic_ratio", f8, (nm,)),
            ("full_lower", f8, (nf,)),
            ("full_upper", f8, (nf,)),
        ],
        align=True,
    )


class HardWriteDrive(_BatchDrive):
    """Kinematic drive: slew, project, write qpos/ctrl, ``qvel = 0``, ``mj_forward``: one compiled call for every
    env's control step, MuJoCo calls included.

    The per-env state is one record per env (``state``, :func:`hard_write_dtype`) and the settings one record
    (``params``, :func:`hard_write_params_dtype`); ``q`` (the applied pose), ``qpos`` (the written pose, mimic joints
    completed), ``qvel`` (its motion over the last step divided by ``dt``), ``depth`` and ``safe`` are views of their
    fields. Several envs run on ``num_threads`` worker threads (:func:`_hard_write_threaded`), each env computed by
    the same arithmetic, so the result is the serial one bit for bit.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        datas: Sequence[mujoco.MjData],
        coupling: MimicCompletion,
        qpos_adr: np.ndarray,
        ctrl_idx: np.ndarray,
        *,
        slew_rad_s: float,
        dt: float,
        projector: CollisionProjector,
        project: bool,
        num_threads: int = 1,
    ) -> None:
        super().__init__(model, datas, coupling, qpos_adr, ctrl_idx)
        self.slew_rad_s = float(slew_rad_s)
        self.projector = projector if project else None
        self.num_threads = max(1, int(num_threads))
        self.state = state = np.zeros(self.num_envs, dtype=hard_write_dtype(coupling.nactive, coupling.nfull))
        state["addr"] = data_addresses(self.datas)
        state["safe"] = True
        self.q, self.qpos, self.qvel = state["q"], state["full"], state["qvel"]
        self.depth, self.safe = state["depth"], state["safe"]
        self.params = p = np.zeros(1, dtype=hard_write_params_dtype(*hard_write_sizes(coupling, projector)))
        p["model"], p["nq"], p["nv"], p["nu"], p["nsensordata"], p["ngeom"], p["njnt"] = (
            model._address, model.nq, model.nv, model.nu, model.nsensordata, model.ngeom, model.njnt
        )  # fmt: skip
        p["dt"], p["inv_dt"], p["workers"] = dt, 1.0 / dt, self.num_threads
        p["step"] = coupling.slew_steps(self.slew_rad_s, dt)
        p["project"] = project
        p["tol"], p["iters"], p["group_free"] = projector.tol, projector.iters, projector.group_free
        p["sensor_adr"], p["qpos_adr"], p["ctrl_idx"] = projector.sensor_adr, self.qpos_adr, self.ctrl_idx
        p["pair_start"], p["pairs"], p["pair_reach"] = projector.pair_start, projector.pairs, projector.pair_reach
        for name, value in zip(_MOVER_FIELDS, projector.movers, strict=True):
            p[name] = value
        for name, value in zip(_COMPLETION_FIELDS, coupling.arrays, strict=True):
            p[name] = value
        self._compiled: dict[Any, Any] = {}  # the step's compiled functions (dexwheel.jit.compiled_for)

    def step(self, targets: np.ndarray) -> None:
        """One hard-write step of every env toward ``targets`` ``(N, nactive)`` (float64, C-contiguous: the
        caller's own array), in one compiled call."""
        step = _hard_write_threaded if self.num_threads > 1 else _hard_write_serial
        if step is _hard_write_threaded:
            if threads_usable():
                use_threads(self.num_threads)
            else:  # a forked child of a process whose OpenMP pool ran: the same results, one thread
                step = _hard_write_serial
        run = self._compiled.get(step)
        if run is None:
            run = self._compiled[step] = compiled_for(step, targets, self.state, self.params)
        run(targets, self.state, self.params)

    def reset_env(self, i: int, full: np.ndarray, q_active: np.ndarray, fallback: np.ndarray) -> None:
        """Start env ``i`` at rest in ``full``; ``fallback`` is its last safe pose if ``full`` penetrates."""
        s = self.state[i : i + 1]
        self.set_pose(i, full)
        s["q"], s["full"], s["qvel"], s["time"], s["stalled"] = q_active, full, 0.0, self.datas[i].time, False
        s["safe"] = self.projector is None or self.depth[i] <= self.projector.tol
        s["last_safe"] = q_active if s["safe"][0] else fallback


@kernel
def _control_env(s: Any, p: Any, command: np.ndarray) -> None:
    """One env's control step: :func:`hard_write_env` toward ``command``, and ``qvel``, the pose's motion over
    ``dt``."""
    for k in range(s.full.shape[0]):
        s.qvel[k] = s.full[k]  # the pose before the step
    hard_write_env(s, p, command)
    for k in range(s.full.shape[0]):
        s.qvel[k] = (s.full[k] - s.qvel[k]) * p.inv_dt


@kernel
def _hard_write_serial(targets: np.ndarray, states: np.ndarray, params: np.ndarray) -> None:
    """Every env ``i``'s control step: record ``states[i]`` toward ``targets[i]``."""
    for i in range(targets.shape[0]):
        _control_env(states[i], params[0], targets[i])


@kernel(parallel=True)
def _hard_write_threaded(targets: np.ndarray, states: np.ndarray, params: np.ndarray) -> None:
    """:func:`_hard_write_serial` with the envs spread over numba's worker threads (:func:`use_threads`).

    Collision projection makes env costs uneven (an env in contact may bisect a dozen trials per joint while
    another does one check), so the envs are not split in advance: each worker takes the next env from a shared
    counter, so a busy env does not hold up the envs queued behind it. Each env has its own MjData and touches
    nothing of another's, so the result is the serial one, bit for bit, whatever the thread count and order.
    """
    n = targets.shape[0]
    taken = np.zeros(1, dtype=np.int64)  # envs handed out so far
    for _ in prange(min(params[0].workers, n)):  # one iteration per worker thread
        i = fetch_add(taken, 0)
        while i < n:  # no record variable crosses into the loop: numba cannot pass one in
            _control_env(states[i], params[0], targets[i])
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


_MOVER_FIELDS = ("mover_start", "mover_full", "mover_jnt", "mover_geom_start", "mover_geoms")
_COMPLETION_FIELDS = ("active_idx", "mimic_idx", "mimic_src", "mimic_ratio", "full_lower", "full_upper")


@kernel
def _completion(p: Any) -> tuple:
    """The params record's :attr:`MimicCompletion.arrays` (fields :data:`_COMPLETION_FIELDS`)."""
    return p.active_idx, p.mimic_idx, p.mimic_src, p.mimic_ratio, p.full_lower, p.full_upper


@kernel
def hard_write_env(s: Any, p: Any, command: np.ndarray) -> None:
    """One hard-write physics step of one env: record ``s`` (:func:`hard_write_dtype`) toward ``command``.

    Slew (``q`` moved toward ``command`` by at most ``p.step`` per joint, as ``command - (diff -
    clip(diff, -step, step))``, so a joint within reach lands on its command exactly), then write the pose (``qpos``/``ctrl`` = the completed
    pose, ``qvel = 0``, ``time += dt``) and ``mj_forward``. With collision projection (``p.project``)
    the slewed candidate is written and forwarded first: its contact sensors are the projection's
    first check, so a candidate within the tolerance (free motion) costs one ``mj_forward`` and
    nothing else. A penetrating one is projected (:func:`project_pose`) and the result written and
    forwarded again. A candidate equal to the safe current pose, or to the last candidate whose
    projection was a fixed point, needs no check.
    """
    q, cand = s.q, s.candidate
    na = q.shape[0]
    slew_toward(q, command, p.step, cand)
    s.time += p.dt
    s.checks, s.limited, s.fallback = 0, 0, False
    if not p.project:
        _copy(q, cand)
        _write_and_forward(s, p)
        return
    same = True
    same_stalled = s.stalled
    for j in range(na):
        same = same and cand[j] == q[j]
        same_stalled = same_stalled and cand[j] == s.stalled_cand[j]
    if (s.safe and same) or same_stalled:
        _write_and_forward(s, p)  # q unchanged
        s.stalled = s.safe
        return
    start = q.copy()
    _copy(q, cand)
    _write_and_forward(s, p)
    s.checks = 1
    if s.depth > p.tol:
        completion = _completion(p)
        qpos = f64_array(s.addr[QPOS], p.nq)
        sensors = f64_array(s.addr[SENSORDATA], p.nsensordata)
        pair_tables = (f64_array(s.addr[GEOM_XPOS], 3 * p.ngeom), p.pair_start, p.pairs, p.pair_reach)
        rigid_tables = (f64_array(s.addr[GEOM_XMAT], 9 * p.ngeom), f64_array(s.addr[XANCHOR], 3 * p.njnt),
                        f64_array(s.addr[XAXIS], 3 * p.njnt), p.mover_start, p.mover_full, p.mover_jnt,
                        p.mover_geom_start, p.mover_geoms)  # fmt: skip
        s.checks, s.limited, s.fallback = project_pose(
            p.model, s.addr[DATA], qpos, sensors, p.qpos_adr, p.sensor_adr, completion, pair_tables, rigid_tables,
            p.tol, p.iters, p.group_free, start, cand, s.safe, s.last_safe, q, s.scratch,
        )  # fmt: skip
        _write_and_forward(s, p)
    s.safe = True
    _copy(s.last_safe, q)
    stalled = True  # a result equal to its start is a fixed point for this candidate
    for j in range(na):
        stalled = stalled and q[j] == start[j]
    s.stalled = stalled
    if stalled:
        _copy(s.stalled_cand, cand)


@kernel
def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[:] = src`` for arrays of one length (no shape-mismatch error to compile: see project_pose)."""
    for j in range(dst.shape[0]):
        dst[j] = src[j]


@kernel
def _write_and_forward(s: Any, p: Any) -> None:
    """Write pose ``s.q`` (completed into ``s.full``) as qpos and ctrl, ``qvel = 0`` and ``s.time``;
    ``mj_forward``; ``s.depth`` from the deepest-contact sensor."""
    completion = _completion(p)
    full = s.full
    complete_into(s.q, completion, True, full)
    qpos = f64_array(s.addr[QPOS], p.nq)
    ctrl = f64_array(s.addr[CTRL], p.nu)
    for k in range(full.shape[0]):
        qpos[p.qpos_adr[k]] = full[k]
        ctrl[p.ctrl_idx[k]] = full[k]
    qvel = f64_array(s.addr[QVEL], p.nv)
    for k in range(p.nv):
        qvel[k] = 0.0
    data = s.addr[DATA]
    time = np.empty(1)
    time[0] = s.time
    mj_setState(p.model, data, time.ctypes.data, STATE_TIME)
    mj_forward(p.model, data)
    d = f64_array(s.addr[SENSORDATA], p.nsensordata)[p.sensor_adr[0]]
    s.depth = -d if d < 0.0 else 0.0


class PDDrive(_BatchDrive):
    """Position-actuator drive: slewed targets for ``nsub`` ``mj_step`` calls per control step.

    The slew acts on the actuator targets (a ramp from the previous target toward the command, no
    joint's target, mimic ones included, moving more than ``slew_rad_s * timestep`` per physics step),
    not on a re-read qpos: re-seeding the ramp from the lagging qpos, as the vendor bridge does, caps
    joint speed near ``kp * slew * dt / kv`` (about 0.25 rad/s for the G20), far below ``slew_rad_s``.

    One env steps its own MjData with ``nsub`` plain ``mj_step`` calls (one ramp row each); several
    envs are one ``mujoco.batch.Batch`` rollout over all of them on the batch's C++ thread pool, which
    is bit-identical to such a loop per env. ``depth`` is the deepest contact over the control step's
    physics steps (each step's contacts, as its forward pass found them), read from the model's
    :data:`DEEPEST_CONTACT_SENSOR`.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        datas: Sequence[mujoco.MjData],
        coupling: MimicCompletion,
        qpos_adr: np.ndarray,
        ctrl_idx: np.ndarray,
        *,
        slew_rad_s: float,
        timestep: float,
        nsub: int,
        num_threads: int = 1,
        models: Sequence[mujoco.MjModel] | None = None,
    ) -> None:
        super().__init__(model, datas, coupling, qpos_adr, ctrl_idx, models)
        self.slew_rad_s = float(slew_rad_s)
        self.nsub = int(nsub)
        n = self.num_envs
        budget = slew_budget(coupling.slew_steps(self.slew_rad_s, timestep), self.nsub)
        self._budget = np.ascontiguousarray(np.broadcast_to(budget, (self.nsub, coupling.nactive)))
        c = coupling
        self._completion = (c.active_idx, c.mimic_idx, c.mimic_src, c.mimic_ratio, c.full_lower, c.full_upper)
        self._depth_adr = deepest_contact_adr(model)
        #: ``(N, nsub, nu)`` actuator targets of the last step, one row per physics step.
        self.control = np.zeros((n, self.nsub, model.nu))
        if n == 1:
            self._control_rows = list(self.control[0])  # views, one per physics step
            d = self.datas[0]
            #: ``(N, nq)`` / ``(N, nv)`` state after the last step or reset.
            self.qpos, self.qvel = d.qpos[None], d.qvel[None]
            self.batch: BatchPhysics | None = None
            self.monitor = DivergenceMonitor(self.datas)
        else:  # every env on its model (the one model, or each its copy), in the shared batch wrapper
            self.batch = BatchPhysics(self.models, self.nsub, max(1, int(num_threads)))
            self.qpos, self.qvel = self.batch.qpos, self.batch.qvel
            self._record = {"sensordata": np.zeros((n, self.nsub, model.nsensordata))}
            self.monitor = self.batch.monitor
        #: Smallest contact distance of each env over the last step's physics steps (negative: penetration).
        self._min_dist = np.zeros(n)
        #: ``(N, nactive)`` the active joints' actuator targets of the last physics step: the slew state.
        self.q = np.zeros((n, coupling.nactive))

    def set_pose(self, i: int, full: np.ndarray) -> None:
        super().set_pose(i, full)
        self.depth[i] = sensor_depth(self.datas[i].sensordata[self._depth_adr])
        self.monitor.rebase(i)  # the task reset env i's MjData (its warning counters) before this
        if self.batch is not None:  # the env's simulation is its batch row; its MjData was scratch
            self.batch.load_state(i, self.datas[i])

    @property
    def sensordata(self) -> np.ndarray:
        """``(N, nsensordata)``: every env's sensors at the last physics step of the last :meth:`step`."""
        if self.batch is None:
            return self.datas[0].sensordata[None]
        return self._record["sensordata"][:, -1]

    def sync_data(self, i: int) -> mujoco.MjData:
        """Env ``i``'s MjData at its current state, forward-computed (for rendering)."""
        if self.batch is not None:
            return self.batch.sync_into(i, self.datas[i])
        return self.datas[i]

    def step(self, targets: np.ndarray) -> None:
        """Advance every env by ``nsub`` physics steps, the actuator targets ramped from ``q`` toward
        ``targets`` ``(N, nactive)`` (``q`` becomes the last physics step's)."""
        _ramp_controls(self.q, targets, self._budget, *self._completion, self.ctrl_idx, self.control)
        if self.batch is None:
            self.depth[0] = sensor_depth(self._step_single())
            return
        self.batch.rollout(self.control, self._record)
        np.minimum.reduce(self._record["sensordata"][:, :, self._depth_adr], axis=1, out=self._min_dist)
        depth = np.minimum(self._min_dist, 0.0, out=self.depth)
        np.subtract(0.0, depth, out=depth)  # sensor_depth, batched: -min(dist, 0), +0.0 without contact

    def _step_single(self) -> float:
        """Plain mj_step calls, one per ramp row, on the env's own MjData (what env.data shows); returns
        the smallest contact distance the steps saw."""
        model, d = self.models[0], self.datas[0]
        ctrl, sensors, adr, step = d.ctrl, d.sensordata, self._depth_adr, mujoco.mj_step
        smallest = np.inf
        for row in self._control_rows:
            ctrl[:] = row
            step(model, d)
            dist = sensors[adr]
            if dist < smallest:
                smallest = dist
        return float(smallest)

    def close(self) -> None:
        self.batch = None


@kernel
def _ramp_controls(target: np.ndarray, command: np.ndarray, budget: np.ndarray, active_idx: np.ndarray,
                   mimic_idx: np.ndarray, mimic_src: np.ndarray, mimic_ratio: np.ndarray, full_lower: np.ndarray,
                   full_upper: np.ndarray, ctrl_idx: np.ndarray, control: np.ndarray) -> None:  # fmt: skip
    """The PD step's actuator targets for every env and physics step, in one compiled loop.

    Row ``k`` of env ``i`` is :func:`~dexwheel.sim.slew.slew_ramp`'s: ``target`` moved toward
    ``command`` by at most ``budget[k]`` per joint (the closed form, ``command - (diff - clip(diff, -b,
    b))``), completed like :meth:`MimicCompletion.complete` with ``clip_mimic`` (``mimic = ratio *
    source``, every joint clipped to its limits) and written to ``control[i, k, ctrl_idx]``. ``target``
    becomes the last row's active targets.
    """
    n, nsub = control.shape[0], control.shape[1]
    completion = (active_idx, mimic_idx, mimic_src, mimic_ratio, full_lower, full_upper)
    row = np.empty(active_idx.shape[0])
    full = np.empty(full_lower.shape[0])
    for i in range(n):
        for k in range(nsub):
            slew_toward(target[i], command[i], budget[k], row)
            complete_into(row, completion, True, full)
            for f in range(full.shape[0]):
                control[i, k, ctrl_idx[f]] = full[f]
        for j in range(row.shape[0]):
            target[i, j] = row[j]
