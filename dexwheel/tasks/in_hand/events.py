"""The in-hand tasks' event terms, each ``func(task, env, rng, **params)`` for one env at its reset.

They run in table order before the env's physics is set: :func:`reset_from_grasps` draws the episode's start (the
hand's joints and the object's pose) from the grasp cache; later events may change ``task.start_joints[env]`` and
``task.start_object[env]``, each with the env's own generator (a vector env's env ``i`` draws what a single env
with that seed draws).
"""

from __future__ import annotations

import numpy as np


def reset_from_grasps(task, env: int, rng: np.random.Generator) -> None:
    """A grasp of the cache, uniformly (HORA's and the LEAP hand's reset): its joints and its object pose."""
    k = int(rng.integers(len(task.grasps)))
    task.start_joints[env] = task.grasps.joints[k]
    task.start_object[env] = task.grasps.object_pose[k]
