"""Goal-pose tracking for the LinkerHand G20 on Isaac Lab (``Dexwheel-HandPose-G20Left-v0`` / ``-Right-v0``, the
MuJoCo :mod:`dexwheel.tasks.hand_pose`): the env configs and term maps (:mod:`.config`), the action term
(:mod:`.action`), the goal command (:mod:`.commands`), the terms Isaac Lab has no stock counterpart of
(:mod:`.observations`, :mod:`.rewards`, :mod:`.terminations`, :mod:`.events`) and the contact depth they read
(:mod:`.contacts`). The terms take every number from their configs, which :mod:`.config` fills from the MuJoCo task's
config and the robot description; none is written in them."""
