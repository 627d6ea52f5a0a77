"""The G20's object tasks on Isaac Lab (``Dexwheel-InHand-Rotate-G20Left-v0`` ...), built from the MuJoCo tasks' config
and term tables (:mod:`dexwheel.tasks.in_hand.config`): :mod:`.config`."""
