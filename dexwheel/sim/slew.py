"""Slew: move joints toward a goal at a bounded angular speed (seed 5.3).

The bridge moves every joint at most ``slew_rad_s * dt`` toward its goal per physics step, so a
jump in the command does not teleport the hand. ``slew_rad_s = 0`` means "jump" (no limit).
All functions work on any leading batch shape (one row per env).
"""

from __future__ import annotations

import numpy as np


def slew_toward(
    current: np.ndarray, goal: np.ndarray, max_step: float | np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """``current`` moved toward ``goal`` by at most ``max_step`` per joint (scalar or per joint; a
    scalar ``<= 0`` or ``inf`` jumps).

    Computed as ``goal - (diff - clip(diff))``: a joint within ``max_step`` of its goal lands on the goal
    exactly (``current + (goal - current)`` can miss it by one ulp), so a reached goal is a fixed point.
    """
    if out is None:
        out = np.empty(np.broadcast_shapes(np.shape(current), np.shape(goal)), dtype=np.float64)
    if np.ndim(max_step) == 0 and max_step <= 0.0:
        out[...] = goal
        return out
    diff = np.subtract(goal, current)
    excess = diff - np.minimum(np.maximum(diff, -max_step), max_step)  # 0.0 exactly within reach
    return np.subtract(goal, excess, out=out)


def slew_ramp(start: np.ndarray, goal: np.ndarray, max_step: float | np.ndarray, nsteps: int) -> np.ndarray:
    """The ``nsteps`` poses a slew visits from ``start``: shape ``(*batch, nsteps, dof)``.

    Step ``k`` (1-based) is ``start`` moved toward ``goal`` by at most ``k * max_step``: the closed form
    of applying :func:`slew_toward` ``k`` times (joints move monotonically toward their goal, so the
    two agree up to rounding). The PD drive computes the same rows in its compiled step.
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
