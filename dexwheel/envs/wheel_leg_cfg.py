"""Moved to :mod:`dexwheel.tasks.velocity.config`; this name stays so existing imports keep working."""

from dexwheel.tasks.velocity.config import *  # noqa: F403
from dexwheel.tasks.velocity.config import REWARD_TERMS, WheelLegEnvCfg, make_cfg, mirror_maps  # noqa: F401
