"""The tasks (MDPs), one folder each: config, named terms, the batched task.

* :mod:`dexwheel.tasks.velocity`: velocity tracking for the wheel-leg robots (``Solenopsis-v0``, ``M20Legacy-v0``);
* :mod:`dexwheel.tasks.hand_pose`: goal-pose tracking for the G20 hand (``G20Hand-v0``);
* :mod:`dexwheel.tasks.terms`: what every task's term tables are made of (entries, resolution, checks);
* :mod:`dexwheel.tasks.kernels`: the compiled loops the terms of both tasks share.

The Gymnasium faces (:mod:`dexwheel.envs`) import the tasks; the tasks take only the action spaces'
integer box from :mod:`dexwheel.envs.gym_api`.
"""
