"""Moved to :mod:`dexwheel.tasks.hand_pose.action_path` (``HandCommandPath`` is now ``HandActionPath``: "command"
names the task command, the goal); this name stays for code that imports it."""

from dexwheel.tasks.hand_pose.action_path import LAYERS, HandActionPath, joint_group  # noqa: F401

HandCommandPath = HandActionPath
