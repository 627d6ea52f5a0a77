"""Quaternion arithmetic of the in-hand tasks (w x y z, batched over the leading axis)."""

from __future__ import annotations

import numpy as np


def quat_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rotation angle (rad, 0..pi) between orientations ``a`` and ``b`` ``(N, 4)``."""
    dot = np.abs(np.einsum("ij,ij->i", a, b))
    return 2.0 * np.arccos(np.clip(dot, -1.0, 1.0))


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``v`` ``(N, 3)`` rotated by ``q`` ``(N, 4)``."""
    w, u = q[:, :1], q[:, 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def random_quat(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random orientation (Shoemake's method: three uniforms)."""
    u1, u2, u3 = rng.random(3)
    a, b = np.sqrt(1.0 - u1), np.sqrt(u1)
    return np.array([a * np.sin(2 * np.pi * u2), a * np.cos(2 * np.pi * u2), b * np.sin(2 * np.pi * u3),
                     b * np.cos(2 * np.pi * u3)])[[3, 0, 1, 2]]  # fmt: skip
