"""dexwheel: robot-learning environments for the LinkerHand G20 hand and the Solenopsis wheel-leg platform."""

from dexwheel.envs import register_envs

register_envs()

__version__ = "0.1.0"
