"""Small MuJoCo helpers for tests."""

import mujoco
import numpy as np


def body_inertia_tensor(model: mujoco.MjModel, body: str) -> np.ndarray:
    """The full inertia tensor about the CoM in body-frame axes, from MuJoCo's principal form."""
    b = model.body(body)
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, b.iquat)
    rot = rot.reshape(3, 3)
    return rot @ np.diag(b.inertia) @ rot.T


def tensor(i6) -> np.ndarray:
    ixx, iyy, izz, ixy, ixz, iyz = i6
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def rpy_quat(rpy) -> np.ndarray:
    """URDF rpy (fixed axes x, y, z) as a MuJoCo quaternion."""
    r, p, y = rpy
    qx = np.array([np.cos(r / 2), np.sin(r / 2), 0, 0])
    qy = np.array([np.cos(p / 2), 0, np.sin(p / 2), 0])
    qz = np.array([np.cos(y / 2), 0, 0, np.sin(y / 2)])
    tmp, out = np.zeros(4), np.zeros(4)
    mujoco.mju_mulQuat(tmp, qz, qy)
    mujoco.mju_mulQuat(out, tmp, qx)
    return out


def same_rotation(q1, q2, atol=1e-9) -> bool:
    return bool(np.allclose(q1, q2, atol=atol) or np.allclose(q1, -np.asarray(q2), atol=atol))


def contacts(model: mujoco.MjModel, data: mujoco.MjData) -> list[tuple[str, str, float]]:
    """(body1, body2, dist) of every active contact."""
    out = []
    for c in data.contact[: data.ncon]:
        b1 = model.body(model.geom_bodyid[c.geom[0]]).name
        b2 = model.body(model.geom_bodyid[c.geom[1]]).name
        out.append((b1, b2, float(c.dist)))
    return out
