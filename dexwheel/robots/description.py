"""A robot described once, as plain data.

Every backend artefact (MJCF through ``mujoco.MjSpec``, URDF, Isaac Lab configs) is built from a
:class:`RobotDescription`. Nothing in here knows about a file format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Vec3 = tuple[float, float, float]
# Inertia tensor about the CoM, body-frame axes, URDF order: ixx iyy izz ixy ixz iyz (kg m^2).
Inertia6 = tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class Inertial:
    mass: float
    com: Vec3
    inertia: Inertia6


@dataclass(frozen=True)
class Joint:
    """A hinge between a body and its parent; ``limits`` None means continuous."""

    name: str
    axis: Vec3
    limits: tuple[float, float] | None
    effort: float
    velocity: float
    damping: float | None = None  # None: the robot's default
    armature: float | None = None


@dataclass(frozen=True)
class Geom:
    """A primitive shape in its body's frame.

    ``size`` follows MuJoCo: box half-sizes (3); capsule/cylinder (radius, half-length) along the
    geom's local z; sphere (radius,). ``quat`` (w, x, y, z) orients the geom.
    """

    name: str
    type: Literal["box", "capsule", "cylinder", "sphere"]
    size: tuple[float, ...]
    pos: Vec3 = (0.0, 0.0, 0.0)
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    rgba: tuple[float, float, float, float] = (0.6, 0.6, 0.6, 1.0)


@dataclass(frozen=True)
class Body:
    name: str
    parent: str | None  # None: the root, attached to the world (or floating)
    pos: Vec3
    rpy: Vec3
    inertial: Inertial
    joint: Joint | None
    collision: tuple[Geom, ...] = ()
    visual: tuple[Geom, ...] = ()


@dataclass(frozen=True)
class Actuator:
    """A per-joint actuator; ``kind`` position (kp, kv) or velocity (kv only, kp 0)."""

    name: str
    joint: str
    kind: Literal["position", "velocity"]
    kp: float
    kv: float
    forcerange: tuple[float, float]
    ctrlrange: tuple[float, float] | None


@dataclass(frozen=True)
class ContactSettings:
    """Defaults every collision geom of the robot shares (MuJoCo names)."""

    margin: float = 0.0
    friction: Vec3 = (1.0, 0.005, 0.0001)
    solref: tuple[float, float] = (0.02, 1.0)
    solimp: tuple[float, float, float] = (0.9, 0.95, 0.001)


@dataclass(frozen=True)
class Mimic:
    """``joint = ratio * source`` (URDF mimic)."""

    joint: str
    source: str
    ratio: float


@dataclass(frozen=True)
class CameraView:
    """A free camera's view (MuJoCo's names): what the robot is shown from by default."""

    lookat: Vec3
    distance: float
    azimuth: float
    elevation: float


@dataclass(frozen=True)
class RobotDescription:
    name: str
    bodies: tuple[Body, ...]  # parents before children
    actuators: tuple[Actuator, ...]
    floating_base: bool
    timestep: float
    integrator: Literal["Euler", "implicitfast", "RK4", "implicit"]
    joint_damping: float
    joint_armature: float
    contact: ContactSettings
    contact_excludes: tuple[tuple[str, str], ...] = ()
    mimics: tuple[Mimic, ...] = ()
    base_height: float = 0.0  # initial base origin height for floating robots
    gravity: Vec3 = (0.0, 0.0, -9.81)
    balanceinertia: bool = False
    camera: CameraView | None = None  # the default view (viewer, rendering); None: MuJoCo's own

    # -- queries ------------------------------------------------------------------------------
    @property
    def joints(self) -> tuple[Joint, ...]:
        return tuple(b.joint for b in self.bodies if b.joint is not None)

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    def joint(self, name: str) -> Joint:
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(f"{self.name}: no joint {name!r}; joints are {list(self.joint_names)}")

    def body(self, name: str) -> Body:
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(f"{self.name}: no body {name!r}")

    @property
    def total_mass(self) -> float:
        return float(sum(b.inertial.mass for b in self.bodies))

    @property
    def root(self) -> Body:
        return self.bodies[0]


def inertia_matrix(i: Inertia6) -> np.ndarray:
    """3x3 tensor from (ixx, iyy, izz, ixy, ixz, iyz)."""
    ixx, iyy, izz, ixy, ixz, iyz = i
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def rpy_to_matrix(rpy: Vec3) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def matrix_to_rpy(m: np.ndarray) -> Vec3:
    """Inverse of :func:`rpy_to_matrix` (away from pitch = +-pi/2)."""
    pitch = float(np.arcsin(-np.clip(m[2, 0], -1.0, 1.0)))
    roll = float(np.arctan2(m[2, 1], m[2, 2]))
    yaw = float(np.arctan2(m[1, 0], m[0, 0]))
    return (roll, pitch, yaw)
