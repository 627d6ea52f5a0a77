"""Step N MuJoCo simulations by one control period and expose their state as batched arrays: the one
physics-stepping wrapper of both task families (the wheel-leg task steps through it; the hand's PD drive
rolls its per-physics-step targets out through :meth:`BatchPhysics.rollout`).

Two backends with one interface and bit-identical results:

* :class:`SerialPhysics` steps one ``MjData`` per env with ``mj_step`` on the calling thread (the
  single env, N = 1: no per-call overhead beyond ``mj_step`` itself);
* :class:`BatchPhysics` hands all envs to ``mujoco.batch.Batch``, whose C++ thread pool steps them
  without a Python loop per env.

Why they agree bit for bit: ``mj_step`` depends only on the integration state (which includes the
solver warm start and the controls) and the model; the batch keeps exactly that state per env and is
documented to reproduce a loop over one ``MjData`` per env at any thread count. Readouts (``qpos``,
``qvel``, ``sensordata``) are ``(N, ...)`` arrays that stay valid for the backend's lifetime.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import mujoco
import numpy as np
from mujoco import batch as mj_batch

from dexwheel.sim.divergence import DivergenceMonitor
from dexwheel.sim.snapshot import PartOfTask


def write_initial_state(model: mujoco.MjModel, data: mujoco.MjData, qpos: np.ndarray, qvel: np.ndarray) -> None:
    """Reset ``data`` to ``qpos``/``qvel`` at time 0 and run ``mj_forward`` (fills the sensors)."""
    mujoco.mj_resetData(model, data)
    data.qpos[:] = qpos
    data.qvel[:] = qvel
    mujoco.mj_forward(model, data)


class SerialPhysics(PartOfTask):
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
        #: Called as ``on_substep(env, model, data)`` after every ``mj_step`` when set (tests, probes).
        self.on_substep: Callable[[int, mujoco.MjModel, mujoco.MjData], None] | None = None
        self.monitor = DivergenceMonitor(self.data)

    def set_models(self, models: Sequence[mujoco.MjModel]) -> None:
        """Run env ``i`` on ``models[i]`` from now on (the same sizes as before: copies of the model)."""
        self.models = list(models)

    def reset_env(self, env: int, qpos: np.ndarray, qvel: np.ndarray) -> None:
        d = self.data[env]
        write_initial_state(self.models[env], d, qpos, qvel)
        self.monitor.rebase(env)
        if self.num_envs > 1:
            self.qpos[env], self.qvel[env], self.sensordata[env] = d.qpos, d.qvel, d.sensordata

    def sync_data(self, env: int) -> mujoco.MjData:
        """Env ``env``'s MjData at its current state (for rendering)."""
        return self.data[env]

    def set_qvel(self, env: int) -> None:
        """Push an edit of ``self.qvel[env]`` (e.g. a push) into the simulation."""
        if self.num_envs > 1:
            self.data[env].qvel[:] = self.qvel[env]

    def step(self) -> None:
        step, dec, hook = mujoco.mj_step, self.decimation, self.on_substep
        for i, (m, d) in enumerate(zip(self.models, self.data, strict=True)):
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


class BatchPhysics(PartOfTask):
    """All envs in one ``mujoco.batch.Batch``: its C++ thread pool steps them, no Python loop per env.

    The batch keeps each env's integration state (time, qpos, qvel, warm start, ctrl, ...) as a row;
    ``qpos``, ``qvel`` and ``ctrl`` are live ``(N, ...)`` views of those rows and ``sensordata`` is the
    batch's output after the last substep. Env ``i`` runs on ``models[i]`` (domain randomisation and the
    drive's gains edit those models in place, which the batch reads on every call); envs may share one
    model object (then the batch is handed that one model). A scratch ``MjData`` builds initial states at
    reset.
    """

    def __init__(self, models: Sequence[mujoco.MjModel], decimation: int, num_threads: int | None = None) -> None:
        self.models = list(models)
        self.decimation = int(decimation)
        self.num_envs = n = len(self.models)
        m0 = self.models[0]
        threads = min(n, os.cpu_count() or 1) if num_threads is None else int(num_threads)
        self.num_threads = max(1, threads)
        self._batch = mj_batch.Batch(m0, n, nthread=self.num_threads)
        self.set_models(self.models)
        self._scratch = mujoco.MjData(m0)
        self._spec = mujoco.mjtState.mjSTATE_INTEGRATION.value
        self.qpos = self._batch.bind("qpos")
        self.qvel = self._batch.bind("qvel")
        self.ctrl = self._batch.bind("ctrl")  #: ``(N, nu)`` controls for the next :meth:`step`
        self._out = self._batch.bind("sensordata")  # read-only, refreshed by every batch call
        #: ``(N, nsensordata)`` sensors after the last step or reset.
        self.sensordata = np.zeros((n, m0.nsensordata))
        self.monitor = DivergenceMonitor(self._batch.warning[..., 1])  # the rows' live warning counters

    def set_models(self, models: Sequence[mujoco.MjModel]) -> None:
        """Run env ``i`` on ``models[i]`` from now on (copies of one model: MjData's layout stays); one object
        for every env is handed to the batch as one model."""
        self.models = list(models)
        m0 = self.models[0]
        self._batch.set_models(m0 if all(m is m0 for m in self.models) else self.models)

    def reset_env(self, env: int, qpos: np.ndarray, qvel: np.ndarray) -> None:
        d, m = self._scratch, self.models[env]
        write_initial_state(m, d, qpos, qvel)
        mujoco.mj_getState(m, d, self._batch.state[env], self._spec)
        self.sensordata[env] = d.sensordata
        self.monitor.rebase(env)

    def sync_data(self, env: int) -> mujoco.MjData:
        """Env ``env``'s state in a scratch MjData, forward-computed (for rendering; the next call reuses it)."""
        d, m = self._scratch, self.models[env]
        mujoco.mj_setState(m, d, self._batch.state[env], self._spec)
        mujoco.mj_forward(m, d)
        return d

    def load_state(self, env: int, data: mujoco.MjData) -> None:
        """Make env ``env``'s row the integration state of ``data``, which the caller prepared (a pose, its
        actuator targets, a forward pass)."""
        mujoco.mj_getState(self.models[env], data, self._batch.state[env], self._spec)
        self.monitor.rebase(env)

    def sync_into(self, env: int, data: mujoco.MjData) -> mujoco.MjData:
        """Env ``env``'s state written into ``data`` and forward-computed (each env its own MjData to show)."""
        mujoco.mj_setState(self.models[env], data, self._batch.state[env], self._spec)
        mujoco.mj_forward(self.models[env], data)
        return data

    def set_qvel(self, env: int) -> None:
        """``qvel`` is a view of the batch's state: edits take effect at the next step."""

    def step(self) -> None:
        self._batch.step(nstep=self.decimation)
        np.copyto(self.sensordata, self._out)

    def rollout(self, control: np.ndarray, out: dict[str, np.ndarray]) -> None:
        """``control.shape[1]`` physics steps of every env, step ``k`` of env ``i`` under ``control[i, k]``
        (targets that change within the control period: the hand's slew ramp); each step's sensors are
        recorded into ``out["sensordata"]`` ``(N, steps, nsensordata)``."""
        self._batch.rollout(control.shape[1], control=control, record=("sensordata",), out=out)

    def close(self) -> None:
        pass
