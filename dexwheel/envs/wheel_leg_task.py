"""Moved to :mod:`dexwheel.tasks.velocity.task`; this name stays for code that imports it."""

from dexwheel.tasks.velocity.task import TaskViews, WheelLegTask  # noqa: F401


def leg_heights(p, knees):
    """Moved to :meth:`dexwheel.robots.wheel_leg.WheelLegParams.leg_heights`."""
    return p.leg_heights(knees)
