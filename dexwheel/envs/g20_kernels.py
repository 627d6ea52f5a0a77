"""Moved to :mod:`dexwheel.tasks.hand_pose.kernels`; this name stays for code that imports it.

``INFO_KEYS``: the default tables' ``info`` keys (a task's own: ``task.info_keys``).
"""

from dexwheel.tasks.hand_pose.config import REWARD_TERMS
from dexwheel.tasks.hand_pose.kernels import *  # noqa: F403
from dexwheel.tasks.hand_pose.kernels import METRIC_KEYS

INFO_KEYS = (*(f"reward_{t}" for t in REWARD_TERMS), *METRIC_KEYS)
