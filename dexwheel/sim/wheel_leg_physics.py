"""Moved to :mod:`dexwheel.sim.physics` (both task families step their physics there)."""

from dexwheel.sim.physics import BatchPhysics, SerialPhysics, write_initial_state  # noqa: F401
