"""The tasks (MDPs), one folder each: config, named terms, the batched task.

* :mod:`dexwheel.tasks.velocity`: velocity tracking for the wheel-leg robots (``Solenopsis-v0``, ``M20Legacy-v0``);
* :mod:`dexwheel.tasks.hand_pose`: goal-pose tracking for the G20 hand (``G20Hand-v0``);
* :mod:`dexwheel.tasks.terms`: what every task's term tables are made of (entries, resolution, checks);
* :mod:`dexwheel.tasks.kernels`: the compiled loops the terms of both tasks share;
* :mod:`dexwheel.tasks.spaces`: what a task declares to Gymnasium (the integer action box, its reset options).

The Gymnasium faces (:mod:`dexwheel.envs`) import the tasks, never the other way.
"""
