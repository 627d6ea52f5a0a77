"""The hand-pose task's command: each env's goal pose of the 16 active joints.

A goal is drawn at each reset and every ``goal_switch_steps`` control steps, from the env's own generator:
a preset (``goal_mode="presets"``, or with probability ``preset_goal_prob`` in ``"mixed"``) or a uniform pose
within the joint limits that the collision check finds free (at most ``random_goal_tries`` draws; the open
hand when none is). Joints the ``hold`` layer holds are at their held position in every goal, so they are
neither asked for nor scored. A goal given by the user (``reset(options={"goal": ...})``, :func:`set_goal`) is
checked, not clipped. The functions take the task (:class:`~dexwheel.tasks.hand_pose.task.G20HandTask`, whose
methods of the same names they are).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dexwheel.control import ActionError
from dexwheel.robots.g20 import GOAL_PRESETS
from dexwheel.tasks.hand_pose.config import _choice


def pose_depth(task, q_active: np.ndarray) -> float:
    """Deepest penetration (m) of an active-joint pose (on a scratch MjData)."""
    return task.projector.depth(task._scratch, task.coupling.complete(q_active, clip_mimic=True))


def sample_goal(task, rng: np.random.Generator) -> np.ndarray:
    """A goal from the presets or a random collision-free pose (bounded, deterministic retries)."""
    cfg = task.cfg
    use_preset = cfg.goal_mode == "presets" or (cfg.goal_mode == "mixed" and rng.random() < cfg.preset_goal_prob)
    if use_preset:
        return held(task, task.presets[cfg.goal_presets[int(rng.integers(len(cfg.goal_presets)))]])
    lo, hi = task.coupling.active_lower, task.coupling.active_upper
    for _ in range(cfg.random_goal_tries):
        q = held(task, rng.uniform(lo, hi))
        if pose_depth(task, q) <= cfg.collision.penetration_tol:
            return q
    return held(task, task.open_pose)


def held(task, goal: np.ndarray) -> np.ndarray:
    """``goal`` (a copy) with each joint the ``hold`` layer holds at its held position: a held joint is
    no goal of the policy's, so it is neither asked for nor scored (its error is the hold's, ~0)."""
    goal = np.array(goal, dtype=np.float64)
    goal[task._held_idx] = task._held_pose
    return goal


def goal_from_option(task, goal: Any, what: str = "goal") -> np.ndarray:
    """A pose as given (a preset name, ``{joint: rad}`` with the open hand for joints not named, or 16
    radians): a value out of range, NaN or inf raises naming ``what``, the joint and its range (a given
    pose is meant as given; clipping is for action streams)."""
    if isinstance(goal, str):
        _choice(what, goal, tuple(GOAL_PRESETS))
        return task.presets[goal].copy()
    try:
        return task.actions.nominal.checked(goal, task.open_pose, what)
    except ActionError as exc:
        raise type(exc)(f"G20Hand: {exc}") from None


def set_goal(task, i: int, goal: Any) -> None:
    """Replace env ``i``'s goal (a preset name, ``{joint: rad}`` or 16 radians in ACTIVE_JOINTS order)."""
    task.goal[i] = held(task, goal_from_option(task, goal))


def switch_goals(task) -> None:
    """A new goal in every env whose episode reached a multiple of ``goal_switch_steps``."""
    switched = task.elapsed % task._switch_steps == 0
    task.switched[:] = switched
    for i in np.flatnonzero(switched).tolist():
        task.goal[i] = sample_goal(task, task.rngs[i])  # type: ignore[arg-type]
