"""PD drive of the wheel-leg robots: a robot-order :class:`MotorFrame` reaches MuJoCo's actuators.

Every actuator is turned into the same affine PD law, the usual motor-driver command::

    force = clip(kp (q* - q) + kd (v* - qdot) + tau_ff, -effort, +effort)

with MuJoCo's affine bias: gain 1, bias ``(0, -kp, -kd)``, ``ctrl = kp q* + kd v* + tau_ff``. A knee frame
(kp 80, kd 2, q*) is then exactly MuJoCo's position actuator and a wheel frame (kp 0, kd 0.6, v*) its
velocity actuator, and either takes whatever gains the frame carries (an override layer stiffening the
knees, randomised gains) without changing actuator type. The gains live in ``actuator_biasprm`` and are
written only when they change; the effort clip is MuJoCo's ``forcerange`` (so it holds on every physics
step, not only on the control step), and the implicit integrator still sees ``-kd`` as damping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mujoco
import numpy as np

from dexwheel.jit import kernel
from dexwheel.sim.physics import BatchPhysics, SerialPhysics
from dexwheel.sim.snapshot import PartOfTask


def make_pd_actuators(spec: mujoco.MjSpec) -> None:
    """Turn the builder's position/velocity actuators into the gain-1 affine PD form (in place).

    The builder writes ``gainprm[0] = kp`` (position) or ``kv`` (velocity) and ``biasprm = (0, -kp, -kv)``;
    the bias already holds both gains, so only the gain becomes 1 and ``ctrl`` carries the PD targets.
    """
    for act in spec.actuators:
        if act.gaintype != mujoco.mjtGain.mjGAIN_FIXED or act.biastype != mujoco.mjtBias.mjBIAS_AFFINE:
            raise ValueError(f"actuator {act.name!r}: expected a position or velocity actuator (affine bias)")
        gain = [0.0] * len(act.gainprm)
        gain[0] = 1.0
        act.gainprm = gain
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE


def actuator_ids(model: mujoco.MjModel, joint_names: Sequence[str]) -> np.ndarray:
    """The actuator driving each joint of ``joint_names`` (one per joint), in that order."""
    out = []
    for name in joint_names:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        hits = [a for a in range(model.nu) if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
                and model.actuator_trnid[a, 0] == jid]  # fmt: skip
        if jid < 0 or len(hits) != 1:
            raise ValueError(f"joint {name!r}: expected exactly one joint actuator, found {len(hits)}")
        out.append(hits[0])
    return np.asarray(out, dtype=np.intp)


class MotorFrameDrive(PartOfTask):
    """The wheel-leg robots' drive (:class:`dexwheel.sim.drive.Drive`): batched ``(5, N, nu)`` robot-order
    frames -> ``ctrl`` ``(N, nu)`` and per-env actuator gains, then one control step of ``physics``.

    ``models[i]`` is env ``i``'s model: one per env where gains may differ between envs (domain
    randomisation), or one object for every env. Envs sharing one model get its gains written once; when
    their gains come to differ (a per-env edit of a layer), ``split()`` is called, which gives each env its own
    copy and returns them (without ``split`` that raises). ``kp_scale`` and ``kd_scale`` (``(N, nu)``, ones by
    default) multiply the frame's gains: that is where PD-gain domain randomisation enters, after the
    composer, as a property of the motors rather than of the command.
    """

    def __init__(self, models: Sequence[mujoco.MjModel], joint_names: Sequence[str],
                 physics: SerialPhysics | BatchPhysics | None = None,
                 split: Callable[[], Sequence[mujoco.MjModel]] | None = None) -> None:  # fmt: skip
        self.models = list(models)
        #: What :meth:`step` writes the controls into and steps (None: :meth:`apply` only).
        self.physics = physics
        self._split = split
        n, nu = len(self.models), len(joint_names)
        self.act = actuator_ids(self.models[0], joint_names)
        self.kp_scale = np.ones((n, nu))
        self.kd_scale = np.ones((n, nu))
        self.kp = np.zeros((n, nu))  # effective gains (after scaling) last written to the models
        self.kd = np.zeros((n, nu))
        self._dirty: set[int] = set(range(n))
        self._last_bytes = b""

    @property
    def num_envs(self) -> int:
        return len(self.models)

    def step(self, targets: np.ndarray) -> None:
        """The frame ``targets`` (see :meth:`apply`) as the physics' controls, then ``decimation`` physics steps."""
        physics = self.physics
        if physics is None:
            raise RuntimeError("MotorFrameDrive.step: built without physics; pass physics= or call apply()")
        self.apply(targets, out=physics.ctrl)
        physics.step()

    def sync_data(self, i: int) -> mujoco.MjData:
        """Env ``i``'s MjData at its current state (the physics')."""
        if self.physics is None:
            raise RuntimeError("MotorFrameDrive.sync_data: built without physics")
        return self.physics.sync_data(i)

    def set_gain_scales(self, env: int, kp_scale: np.ndarray, kd_scale: np.ndarray) -> None:
        """Env ``env``'s gain multipliers (domain randomisation); rewritten on the next :meth:`apply`."""
        self.kp_scale[env] = kp_scale
        self.kd_scale[env] = kd_scale
        self._dirty.add(env)

    def apply(self, block: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``block``: ``(5, N, nu)`` float32 rows qpos, kp, kd, vel, torque; writes ``ctrl`` into ``out``.

        The frame's gains are compared with those last written (one bytes compare: they change only
        when a layer or the override switch changes them); models are written only when they differ
        or when an env's gain scales changed.
        """
        gains = block[1:3]
        raw = gains.tobytes()
        if raw != self._last_bytes:
            self._last_bytes = raw
            self._dirty.update(range(len(self.models)))
        if self._dirty:
            self._write_gains(gains)
        _pd_controls(block, self.kp, self.kd, self.act, out)
        return out

    @property
    def shared(self) -> bool:
        """Whether several envs run on one model object (their gains are then written once)."""
        m0 = self.models[0]
        return len(self.models) > 1 and all(m is m0 for m in self.models)

    def _write_gains(self, gains: np.ndarray) -> None:
        if self.shared:
            # every env's row, as the per-env loop computes it (float32 gains times float64 scales)
            kp, kd = np.multiply(gains[0], self.kp_scale), np.multiply(gains[1], self.kd_scale)
            if (kp == kp[0]).all() and (kd == kd[0]).all():
                self.kp[...], self.kd[...] = kp, kd
                bias = self.models[0].actuator_biasprm
                bias[self.act, 1] = -kp[0]
                bias[self.act, 2] = -kd[0]
                self._dirty.clear()
                return
            if self._split is None:
                raise RuntimeError("MotorFrameDrive: the envs share one model and their gains differ; "
                                   "pass split= to give each env its own model")  # fmt: skip
            self.models = list(self._split())
            self._dirty.update(range(len(self.models)))  # each new model gets its env's gains
        for i in sorted(self._dirty):
            np.multiply(gains[0, i], self.kp_scale[i], out=self.kp[i])
            np.multiply(gains[1, i], self.kd_scale[i], out=self.kd[i])
            bias = self.models[i].actuator_biasprm
            bias[self.act, 1] = -self.kp[i]
            bias[self.act, 2] = -self.kd[i]
        self._dirty.clear()


@kernel
def _pd_controls(block: np.ndarray, kp: np.ndarray, kd: np.ndarray, act: np.ndarray, ctrl: np.ndarray) -> None:
    """``ctrl[i, act[j]] = kp q* + kd v* + tau_ff`` for every env ``i`` and joint ``j`` (one compiled loop)."""
    for i in range(kp.shape[0]):
        for j in range(kp.shape[1]):
            q, v, tau = np.float64(block[0, i, j]), np.float64(block[3, i, j]), np.float64(block[4, i, j])
            ctrl[i, act[j]] = kp[i, j] * q + kd[i, j] * v + tau
