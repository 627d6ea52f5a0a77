"""Step N wheel-leg simulations by one control period and expose their state as batched arrays.

Two backends with one interface and bit-identical results:

* :class:`SerialPhysics` steps one ``MjData`` per env with ``mj_step`` on the calling thread (the
  single env, N = 1: no per-call overhead beyond ``mj_step`` itself);
* :class:`RolloutPhysics` hands all envs to ``mujoco.rollout``'s persistent C++ thread pool, which
  steps them without a Python loop per env and returns every env's state and sensors in one array.

Why they agree bit for bit: ``mj_step`` depends only on the physics state, the controls, the model and
the solver warm start. Rollout restarts each call from the full physics state with a given warm start,
so both backends zero ``qacc_warmstart`` at the start of every control period (the solver then starts
from the unconstrained acceleration, which it compares against anyway). Readouts (``qpos``, ``qvel``,
``sensordata``) are ``(N, ...)`` views that stay valid for the backend's lifetime.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import mujoco
import numpy as np
from mujoco import rollout as mj_rollout

_FULL = mujoco.mjtState.mjSTATE_FULLPHYSICS.value
_CTRL = mujoco.mjtState.mjSTATE_CTRL.value


def write_initial_state(model: mujoco.MjModel, data: mujoco.MjData, qpos: np.ndarray, qvel: np.ndarray) -> None:
    """Reset ``data`` to ``qpos``/``qvel`` at time 0 and run ``mj_forward`` (fills the sensors)."""
    mujoco.mj_resetData(model, data)
    data.qpos[:] = qpos
    data.qvel[:] = qvel
    mujoco.mj_forward(model, data)


class SerialPhysics:
    """``mj_step`` x ``decimation`` per env on the calling thread; ``data[i]`` is env ``i``'s MjData."""

    def __init__(self, models: Sequence[mujoco.MjModel], decimation: int) -> None:
        self.models = list(models)
        self.decimation = int(decimation)
        self.data = [mujoco.MjData(m) for m in self.models]
        self.num_envs = n = len(self.models)
        self.num_threads = 0  # the calling thread
        m0 = self.models[0]
        if n == 1:  # views straight into the MjData: nothing to copy after a step
            d = self.data[0]
            self.qpos, self.qvel, self.sensordata = d.qpos[None], d.qvel[None], d.sensordata[None]
        else:
            self.qpos = np.zeros((n, m0.nq))
            self.qvel = np.zeros((n, m0.nv))
            self.sensordata = np.zeros((n, m0.nsensordata))
        #: ``(N, nu)`` controls for the next :meth:`step` (for N = 1 a view of ``data[0].ctrl``).
        self.ctrl = self.data[0].ctrl[None] if n == 1 else np.zeros((n, m0.nu))
        self._ctrl = [d.ctrl for d in self.data]
        self._warm = [d.qacc_warmstart for d in self.data]
        #: Called as ``on_substep(env, model, data)`` after every ``mj_step`` when set (tests, probes).
        self.on_substep: Callable[[int, mujoco.MjModel, mujoco.MjData], None] | None = None

    def reset_env(self, env: int, qpos: np.ndarray, qvel: np.ndarray) -> None:
        d = self.data[env]
        write_initial_state(self.models[env], d, qpos, qvel)
        if self.num_envs > 1:
            self.qpos[env], self.qvel[env], self.sensordata[env] = d.qpos, d.qvel, d.sensordata

    def set_qvel(self, env: int) -> None:
        """Push an edit of ``self.qvel[env]`` (e.g. a push) into the simulation."""
        if self.num_envs > 1:
            self.data[env].qvel[:] = self.qvel[env]

    def step(self) -> None:
        step, dec, hook = mujoco.mj_step, self.decimation, self.on_substep
        for i, (m, d) in enumerate(zip(self.models, self.data, strict=True)):
            self._warm[i][:] = 0.0
            if self.num_envs > 1:
                self._ctrl[i][:] = self.ctrl[i]
            if hook is None:
                step(m, d, dec)  # one call for the whole control period
            else:
                for _ in range(dec):
                    step(m, d)
                    hook(i, m, d)
            if self.num_envs > 1:
                self.qpos[i], self.qvel[i], self.sensordata[i] = d.qpos, d.qvel, d.sensordata

    def close(self) -> None:
        pass


class RolloutPhysics:
    """All envs through ``mujoco.rollout.Rollout`` (persistent thread pool), state kept as arrays.

    ``substep_sensordata`` ``(N, decimation, nsensordata)`` keeps every physics step's sensors of the
    last call (actuator forces on every step, for effort checks). A scratch ``MjData`` per env is only
    used to build initial states at reset.
    """

    def __init__(self, models: Sequence[mujoco.MjModel], decimation: int, num_threads: int | None = None) -> None:
        self.models = list(models)
        self.decimation = dec = int(decimation)
        self.num_envs = n = len(self.models)
        m0 = self.models[0]
        self.nq, self.nv = m0.nq, m0.nv
        nstate = mujoco.mj_stateSize(m0, _FULL)
        threads = min(n, os.cpu_count() or 1) if num_threads is None else int(num_threads)
        self.num_threads = threads if n > 1 else 0
        self._pool = mj_rollout.Rollout(nthread=self.num_threads)
        self._thread_data = [mujoco.MjData(m0) for _ in range(max(1, self.num_threads))]
        self._scratch = mujoco.MjData(m0)
        self.state = np.zeros((n, nstate))
        self._control = np.zeros((n, dec, m0.nu))
        self.ctrl = np.zeros((n, m0.nu))  #: ``(N, nu)`` controls for the next :meth:`step`
        self._warmstart = np.zeros((n, m0.nv))
        self._state_out = np.zeros((n, dec, nstate))
        self.substep_sensordata = np.zeros((n, dec, m0.nsensordata))
        self.qpos = self.state[:, 1 : 1 + self.nq]  # state layout: time, qpos, qvel, act, ...
        self.qvel = self.state[:, 1 + self.nq : 1 + self.nq + self.nv]
        self.sensordata = self.substep_sensordata[:, -1]
        # small chunks: the pool balances envs across threads (a shared machine deschedules threads)
        self._chunk = max(1, n // (max(1, self.num_threads) * 16))

    def reset_env(self, env: int, qpos: np.ndarray, qvel: np.ndarray) -> None:
        d, m = self._scratch, self.models[env]
        write_initial_state(m, d, qpos, qvel)
        mujoco.mj_getState(m, d, self.state[env], _FULL)
        self.sensordata[env] = d.sensordata

    def set_qvel(self, env: int) -> None:
        """``qvel`` is a view into the state: edits take effect at the next step."""

    def step(self) -> None:
        self._control[...] = self.ctrl[:, None, :]
        self._pool.rollout(self.models, self._thread_data, self.state, self._control, skip_checks=True,
                           nstep=self.decimation, control_spec=_CTRL, initial_warmstart=self._warmstart,
                           state=self._state_out, sensordata=self.substep_sensordata,
                           chunk_size=self._chunk)  # fmt: skip
        self.state[...] = self._state_out[:, -1]

    def close(self) -> None:
        if self._pool is not None and self._pool.rollout_ is not None:
            self._pool.close()
        self._pool = None
