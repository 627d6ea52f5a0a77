"""Moved to :mod:`dexwheel.tasks.hand_pose.config`; this name stays for code that imports it."""

from dexwheel.tasks.hand_pose.config import *  # noqa: F403
from dexwheel.tasks.hand_pose.config import REWARD_TERMS, G20HandConfig, make_cfg  # noqa: F401
