"""Physics blow-up detection, one rule for every env that integrates (wheel-leg, G20 PD).

MuJoCo checks every ``mj_step`` for NaN, inf or huge (> 1e10) ``qpos``, ``qvel`` and ``qacc``; when it
finds one it counts a warning (``mjWARN_BADQPOS``, ``_BADQVEL``, ``_BADQACC``) and resets that
simulation to the model's default state, so the state a step leaves is finite but meaningless. A step
diverged when one of those counters rose during it, or when the state it left is not finite (a
simulation the check did not reset). The envs end such an episode as truncated with
``info["diverged"] = True``, and report a finite observation and a zero reward for it.

A hard-write step integrates nothing (it writes a pose within the joint limits and runs
``mj_forward``), so it cannot diverge; its ``diverged`` is always False.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import mujoco
import numpy as np

from dexwheel.jit import kernel

#: MuJoCo's warnings for an unstable simulation (it resets the simulation when it raises one).
UNSTABLE_WARNINGS = (
    mujoco.mjtWarning.mjWARN_BADQPOS,
    mujoco.mjtWarning.mjWARN_BADQVEL,
    mujoco.mjtWarning.mjWARN_BADQACC,
)
_IDX = np.array([int(w) for w in UNSTABLE_WARNINGS], dtype=np.intp)
_LO, _HI = int(_IDX.min()), int(_IDX.max()) + 1
assert np.array_equal(_IDX, np.arange(_LO, _HI)), "the unstable warnings are consecutive: one slice reads them"


class DivergenceMonitor:
    """Tells which of ``N`` simulations diverged since the previous :meth:`check`.

    ``counters``: a live ``(N, mjNWARNING)`` array of MuJoCo's warning counts (``mujoco.batch.Batch``'s
    ``warning[..., 1]``), or a sequence of ``MjData`` whose ``warning.number`` views are read.
    """

    def __init__(self, counters: np.ndarray | Sequence[mujoco.MjData]) -> None:
        if isinstance(counters, np.ndarray):
            self._views: list[np.ndarray] | None = None
            self._batch = counters
        else:
            self._views = [d.warning.number for d in counters]  # live views into each MjData
            self._batch = None
        self._last: np.ndarray = self._counts()
        #: Whose warning counters rose in the last :meth:`check` that found something (MuJoCo's own verdict,
        #: beside the outputs that are not finite).
        self.warned = np.zeros(len(self._last), dtype=bool)

    def _counts(self) -> np.ndarray:
        if self._views is None:
            return self._batch[:, _LO:_HI].sum(axis=1)
        return np.array([sum(v[_LO:_HI].tolist()) for v in self._views])  # tolist: 5x faster on 3 numbers

    def check(self, *outputs: np.ndarray) -> np.ndarray | None:
        """``None`` when no simulation diverged (the common case), else the ``(N,)`` mask of those that
        did: a warning counter rose (:attr:`warned`), or a row of one of the ``(N, ...)`` ``outputs`` (what the
        step reports: observation, reward) is not finite, as a blow-up in a control period's last physics
        step leaves it (MuJoCo checks the state at the start of the next ``mj_step``). The task tells those
        from a term's own value that is not finite by the physics state (:mod:`dexwheel.tasks.manager`).

        A reset (``mj_resetData``) zeroes an MjData's counters, so only a rise counts.
        """
        counts = self._counts()
        rose = counts > self._last
        self._last = counts
        if not rose.any() and all(all_finite(s) for s in outputs):
            return None
        self.warned = rose.copy()
        for s in outputs:
            rose |= ~np.isfinite(s.reshape(s.shape[0], -1)).all(axis=1)
        return rose

    def rebase(self, i: int) -> None:
        """Simulation ``i`` was reset: count its warnings from now on."""
        self._last[i] = self._counts()[i]


def contain(diverged: np.ndarray, reward: np.ndarray, terms: np.ndarray, *outputs: np.ndarray) -> None:
    """What a step reports for the ``diverged`` envs: a zero ``reward`` and zero reward ``terms`` (an
    ``(N, k)`` view); every output (observation, info) made finite, in place."""
    reward[diverged] = 0.0
    terms[diverged] = 0.0
    for out in outputs:
        np.nan_to_num(out, copy=False, nan=0.0, posinf=0.0, neginf=0.0)


@kernel
def all_finite(values: np.ndarray) -> bool:
    """Whether every entry is finite (a compiled loop: numpy's reductions cost more on a few dozen numbers)."""
    for x in values.flat:  # noqa: SIM110  (numba compiles the loop, not a generator in all())
        if not math.isfinite(x):
            return False
    return True
