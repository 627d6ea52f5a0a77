"""The tasks (MDPs), one folder each: config, named terms, the batched task.

* :mod:`dexwheel.tasks.velocity`: velocity tracking for the wheel-leg robots (``Solenopsis-v0``, ``M20Legacy-v0``);
* :mod:`dexwheel.tasks.terms`: what every task's term tables are made of (entries, resolution, checks).

Nothing here imports :mod:`dexwheel.envs`: the Gymnasium faces import the tasks, never the other way.
"""
