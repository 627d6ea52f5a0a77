"""Moved to :mod:`dexwheel.tasks.velocity.task`; this name stays so existing imports keep working."""

from dexwheel.tasks.velocity.task import *  # noqa: F403
from dexwheel.tasks.velocity.task import TaskViews, WheelLegTask, leg_heights  # noqa: F401
