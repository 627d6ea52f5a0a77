"""The hand-pose task's event terms, each ``func(task, env, rng, **params)`` for one env at its reset.

They run in table order after the start pose is set to the open hand and before the goal is drawn, each
with the env's own generator (so a vector env's env ``i`` draws what a single env with that seed draws).
A start pose given in ``reset(options={"init_qpos": ...})`` is used as given: no reset event runs.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from dexwheel.tasks.terms import Check


def reset_joints_by_offset(
    task, env: int, rng: np.random.Generator, scale: Annotated[float, Check(ge=0, unit="rad")]
) -> None:
    """Uniform noise of ``+-scale`` rad on each active joint of the start pose, clipped to the joint
    limits, kept only if that pose is collision-free (within the penetration tolerance); 0 draws nothing."""
    if scale <= 0:
        return
    coupling = task.coupling
    q0 = task.start_pose[env]
    noisy = np.clip(q0 + rng.uniform(-scale, scale, q0.shape), coupling.active_lower, coupling.active_upper)
    if task.pose_depth(noisy) <= task.cfg.collision.penetration_tol:
        task.start_pose[env] = noisy
