"""The G20's object tasks (``G20Rotate-v0``, ``G20Reorient-v0``): config and term tables (:mod:`.config`), the scene
(:mod:`.scene`), the grasp cache (:mod:`.grasps` samples it, :mod:`.grasp_cache` stores it), the named terms (:mod:`.rewards`, :mod:`.observations`,
:mod:`.terminations`, :mod:`.events`) and the batched task (:mod:`.task`)."""
