"""The one drive interface of both robot families: N envs' joint targets in, one control step of MuJoCo out.

A drive owns how the targets reach the simulation and the stepping that follows, so a task's step is the
same three lines for every robot (action path -> ``drive.step(targets)`` -> terms):

* :class:`~dexwheel.sim.hand_drive.HardWriteDrive` (G20, the vendor bridge's default): slew, collision
  projection, write the completed pose, ``mj_forward``; ``targets`` ``(N, 16)`` active-joint positions;
* :class:`~dexwheel.sim.hand_drive.PDDrive` (G20): slewed, coupled position-actuator targets for ``nsub``
  ``mj_step`` calls; ``targets`` as for hard-write;
* :class:`~dexwheel.sim.wheel_leg_drive.MotorFrameDrive` (Solenopsis, M20): a robot-order motor frame
  ``(5, N, nu)`` (positions, gains, velocities, torques) as affine-PD actuator controls, then
  ``decimation`` ``mj_step`` calls through :mod:`dexwheel.sim.physics`; ``targets`` is the frame.

Starting an episode is not part of the interface: a hand starts at rest in a joint pose (``reset_env`` /
``set_pose`` of the hand drives), a wheel-leg robot from a floating-base state (its physics' ``reset_env``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import mujoco
import numpy as np


@runtime_checkable
class Drive(Protocol):
    """What every task drive provides (``isinstance(drive, Drive)`` checks it)."""

    @property
    def num_envs(self) -> int:
        """The envs the drive steps."""
        ...

    def step(self, targets: np.ndarray) -> None:
        """Advance every env by one control step toward ``targets`` (the drive's documented layout)."""
        ...

    def sync_data(self, i: int) -> mujoco.MjData:
        """Env ``i``'s MjData at its current state (rendering, probes)."""
        ...
