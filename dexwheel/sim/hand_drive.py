"""Drives for a batch of MjData: kinematic hard-write and PD through position actuators (seed 5.2).

Both drives step ``N`` independent MjData (one per env; ``N = 1`` for a single env) and take the
commanded active-joint positions as an ``(N, nactive)`` array:

* :class:`HardWriteDrive` (the seed's default): slew toward the command, optional collision
  projection, write qpos (mimic joints completed) and the matching ctrl, ``qvel = 0``, one
  ``mj_forward``. No ``mj_step``. One call is one physics step of length ``dt``.
* :class:`PDDrive` (``--pd-drive``): the slewed targets (mimic joints coupled: ``ratio * source``)
  go into the position actuators of all joints and ``mj_step`` runs ``nsub`` times per call.

The numpy parts (slew, mimic completion) are batched over envs; the PD drive's rollouts run in chunks
on worker threads (``mujoco.rollout`` releases the GIL). Each env is computed by the same calls
whatever ``N`` and the thread count are, so a batch reproduces single envs bit for bit.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import mujoco
import numpy as np
from mujoco import rollout as mj_rollout

from dexwheel.sim.hand_coupling import JointCoupling
from dexwheel.sim.projection import CollisionProjector, contact_depth
from dexwheel.sim.slew import slew_budget, slew_ramp_budget, slew_toward

FULLPHYSICS = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
_S = mujoco.mjtState
#: What a hard-write sets, in one ``mj_setState`` call: [time, qpos, qvel, ctrl].
WRITE_SPEC = int(_S.mjSTATE_TIME | _S.mjSTATE_QPOS | _S.mjSTATE_QVEL | _S.mjSTATE_CTRL)


def default_threads(num_envs: int) -> int:
    """Worker threads for ``num_envs`` envs: one per core, never more than the envs."""
    return max(1, min(num_envs, os.cpu_count() or 1))


class ChunkPool:
    """Run ``fn(start, stop)`` over contiguous chunks of ``range(n)`` on worker threads.

    MuJoCo releases the GIL inside its C functions, so chunks of per-env MuJoCo calls run in
    parallel while the Python glue between them stays small. With one thread (or fewer than
    ``min_per_thread`` envs per thread) everything runs inline on the caller.
    """

    def __init__(self, nthread: int, min_per_thread: int = 2) -> None:
        self.nthread = max(1, int(nthread))
        self.min_per_thread = max(1, int(min_per_thread))
        self._executor = ThreadPoolExecutor(self.nthread, thread_name_prefix="dexwheel") if self.nthread > 1 else None

    def run(self, fn: Callable[[int, int], None], n: int) -> None:
        k = min(self.nthread, n // self.min_per_thread) if self._executor is not None else 1
        if k <= 1:
            fn(0, n)
            return
        bounds = [n * j // k for j in range(k + 1)]
        futures = [self._executor.submit(fn, bounds[j], bounds[j + 1]) for j in range(1, k)]  # type: ignore[union-attr]
        fn(bounds[0], bounds[1])  # the caller works too
        for f in futures:
            f.result()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None


class _BatchDrive:
    """What both drives share: the model, one MjData per env and the joint/actuator index maps."""

    def __init__(
        self,
        model: mujoco.MjModel,
        datas: Sequence[mujoco.MjData],
        coupling: JointCoupling,
        qpos_adr: np.ndarray,
        ctrl_idx: np.ndarray,
        pool: ChunkPool,
    ) -> None:
        self.model = model
        self.datas = list(datas)
        self.num_envs = len(self.datas)
        self.coupling = coupling
        self.qpos_adr = np.asarray(qpos_adr, dtype=np.intp)
        self.ctrl_idx = np.asarray(ctrl_idx, dtype=np.intp)
        # The G20 (and most fixed-base hands) store the joints as all of qpos/ctrl in order: plain copies.
        self._qpos_whole = model.nq == coupling.nfull and bool(np.array_equal(self.qpos_adr, np.arange(model.nq)))
        self._ctrl_whole = model.nu == coupling.nfull and bool(np.array_equal(self.ctrl_idx, np.arange(model.nu)))
        self.pool = pool
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

    def set_pose(self, i: int, full: np.ndarray) -> None:
        """Put env ``i`` at rest in pose ``full`` with matching actuator targets (episode start)."""
        d = self.datas[i]
        self._write(d, full)
        d.qvel[:] = 0.0
        mujoco.mj_forward(self.model, d)
        self.depth[i] = contact_depth(d)


class HardWriteDrive(_BatchDrive):
    """Kinematic drive: slew, project, write qpos/ctrl, ``qvel = 0``, ``mj_forward``.

    Its MuJoCo calls run on the calling thread: they are short (2-12 us) and interleaved with Python
    (the projection's decisions), so worker threads lose more to GIL hand-offs than they gain
    (measured: 2 threads were 1.2-1.5x slower than one at 64 envs).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        datas: Sequence[mujoco.MjData],
        coupling: JointCoupling,
        qpos_adr: np.ndarray,
        ctrl_idx: np.ndarray,
        pool: ChunkPool,
        *,
        slew_rad_s: float,
        projector: CollisionProjector | None,
    ) -> None:
        super().__init__(model, datas, coupling, qpos_adr, ctrl_idx, pool)
        self.slew_rad_s = float(slew_rad_s)
        self._step_dt = -1.0
        self._step = coupling.slew_steps(self.slew_rad_s, 1.0)
        self.projector = projector
        n = self.num_envs
        self.candidate = np.zeros((n, coupling.nactive))
        #: The written poses (N, nfull), mimic joints completed.
        self.full = np.zeros((n, coupling.nfull))
        self.checks = np.zeros(n, dtype=np.int64)
        self.limited = np.zeros(n, dtype=np.int64)
        self.fallback = np.zeros(n, dtype=bool)
        # A projection whose result equals its start is a fixed point: the same start and candidate
        # give the same result again, so holding a blocked pose costs no collision checks.
        self._stalled = np.zeros(n, dtype=bool)
        self._stalled_cand = np.zeros((n, coupling.nactive))
        #: Whether each env's current pose is known not to penetrate, and its last such pose.
        self.safe = np.ones(n, dtype=bool)
        self.last_safe = np.zeros((n, coupling.nactive))
        # [time, qpos, qvel = 0, ctrl] per env, written with one mj_setState (when the joints are all of
        # qpos and ctrl, in order; otherwise field by field).
        self._fast_write = self._qpos_whole and self._ctrl_whole and model.na == 0
        nq, nv = model.nq, model.nv
        self._wstate = np.zeros((n, mujoco.mj_stateSize(model, WRITE_SPEC)))
        self._w_qpos = slice(1, 1 + nq)
        self._w_ctrl = slice(1 + nq + nv, 1 + nq + nv + model.nu)

    def reset_env(self, i: int, full: np.ndarray, q_active: np.ndarray, fallback: np.ndarray) -> None:
        """Start env ``i`` at rest in ``full``; ``fallback`` is its last safe pose if ``full`` penetrates."""
        self._stalled[i] = False
        self.full[i] = full
        self.set_pose(i, full)
        mujoco.mj_getState(self.model, self.datas[i], self._wstate[i], WRITE_SPEC)
        self.safe[i] = self.projector is None or self.depth[i] <= self.projector.tol
        self.last_safe[i] = q_active if self.safe[i] else fallback

    def step(self, q: np.ndarray, command: np.ndarray, dt: float) -> None:
        """Advance every env by one physics step of ``dt``; ``q`` (N, nactive) is updated in place."""
        if dt != self._step_dt:
            self._step, self._step_dt = self.coupling.slew_steps(self.slew_rad_s, dt), dt
        if self.projector is None:
            slew_toward(q, command, self._step, out=q)
        else:
            slew_toward(q, command, self._step, out=self.candidate)
            self.checks = np.zeros(self.num_envs, dtype=np.int64)
            self.limited = np.zeros(self.num_envs, dtype=np.int64)
            self.fallback = np.zeros(self.num_envs, dtype=bool)
            self._project(q)
        if self._fast_write:
            w = self._wstate
            w[:, 0] += dt
            self.coupling.complete(q, self.full)
            w[:, self._w_qpos] = self.full
            w[:, self._w_ctrl] = self.full
        else:
            self.coupling.complete(q, self.full)
        self._forward(dt, 0, self.num_envs)

    def stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(checks, limited, fallback)`` per env of the last step (fresh arrays the caller may keep)."""
        if self.projector is None:
            n = self.num_envs
            return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
        return self.checks, self.limited, self.fallback

    def _project(self, q: np.ndarray) -> None:
        proj, cand = self.projector, self.candidate
        assert proj is not None
        start = q.copy()
        # Which envs need no check, decided for all envs at once: holding the current safe pose, or
        # the same candidate as a step whose projection was a fixed point.
        same = cand == q
        skip = (self.safe & same.all(axis=1)) | (self._stalled & (cand == self._stalled_cand).all(axis=1))
        full_cand = self.coupling.complete(cand)
        checks, limited, fallback, safe, last_safe, datas = (
            self.checks,
            self.limited,
            self.fallback,
            self.safe,
            self.last_safe,
            self.datas,
        )
        for i in np.flatnonzero(~skip).tolist():
            res = proj.project(
                datas[i],
                start[i],
                cand[i],
                q[i],
                start_is_safe=bool(safe[i]),
                last_safe=last_safe[i],
                full=full_cand[i],
            )
            checks[i] = res.checks
            limited[i] = res.limited
            fallback[i] = res.fallback
            safe[i] = res.safe
        np.copyto(last_safe, q, where=safe[:, None])
        # a result equal to its start is a fixed point for this candidate
        self._stalled = safe & (q == start).all(axis=1)
        np.copyto(self._stalled_cand, cand, where=self._stalled[:, None])

    def _forward(self, dt: float, a: int, b: int) -> None:
        model, datas, full, depth, w = self.model, self.datas, self.full, self.depth, self._wstate
        fast = self._fast_write
        for i in range(a, b):
            d = datas[i]
            if fast:
                mujoco.mj_setState(model, d, w[i], WRITE_SPEC)
            else:
                self._write(d, full[i])
                d.qvel[:] = 0.0
                d.time += dt
            mujoco.mj_forward(model, d)
            depth[i] = contact_depth(d)


class PDDrive(_BatchDrive):
    """Position-actuator drive: slewed targets for ``nsub`` ``mj_step`` calls per control step.

    The slew acts on the actuator targets (a ramp from the previous target toward the command, no
    joint's target, mimic ones included, moving more than ``slew_rad_s * timestep`` per physics step),
    not on a re-read qpos: re-seeding the ramp from the lagging qpos, as the seed's bridge does, caps
    joint speed near ``kp * slew * dt / kv`` (about 0.25 rad/s for the G20), far below ``slew_rad_s``.

    Each env's ``nsub`` steps are one ``mujoco.rollout`` call on the env's own MjData (steps run in
    C++, no Python per physics step), given the data's own warm start: exactly ``nsub`` plain
    ``mj_step`` calls, and the MjData ends as they would leave it. ``depth`` is the deepest contact of
    the last physics step (the contacts ``mj_step`` leaves in the data).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        datas: Sequence[mujoco.MjData],
        coupling: JointCoupling,
        qpos_adr: np.ndarray,
        ctrl_idx: np.ndarray,
        pool: ChunkPool,
        *,
        slew_rad_s: float,
        timestep: float,
        nsub: int,
    ) -> None:
        super().__init__(model, datas, coupling, qpos_adr, ctrl_idx, pool)
        self.slew_rad_s = float(slew_rad_s)
        self.nsub = int(nsub)
        n = self.num_envs
        self.nstate = mujoco.mj_stateSize(model, FULLPHYSICS)
        self._budget = slew_budget(coupling.slew_steps(self.slew_rad_s, timestep), self.nsub)
        self._models = [model]
        self._local = threading.local()
        #: Full physics state per env: the rollouts' start, then their end.
        self.state = np.zeros((n, 1, self.nstate))
        self.warmstart = np.zeros((n, 1, model.nv))
        self.ramp = np.zeros((n, self.nsub, coupling.nactive))
        self.control = np.zeros((n, self.nsub, model.nu))
        self._full = np.zeros((n, self.nsub, coupling.nfull))
        self.out_state = np.zeros((n, self.nsub, self.nstate))
        self._out_sensor = np.zeros((n, self.nsub, model.nsensordata))
        # FULLPHYSICS layout: time, qpos, qvel, act, ...
        self.qpos_slice = slice(1, 1 + model.nq)
        self.qvel_slice = slice(1 + model.nq, 1 + model.nq + model.nv)

    def set_pose(self, i: int, full: np.ndarray) -> None:
        super().set_pose(i, full)
        mujoco.mj_getState(self.model, self.datas[i], self.state[i, 0], FULLPHYSICS)

    def final_state(self) -> np.ndarray:
        """``(N, nstate)`` full physics state after the last step (or reset)."""
        return self.state[:, 0]

    def _roller(self) -> mj_rollout.Rollout:
        r = getattr(self._local, "rollout", None)
        if r is None:
            r = self._local.rollout = mj_rollout.Rollout(nthread=0)
        return r

    def step(self, target: np.ndarray, command: np.ndarray) -> None:
        """Advance every env by ``nsub`` physics steps; ``target`` (N, nactive) is updated in place."""
        ramp = slew_ramp_budget(target, command, self._budget, out=self.ramp)
        if self._ctrl_whole:
            self.coupling.complete(ramp, self.control)
        else:
            self.control[:, :, self.ctrl_idx] = self.coupling.complete(ramp, self._full)
        self.pool.run(self._roll, self.num_envs)
        self.state[:, 0] = self.out_state[:, -1]
        target[:] = ramp[:, -1]

    def _roll(self, a: int, b: int) -> None:
        roller = self._roller()
        models, datas, nsub = self._models, self.datas, self.nsub
        state, warm, control, out, sens, depth = (
            self.state,
            self.warmstart,
            self.control,
            self.out_state,
            self._out_sensor,
            self.depth,
        )
        for i in range(a, b):
            d = datas[i]
            mujoco.mj_getState(self.model, d, state[i, 0], FULLPHYSICS)  # the data may have been edited
            warm[i, 0] = d.qacc_warmstart
            roller.rollout(
                models,
                [d],
                state[i],
                control[i : i + 1],
                skip_checks=True,
                nstep=nsub,
                initial_warmstart=warm[i],
                state=out[i : i + 1],
                sensordata=sens[i : i + 1],
            )
            depth[i] = contact_depth(d)
