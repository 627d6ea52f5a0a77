"""Quaternion arithmetic of the in-hand tasks (w x y z, batched over the leading axis).

Every quantity a golden file pins is computed here in compiled loops (:mod:`dexwheel.tasks.kernels`' rule): sums
left to right and libm's ``acos``, ``sin``, ``cos``, never numpy's SIMD-dispatched ``arccos``, ``einsum`` or
``linalg.norm``, whose last bits differ between CPUs with and without AVX-512
(docs/explanation/determinism.md, A term that stays bit-exact).
"""

from __future__ import annotations

import math

import numpy as np

from dexwheel.jit import kernel

Array = np.ndarray


@kernel
def quat_angle(a: Array, b: Array) -> Array:
    """The rotation angle (rad, 0..pi) between orientations ``a`` and ``b`` ``(N, 4)``."""
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        dot = abs(a[i, 0] * b[i, 0] + a[i, 1] * b[i, 1] + a[i, 2] * b[i, 2] + a[i, 3] * b[i, 3])
        out[i] = 2.0 * math.acos(min(dot, 1.0))
    return out


@kernel
def up_axis_angle(q: Array, axis: Array) -> Array:
    """The angle (rad, 0..pi) between the body z axis of orientation ``q`` ``(N, 4)`` and the unit ``axis``
    ``(N, 3)`` (both in the world frame)."""
    out = np.empty(q.shape[0])
    for i in range(q.shape[0]):
        w, x, y, z = q[i, 0], q[i, 1], q[i, 2], q[i, 3]
        ux, uy, uz = 2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)
        c = ux * axis[i, 0] + uy * axis[i, 1] + uz * axis[i, 2]
        out[i] = math.acos(min(max(c, -1.0), 1.0))
    return out


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``v`` ``(N, 3)`` rotated by ``q`` ``(N, 4)`` (products and sums only: the same bits on every CPU)."""
    w, u = q[:, :1], q[:, 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def random_quat(rng: np.random.Generator) -> np.ndarray:
    """A uniformly random orientation (Shoemake's method: three uniforms; libm's ``sin`` and ``cos``)."""
    u1, u2, u3 = rng.random(3).tolist()
    a, b = math.sqrt(1.0 - u1), math.sqrt(u1)
    t2, t3 = 2.0 * math.pi * u2, 2.0 * math.pi * u3
    return np.array([b * math.cos(t3), a * math.sin(t2), a * math.cos(t2), b * math.sin(t3)])
