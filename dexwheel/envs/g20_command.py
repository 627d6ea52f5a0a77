"""Moved to :mod:`dexwheel.tasks.hand_pose.command`; this name stays for code that imports it."""

from dexwheel.tasks.hand_pose.command import LAYERS, HandCommandPath, joint_group  # noqa: F401
