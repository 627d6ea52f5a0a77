"""Drives for a batch of MjData: kinematic hard-write and PD through position actuators (seed 5.2).

Both drives step ``N`` independent MjData (one per env; ``N = 1`` for a single env) and take the
commanded active-joint positions as an ``(N, nactive)`` array:

* :class:`HardWriteDrive` (the seed's default): slew toward the command, optional collision
  projection, write qpos (mimic joints completed) and the matching ctrl, ``qvel = 0``, one
  ``mj_forward``. No ``mj_step``. One call is one physics step of length ``dt``.
* :class:`PDDrive` (``--pd-drive``): the slewed targets (mimic joints coupled: ``ratio * source``)
  go into the position actuators of all joints and ``mj_step`` runs ``nsub`` times per call.

The arithmetic (slew, mimic completion) is batched over envs (PD: one compiled loop), and several
envs' PD steps run in one ``mujoco.batch.Batch`` call on its C++ thread pool. Each env is computed by
the same arithmetic whatever ``N`` and the thread count are, so a batch reproduces single envs bit
for bit.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import mujoco
import numpy as np
from mujoco import batch as mj_batch

from dexwheel.control.coupling import MimicCompletion
from dexwheel.jit import kernel
from dexwheel.sim.projection import CollisionProjector, contact_depth, deepest_contact_adr, sensor_depth
from dexwheel.sim.slew import slew_budget, slew_toward

INTEGRATION = int(mujoco.mjtState.mjSTATE_INTEGRATION)
_S = mujoco.mjtState
#: What a hard-write sets, in one ``mj_setState`` call: [time, qpos, qvel, ctrl].
WRITE_SPEC = int(_S.mjSTATE_TIME | _S.mjSTATE_QPOS | _S.mjSTATE_QVEL | _S.mjSTATE_CTRL)


def default_threads(num_envs: int) -> int:
    """Worker threads for ``num_envs`` envs: one per core, never more than the envs."""
    return max(1, min(num_envs, os.cpu_count() or 1))


class _BatchDrive:
    """What both drives share: the model, one MjData per env and the joint/actuator index maps."""

    def __init__(
        self,
        model: mujoco.MjModel,
        datas: Sequence[mujoco.MjData],
        coupling: MimicCompletion,
        qpos_adr: np.ndarray,
        ctrl_idx: np.ndarray,
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
        coupling: MimicCompletion,
        qpos_adr: np.ndarray,
        ctrl_idx: np.ndarray,
        *,
        slew_rad_s: float,
        projector: CollisionProjector | None,
    ) -> None:
        super().__init__(model, datas, coupling, qpos_adr, ctrl_idx)
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
            self.coupling.complete(q, self.full, clip_mimic=True)
            w[:, self._w_qpos] = self.full
            w[:, self._w_ctrl] = self.full
        else:
            self.coupling.complete(q, self.full, clip_mimic=True)
        self._forward(dt)

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
        full_cand = self.coupling.complete(cand, clip_mimic=True)
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

    def _forward(self, dt: float) -> None:
        model, datas, full, depth, w = self.model, self.datas, self.full, self.depth, self._wstate
        fast = self._fast_write
        for i, d in enumerate(datas):
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
    ) -> None:
        super().__init__(model, datas, coupling, qpos_adr, ctrl_idx)
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
            self.batch: mj_batch.Batch | None = None
        else:
            self.batch = mj_batch.Batch(model, n, nthread=max(1, int(num_threads)))
            self.qpos, self.qvel = self.batch.bind("qpos"), self.batch.bind("qvel")
            self._record = {"sensordata": np.zeros((n, self.nsub, model.nsensordata))}
        #: Smallest contact distance of each env over the last step's physics steps (negative: penetration).
        self._min_dist = np.zeros(n)

    def set_pose(self, i: int, full: np.ndarray) -> None:
        super().set_pose(i, full)
        self.depth[i] = sensor_depth(self.datas[i].sensordata[self._depth_adr])
        if self.batch is not None:  # the env's simulation is its batch row; its MjData was scratch
            mujoco.mj_getState(self.model, self.datas[i], self.batch.state[i], INTEGRATION)

    def sync_data(self, i: int) -> mujoco.MjData:
        """Env ``i``'s MjData at its current state, forward-computed (for rendering)."""
        d = self.datas[i]
        if self.batch is not None:
            mujoco.mj_setState(self.model, d, self.batch.state[i], INTEGRATION)
            mujoco.mj_forward(self.model, d)
        return d

    def step(self, target: np.ndarray, command: np.ndarray) -> None:
        """Advance every env by ``nsub`` physics steps; ``target`` (N, nactive) is updated in place."""
        _ramp_controls(target, command, self._budget, *self._completion, self.ctrl_idx, self.control)
        if self.batch is None:
            self.depth[0] = sensor_depth(self._step_single())
            return
        self.batch.rollout(self.nsub, control=self.control, record=("sensordata",), out=self._record)
        np.minimum.reduce(self._record["sensordata"][:, :, self._depth_adr], axis=1, out=self._min_dist)
        depth = np.minimum(self._min_dist, 0.0, out=self.depth)
        np.subtract(0.0, depth, out=depth)  # sensor_depth, batched: -min(dist, 0), +0.0 without contact

    def _step_single(self) -> float:
        """Plain mj_step calls, one per ramp row, on the env's own MjData (what env.data shows); returns
        the smallest contact distance the steps saw."""
        model, d = self.model, self.datas[0]
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
    na, nm = active_idx.shape[0], mimic_idx.shape[0]
    row = np.empty(na)
    for i in range(n):
        for k in range(nsub):
            for j in range(na):
                diff = command[i, j] - target[i, j]
                b = budget[k, j]
                row[j] = command[i, j] - (diff - min(max(diff, -b), b))
            for j in range(na):
                f = active_idx[j]
                control[i, k, ctrl_idx[f]] = min(max(row[j], full_lower[f]), full_upper[f])
            for m in range(nm):
                f = mimic_idx[m]
                control[i, k, ctrl_idx[f]] = min(max(row[mimic_src[m]] * mimic_ratio[m], full_lower[f]), full_upper[f])
        for j in range(na):
            target[i, j] = row[j]
