"""The tasks (MDPs), one folder each, every one run by the one task runtime and named in the one task registry.

* :mod:`dexwheel.tasks.velocity`: velocity tracking for the wheel-leg robots, flat and on terrain;
* :mod:`dexwheel.tasks.hand_pose`: goal-pose tracking for the G20 hand;
* :mod:`dexwheel.tasks.in_hand`: the G20's object tasks (rotation, reorientation);
* :mod:`dexwheel.tasks.runtime`: the step, reset, ``info``, containment and copies of every task;
* :mod:`dexwheel.tasks.registry`: one record per task, from which the Gymnasium ids, the Hydra task options, the
  metrics, protocols, Isaac Lab ids, golden cases and the reference derive;
* :mod:`dexwheel.tasks.mdp`: the generic terms every task may use (action rate, last action, joint state, torques,
  termination);
* :mod:`dexwheel.tasks.terms`: what every task's term tables are made of (entries, resolution, checks);
* :mod:`dexwheel.tasks.manager`: the term runner; :mod:`dexwheel.tasks.kernels`: the compiled loops terms share;
* :mod:`dexwheel.tasks.spaces`: what a task declares to Gymnasium (the integer action box, its reset options).

The Gymnasium faces (:mod:`dexwheel.envs`) import the tasks, never the other way; no task folder imports another.
"""

from dexwheel.tasks import hand_pose, in_hand, velocity  # noqa: F401  (each registers its tasks)
