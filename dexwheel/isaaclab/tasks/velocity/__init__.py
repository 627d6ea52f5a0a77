"""Velocity tracking for the wheel-leg robots on Isaac Lab, flat and rough (``Dexwheel-Velocity-Flat-Solenopsis-v0``,
..., the MuJoCo :mod:`dexwheel.tasks.velocity`): the env configs and term maps (:mod:`.config`), the action term
(:mod:`.action`), the velocity command (:mod:`.commands`), the terms Isaac Lab's stock ones define otherwise
(:mod:`.observations`, :mod:`.rewards`, :mod:`.terminations`, :mod:`.events`), the terrain curriculum
(:mod:`.curriculum`) and the scene's terrain as the rough task's terms read it (:mod:`.terrain`)."""
