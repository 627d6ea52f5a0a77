"""Geometry helpers for robot descriptions: capsules between points, mirror images."""

from __future__ import annotations

import dataclasses

import numpy as np

from dexwheel.robots.description import Body, Geom, Inertial, Joint, RobotDescription, Vec3


def quat_z_to(direction: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (w, x, y, z) rotating +z onto ``direction``."""
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    z = np.array([0.0, 0.0, 1.0])
    c = float(np.dot(z, d))
    if c < -1.0 + 1e-12:
        return (0.0, 1.0, 0.0, 0.0)
    axis = np.cross(z, d)
    w = 1.0 + c
    q = np.array([w, *axis])
    q /= np.linalg.norm(q)
    return tuple(float(v) for v in q)  # type: ignore[return-value]


def capsule_between(name: str, p0: Vec3, p1: Vec3, radius: float, rgba=(0.6, 0.6, 0.6, 1.0)) -> Geom:
    """A capsule whose segment runs from ``p0`` to ``p1`` (MuJoCo's fromto, kept as pos/quat/size)."""
    a, b = np.asarray(p0, float), np.asarray(p1, float)
    half = float(np.linalg.norm(b - a) / 2)
    pos = tuple(float(v) for v in (a + b) / 2)
    return Geom(name, "capsule", (radius, half), pos, quat_z_to(b - a), rgba)  # type: ignore[arg-type]


def _flip_y(v: Vec3) -> Vec3:
    return (v[0], -v[1], v[2])


def _mirror_geom(g: Geom) -> Geom:
    w, x, y, z = g.quat
    return dataclasses.replace(g, pos=_flip_y(g.pos), quat=(w, -x, y, -z))


def _mirror_body(b: Body) -> Body:
    """Mirror through the xz-plane, M = diag(1, -1, 1).

    Positions p -> M p; orientations R -> M R M, i.e. rpy (r, p, y) -> (-r, p, -y); inertia
    I -> M I M (ixy, iyz flip sign); hinge axes, being rotations, (ax, ay, az) -> (-ax, ay, -az).
    """
    ixx, iyy, izz, ixy, ixz, iyz = b.inertial.inertia
    inertial = Inertial(b.inertial.mass, _flip_y(b.inertial.com), (ixx, iyy, izz, -ixy, ixz, -iyz))
    joint: Joint | None = None
    if b.joint is not None:
        ax, ay, az = b.joint.axis
        joint = dataclasses.replace(b.joint, axis=(-ax + 0.0, ay, -az + 0.0))
    r, p, y = b.rpy
    return dataclasses.replace(
        b,
        pos=_flip_y(b.pos),
        rpy=(-r + 0.0, p, -y + 0.0),
        inertial=inertial,
        joint=joint,
        collision=tuple(_mirror_geom(g) for g in b.collision),
        visual=tuple(_mirror_geom(g) for g in b.visual),
    )


def mirror_y(desc: RobotDescription, name: str) -> RobotDescription:
    """The mirror image of a robot through its xz-plane: same names, limits and actuators."""
    cam = desc.camera and dataclasses.replace(desc.camera, lookat=_flip_y(desc.camera.lookat))
    return dataclasses.replace(desc, name=name, bodies=tuple(_mirror_body(b) for b in desc.bodies), camera=cam)
