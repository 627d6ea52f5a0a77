"""Goal-pose tracking for the LinkerHand G20 (``G20Hand-v0``): config and term tables (:mod:`.config`), the
action term (:mod:`.action`) and the composer path (:mod:`.command`), the named terms (:mod:`.rewards`,
:mod:`.observations`, :mod:`.terminations`, :mod:`.events`), the compiled loops (:mod:`.kernels`) and the
batched task (:mod:`.task`)."""
