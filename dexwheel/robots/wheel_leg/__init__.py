"""The wheel-leg family: Solenopsis and the legacy simplified M20 it replaces (``docs/spec/solenopsis.md``).

Both are one floating base with four swing arms (``*_knee``) each ending in a wheel (``*_wheel``). This module
holds what the family shares (joint names and order, motor and contact settings, :class:`WheelLegParams`
with the leg-height kinematics, the description builder); each robot's own numbers are in its module,
:mod:`.solenopsis` and :mod:`.m20_legacy`. Every number the vendor documents leave open is an
``ASSUMPTION_*`` constant, so it changes in one place when CAD numbers arrive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dexwheel.robots.description import Actuator, Body, ContactSettings, Geom, Inertial, Joint, RobotDescription
from dexwheel.robots.shapes import quat_z_to

LEGS = ("fl", "fr", "hl", "hr")  # front/hind, left/right; left is +y
KNEE_JOINTS = tuple(f"{leg}_knee_joint" for leg in LEGS)
WHEEL_JOINTS = tuple(f"{leg}_wheel_joint" for leg in LEGS)
# ASSUMPTION (spec): robot order per leg; policy order knees then wheels.
ROBOT_JOINT_ORDER = tuple(j for leg in LEGS for j in (f"{leg}_knee_joint", f"{leg}_wheel_joint"))
POLICY_JOINT_ORDER = (*KNEE_JOINTS, *WHEEL_JOINTS)
BASE_BODY = "base_link"
#: Bodies other than the wheels; their floor contact is "undesired" (and may end an episode).
NON_WHEEL_BODIES = (BASE_BODY, *(f"{leg}_knee" for leg in LEGS))
#: The arm (knee) and wheel links, arms first; what domain randomisation scales.
LINKS = tuple(f"{leg}_{part}" for part in ("knee", "wheel") for leg in LEGS)
JOINT_AXIS = (0.0, -1.0, 0.0)  # all eight; a positive wheel velocity rolls the robot backward
#: The left-right mirror (the robot's xz plane): each leg and its image. Both sides turn about JOINT_AXIS and
#: mirror each other in geometry and stance, so a mirrored joint keeps its angle and only changes leg.
MIRRORED_LEG = {"fl": "fr", "fr": "fl", "hl": "hr", "hr": "hl"}


def mirror_permutation(names: tuple[str, ...]) -> tuple[int, ...]:
    """``names[perm[i]]`` is the mirror image of ``names[i]`` (joint or link names starting with a leg)."""
    image = [MIRRORED_LEG[n.partition("_")[0]] + "_" + n.partition("_")[2] for n in names]
    return tuple(names.index(n) for n in image)


# ASSUMPTION: effort/velocity limits of the vendor's M20 URDF, unchanged in Solenopsis.
KNEE_EFFORT, KNEE_VELOCITY = 76.4, 22.4
WHEEL_EFFORT, WHEEL_VELOCITY = 21.6, 79.3
ASSUMPTION_KNEE_RANGE = (-2.6, 2.6)

# Reference drive of the vendor's related M20 task: legs kp 80 kd 2, wheels kp 0 kd 0.6.
KNEE_KP, KNEE_KD = 80.0, 2.0
WHEEL_KD = 0.6
WHEEL_ARMATURE = 0.00243
JOINT_ARMATURE = 0.01
TIMESTEP = 0.005
CONTACT = ContactSettings(margin=0.0, friction=(1.0, 0.005, 0.0001), solref=(0.02, 1.0), solimp=(0.9, 0.95, 0.001))

_Y_AXIS_QUAT = quat_z_to(np.array([0.0, 1.0, 0.0]))  # cylinders along the wheel axle


@dataclass(frozen=True)
class WheelLegParams:
    """What distinguishes one wheel-leg platform from another."""

    name: str
    base: Inertial
    base_box_size: tuple[float, float, float]  # full sizes x, y, z
    base_box_center: tuple[float, float, float]
    hip_xyz: tuple[float, float, float]  # |x|, |y|, z of the knee joint centres
    knee_to_axle: tuple[float, float, float]  # left side; the right mirrors y
    knee_left: Inertial
    knee_right: Inertial
    knee_box_size: tuple[float, float, float]
    knee_drive_cylinder: tuple[float, float] | None  # radius, length; coaxial with the knee at its origin
    wheel_left: Inertial
    wheel_right: Inertial
    wheel_radius: float
    wheel_width: float
    wheel_center_left: tuple[float, float, float]
    #: Default knee stance (fl, fr, hl, hr) the tasks hold and start from.
    stance: tuple[float, float, float, float]
    #: Where the knee box sits: a z offset on the knee axis (axis-aligned), or None: centred on the
    #: knee-to-axle vector and along it.
    knee_box_center_z: float | None = None

    @property
    def stance_height_q0(self) -> float:
        """Base origin height with every arm at q = 0 (arms straight down) on flat ground."""
        return -(self.hip_xyz[2] + self.knee_to_axle[2]) + self.wheel_radius

    @property
    def link_length(self) -> float:
        return float(np.linalg.norm(self.knee_to_axle))

    def leg_heights(self, knees: np.ndarray) -> np.ndarray:
        """Base-origin height above flat ground that puts each leg's wheel on it, per knee angle.

        The axis (0, -1, 0) turns the knee-to-axle vector (ax, ay, az) into z = ax sin q + az cos q. ``knees``
        may be a torch tensor (the Isaac Lab task's reset), which gives one back.
        """
        ax, _, az = self.knee_to_axle
        sin, cos = (knees.sin(), knees.cos()) if hasattr(knees, "sin") else (np.sin(knees), np.cos(knees))
        return -(self.hip_xyz[2] + ax * sin + az * cos) + self.wheel_radius


#: Episodes start this far above the height that puts the lowest wheel on the ground: a short drop,
#: never a penetration (both backends).
START_DROP_M = 0.0005


_COLOURS = {"base": (0.25, 0.25, 0.3, 1.0), "knee": (0.9, 0.5, 0.1, 1.0), "wheel": (0.1, 0.1, 0.1, 1.0)}


def _with_visual(geoms: tuple[Geom, ...], colour: str) -> tuple[Geom, ...]:
    return tuple(Geom(g.name.replace("_col", "_vis"), g.type, g.size, g.pos, g.quat, _COLOURS[colour]) for g in geoms)


def _leg_bodies(p: WheelLegParams, leg: str) -> list[Body]:
    front, left = leg[0] == "f", leg[1] == "l"
    sx, sy = (1.0 if front else -1.0), (1.0 if left else -1.0)
    hx, hy, hz = p.hip_xyz
    ax, ay, az = p.knee_to_axle
    axle = (ax, sy * ay, az)
    knee_geoms: list[Geom] = []
    if p.knee_box_center_z is not None:
        knee_geoms.append(Geom(f"{leg}_knee_col", "box", tuple(s / 2 for s in p.knee_box_size),
                               (0.0, 0.0, p.knee_box_center_z)))  # fmt: skip
    else:
        mid = tuple(v / 2 for v in axle)
        knee_geoms.append(
            Geom(f"{leg}_knee_col", "box", tuple(s / 2 for s in p.knee_box_size), mid, quat_z_to(np.array(axle)))
        )  # type: ignore[arg-type]
    if p.knee_drive_cylinder is not None:
        r, length = p.knee_drive_cylinder
        knee_geoms.append(Geom(f"{leg}_knee_drive_col", "cylinder", (r, length / 2), (0.0, 0.0, 0.0), _Y_AXIS_QUAT))
    wx, wy, wz = p.wheel_center_left
    wheel_geom = Geom(
        f"{leg}_wheel_col", "cylinder", (p.wheel_radius, p.wheel_width / 2), (wx, sy * wy, wz), _Y_AXIS_QUAT
    )
    knee = Joint(f"{leg}_knee_joint", JOINT_AXIS, ASSUMPTION_KNEE_RANGE, KNEE_EFFORT, KNEE_VELOCITY)
    wheel = Joint(f"{leg}_wheel_joint", JOINT_AXIS, None, WHEEL_EFFORT, WHEEL_VELOCITY, armature=WHEEL_ARMATURE)
    return [
        Body(f"{leg}_knee", "base_link", (sx * hx, sy * hy, hz), (0.0, 0.0, 0.0), p.knee_left if left else p.knee_right,
             knee, tuple(knee_geoms), _with_visual(tuple(knee_geoms), "knee")),
        Body(f"{leg}_wheel", f"{leg}_knee", axle, (0.0, 0.0, 0.0), p.wheel_left if left else p.wheel_right,
             wheel, (wheel_geom,), _with_visual((wheel_geom,), "wheel")),
    ]  # fmt: skip


def build_wheel_leg(p: WheelLegParams) -> RobotDescription:
    base_geom = Geom("base_link_col", "box", tuple(s / 2 for s in p.base_box_size), p.base_box_center)  # type: ignore[arg-type]
    bodies = [
        Body(
            "base_link",
            None,
            (0.0, 0.0, 0.0),
            (0.0, 0.0, 0.0),
            p.base,
            None,
            (base_geom,),
            _with_visual((base_geom,), "base"),
        )
    ]
    for leg in LEGS:
        bodies += _leg_bodies(p, leg)
    actuators = []
    for leg in LEGS:
        actuators.append(Actuator(f"{leg}_knee_joint_pos", f"{leg}_knee_joint", "position", KNEE_KP, KNEE_KD,
                                  (-KNEE_EFFORT, KNEE_EFFORT), None))  # fmt: skip
        actuators.append(Actuator(f"{leg}_wheel_joint_vel", f"{leg}_wheel_joint", "velocity", 0.0, WHEEL_KD,
                                  (-WHEEL_EFFORT, WHEEL_EFFORT), None))  # fmt: skip
    return RobotDescription(
        name=p.name,
        bodies=tuple(bodies),
        actuators=tuple(actuators),
        floating_base=True,
        timestep=TIMESTEP,
        integrator="implicitfast",
        joint_damping=0.0,
        joint_armature=JOINT_ARMATURE,
        contact=CONTACT,
        base_height=p.stance_height_q0,
    )


# Each robot's own facts, in its module (they build on the family above).
from dexwheel.robots.wheel_leg.m20_legacy import M20_LEGACY, M20_LEGACY_TOTAL_MASS, m20_legacy  # noqa: E402
from dexwheel.robots.wheel_leg.solenopsis import SOLENOPSIS, SOLENOPSIS_TOTAL_MASS, solenopsis  # noqa: E402

#: Each wheel-leg robot's platform parameters, by robot name.
PARAMS: dict[str, WheelLegParams] = {p.name: p for p in (SOLENOPSIS, M20_LEGACY)}


__all__ = ["BASE_BODY", "KNEE_JOINTS", "LEGS", "M20_LEGACY", "M20_LEGACY_TOTAL_MASS", "NON_WHEEL_BODIES", "PARAMS",
           "SOLENOPSIS", "SOLENOPSIS_TOTAL_MASS", "WHEEL_JOINTS", "m20_legacy", "solenopsis"]  # fmt: skip
