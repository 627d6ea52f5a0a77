"""Slew: move joints toward a goal at a bounded angular speed (seed 5.3).

The bridge moves every joint at most ``slew_rad_s * dt`` toward its goal per physics step, so a
jump in the command does not teleport the hand. ``slew_rad_s = 0`` means "jump" (no limit).
All functions work on any leading batch shape (one row per env).
"""

from __future__ import annotations

import numpy as np


def slew_ramp(start: np.ndarray, goal: np.ndarray, max_step: float | np.ndarray, nsteps: int) -> np.ndarray:
    """The ``nsteps`` poses a slew visits from ``start``: shape ``(*batch, nsteps, dof)``.

    Step ``k`` (1-based) is ``start`` moved toward ``goal`` by at most ``k * max_step``, computed as
    ``goal - (diff - clip(diff))``: a joint within reach lands on its goal exactly, so a reached goal is
    a fixed point. The PD drive computes the same rows in its compiled step; the hard-write step is its
    one-row case.
    """
    budget = slew_budget(max_step, nsteps)
    goal_k = goal[..., None, :]
    diff = goal_k - start[..., None, :]
    return goal_k - (diff - np.minimum(np.maximum(diff, -budget), budget))


def slew_budget(max_step: float | np.ndarray, nsteps: int) -> np.ndarray:
    """Cumulative budgets ``k * max_step``, ``(nsteps, 1)`` or ``(nsteps, dof)``.

    A scalar ``max_step <= 0`` means jump (infinite budget).
    """
    if np.ndim(max_step) == 0 and max_step <= 0.0:
        return np.full((nsteps, 1), np.inf)
    k = np.arange(1, nsteps + 1, dtype=np.float64)[:, None]
    return k * np.atleast_1d(np.asarray(max_step, dtype=np.float64))[None, :]
