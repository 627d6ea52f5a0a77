"""dexwheel: robot-learning environments for the LinkerHand G20 hand and the Solenopsis wheel-leg platform."""

from dexwheel import mujoco_gl
from dexwheel.envs import register_envs

mujoco_gl.guard()  # MUJOCO_GL=osmesa without OSMesa: MuJoCo's import would fail (rendering then names the library)
register_envs()

__version__ = "0.1.0"
