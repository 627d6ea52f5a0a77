"""Moved to :mod:`dexwheel.tasks.hand_pose.action_path`; this name stays for code that imports it."""

from dexwheel.tasks.hand_pose.action_path import LAYERS, HandActionPath, joint_group  # noqa: F401

HandCommandPath = HandActionPath
