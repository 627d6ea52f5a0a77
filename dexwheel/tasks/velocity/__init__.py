"""Velocity tracking for the wheel-leg robots (``Solenopsis-v0``, ``M20Legacy-v0``): config and term tables
(:mod:`.config`), the named terms (:mod:`.rewards`, :mod:`.observations`, :mod:`.terminations`), the compiled
loops they share (:mod:`.kernels`) and the batched task (:mod:`.task`)."""
