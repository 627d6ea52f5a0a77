"""The G20's hand layer, which both hand tasks (:mod:`dexwheel.tasks.hand_pose`, :mod:`dexwheel.tasks.in_hand`) and
both backends compose: the action map (:mod:`.action`: the four G20 mappings of :mod:`dexwheel.control`, batched), the
action path (:mod:`.action_path`: mapped goals -> composer layers -> resolver), the control rate (:mod:`.config`).
No task folder imports another; what the hand tasks share lives here."""
