"""Moved to :mod:`dexwheel.rl.rsl.symmetry`; this path stays because runs saved before name it
(``"dexwheel.rl.symmetry:mirrored"`` in their runner config)."""

from dexwheel.rl.rsl.symmetry import mirrored  # noqa: F401
