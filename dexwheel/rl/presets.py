"""Scripted action sequences for looking at a robot: G20 SDK poses, wheel-leg driving manoeuvres."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dexwheel.robots import g20


def g20_sdk_sequence(hold_steps: int = 50) -> Iterator[np.ndarray]:
    """Open -> half fist -> full fist -> open, each held ``hold_steps`` control steps (SDK 0..255)."""
    while True:
        for cmd in (g20.G20_OPEN_CMD, g20.G20_HALF_FIST_CMD, g20.G20_FULL_FIST_CMD):
            for _ in range(hold_steps):
                yield np.asarray(cmd, dtype=np.float32)


def wheel_leg_sequence(action_dim: int, hold_steps: int = 100) -> Iterator[np.ndarray]:
    """Stand, roll forward, turn left, stop: normalised [knee offsets (4), wheel velocities (4)].

    With the joint axis (0, -1, 0) a positive wheel velocity rolls the robot backward, so forward is
    negative; turning left spins the right wheels forward (negative) and the left ones backward.
    """
    stand = np.zeros(action_dim, dtype=np.float32)
    forward, turn = stand.copy(), stand.copy()
    forward[4:8] = -0.5
    turn[4:8] = (0.8, -0.8, 0.8, -0.8)  # fl, fr, hl, hr (turning on the spot skids: it takes large targets)
    while True:
        for action in (stand, forward, turn, stand):
            for _ in range(hold_steps):
                yield action
