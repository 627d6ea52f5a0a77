"""Slew: move joints toward a goal at a bounded angular speed (vendor bridge §5.3).

The bridge moves every joint at most ``slew_rad_s * dt`` toward its goal per physics step, so a
jump in the command does not teleport the hand. ``slew_rad_s = 0`` means "jump" (no limit).
:func:`slew_toward` is the one implementation: the hard-write and PD drives' compiled steps call it,
and :func:`slew_ramp` runs it for any leading batch shape (one row per env).
"""

from __future__ import annotations

import numpy as np

from dexwheel.jit import kernel


@kernel
def slew_toward(start: np.ndarray, goal: np.ndarray, budget: np.ndarray, out: np.ndarray) -> None:
    """``out`` = ``start`` moved toward ``goal`` by at most ``budget`` per joint, as ``goal - (diff -
    clip(diff, -budget, budget))``: a joint within reach lands on its goal exactly (a reached goal is a
    fixed point); an infinite budget jumps."""
    for j in range(start.shape[0]):
        diff = goal[j] - start[j]
        b = budget[j]
        out[j] = goal[j] - (diff - min(max(diff, -b), b))


@kernel
def _ramp(start: np.ndarray, goal: np.ndarray, budget: np.ndarray, out: np.ndarray) -> None:
    for i in range(start.shape[0]):
        for k in range(budget.shape[0]):
            slew_toward(start[i], goal[i], budget[k], out[i, k])


def slew_ramp(start: np.ndarray, goal: np.ndarray, max_step: float | np.ndarray, nsteps: int) -> np.ndarray:
    """The ``nsteps`` poses a slew visits from ``start``: shape ``(*batch, nsteps, dof)``.

    Step ``k`` (1-based) is ``start`` moved toward ``goal`` by at most ``k * max_step``, computed as
    ``goal - (diff - clip(diff))``: a joint within reach lands on its goal exactly, so a reached goal is
    a fixed point (:func:`slew_toward`, which the PD drive's compiled step runs for each row; the hard-write
    step is its one-row case).
    """
    start, goal = np.broadcast_arrays(np.asarray(start, dtype=np.float64), np.asarray(goal, dtype=np.float64))
    dof = start.shape[-1]
    budget = np.ascontiguousarray(np.broadcast_to(slew_budget(max_step, nsteps), (nsteps, dof)))
    out = np.empty((*start.shape[:-1], nsteps, dof))
    _ramp(np.ascontiguousarray(start).reshape(-1, dof), np.ascontiguousarray(goal).reshape(-1, dof), budget,
          out.reshape(-1, nsteps, dof))  # fmt: skip
    return out


def slew_budget(max_step: float | np.ndarray, nsteps: int) -> np.ndarray:
    """Cumulative budgets ``k * max_step``, ``(nsteps, 1)`` or ``(nsteps, dof)``.

    A scalar ``max_step <= 0`` means jump (infinite budget).
    """
    if np.ndim(max_step) == 0 and max_step <= 0.0:
        return np.full((nsteps, 1), np.inf)
    k = np.arange(1, nsteps + 1, dtype=np.float64)[:, None]
    return k * np.atleast_1d(np.asarray(max_step, dtype=np.float64))[None, :]
