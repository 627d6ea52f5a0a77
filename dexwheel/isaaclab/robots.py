"""Isaac Lab ``ArticulationCfg`` of each robot, from its description (the same facts the MJCF is built from).

The USD (:mod:`dexwheel.isaaclab.usd`) carries the kinematics, inertias, limits, collision shapes and
passive joint damping; what URDF cannot carry comes from the description here: per-joint armature and
the actuators (position kp/kv or velocity kv, effort limit = the MuJoCo actuator's force range).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import isaaclab.sim as sim_utils
from isaaclab.actuators import ImplicitActuatorCfg
from isaaclab.assets import ArticulationCfg
from isaaclab_newton.sim.schemas import NewtonArticulationCfg

from dexwheel.isaaclab.motor_pd import MotorPDArticulation
from dexwheel.isaaclab.usd import usd_path
from dexwheel.robots import get_robot
from dexwheel.robots.description import RobotDescription


@dataclass(frozen=True)
class _Drive:
    """What one Isaac actuator group shares (joints with equal gains, limits and armature)."""

    kp: float
    kv: float
    effort: float
    armature: float


def _drives(desc: RobotDescription, gains: Mapping[str, tuple[float, float]],
            armature: float | None = None) -> dict[_Drive, list[str]]:  # fmt: skip
    groups: dict[_Drive, list[str]] = {}
    unknown = sorted(set(gains) - set(desc.joint_names))
    if unknown:
        raise ValueError(f"{desc.name}: gains for unknown joint(s) {unknown}; joints are {list(desc.joint_names)}")
    for a in desc.actuators:
        lo, hi = a.forcerange
        if lo != -hi:
            raise ValueError(f"{desc.name} actuator {a.name}: asymmetric force range {a.forcerange} has no Isaac form")
        joint = desc.joint(a.joint)
        default = desc.joint_armature if armature is None else armature
        kp, kv = gains.get(a.joint, (a.kp if a.kind == "position" else 0.0, a.kv))
        groups.setdefault(_Drive(kp, kv, hi, default if joint.armature is None else joint.armature), []).append(a.joint)
    missing = set(desc.joint_names) - {j for joints in groups.values() for j in joints}
    if missing:
        raise ValueError(f"{desc.name}: joints without an actuator {sorted(missing)}")
    return groups


def _group_name(joints: list[str]) -> str:
    # names like "knee", "wheel" or "mcp_roll": the joints' common suffix after the first underscore
    stems = {j.split("_", 1)[-1] for j in joints}
    return stems.pop() if len(stems) == 1 else f"group_{joints[0]}"


def actuator_cfgs(
    desc: RobotDescription, gains: Mapping[str, tuple[float, float]] | None = None, armature: float | None = None
) -> dict[str, ImplicitActuatorCfg]:
    """Implicit (solver-side) PD actuators: kp only -> position drive, kv only -> velocity drive.

    ``gains`` ``{joint: (kp, kv)}`` replaces the description's gains of those joints (a task's own); ``armature``
    (kg m^2) the description's default armature (a task's own physics: the object tasks'), a joint's own kept.
    """
    cfgs = {}
    drives = _drives(desc, gains or {}, armature)
    for i, (drive, joints) in enumerate(drives.items()):
        name = _group_name(joints) if len(drives) > 1 else "all"
        cfgs[name if name not in cfgs else f"{name}_{i}"] = ImplicitActuatorCfg(
            joint_names_expr=[re.escape(j) for j in joints],
            stiffness=drive.kp,
            damping=drive.kv,
            joint_effort_limit=drive.effort,
            armature=drive.armature,
        )
    return cfgs


def articulation_cfg(
    robot: str,
    prim_path: str = "/World/envs/env_.*/Robot",
    joint_pos: Mapping[str, float] | None = None,
    base_pos: tuple[float, float, float] | None = None,
    motor_pd: bool = True,
    gains: Mapping[str, tuple[float, float]] | None = None,
    rot: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0),
    armature: float | None = None,
) -> ArticulationCfg:
    """The robot at ``prim_path``; joints start at ``joint_pos`` (others 0), a floating base at ``base_pos``
    (default: the description's ``base_height`` above the origin), turned by ``rot`` (x, y, z, w: a fixed base is
    mounted so, as the in-hand scene's palm-up hand); ``gains`` and ``armature`` as in :func:`actuator_cfgs`.

    ``motor_pd`` (default): each PD joint is one force-clamped motor, as in the MuJoCo models
    (:mod:`dexwheel.isaaclab.motor_pd`); False keeps Isaac Lab's own split of kp and kd.
    """
    desc = get_robot(robot)
    joint_pos = dict(joint_pos or {})
    unknown = sorted(set(joint_pos) - set(desc.joint_names))
    if unknown:
        raise ValueError(f"{robot}: unknown joint(s) {unknown} in joint_pos; joints are {list(desc.joint_names)}")
    if base_pos is None:
        base_pos = (0.0, 0.0, desc.base_height if desc.floating_base else 0.0)
    extra = {"class_type": MotorPDArticulation} if motor_pd else {}
    return ArticulationCfg(
        prim_path=prim_path,
        spawn=sim_utils.UsdFileCfg(
            usd_path=str(usd_path(robot)),
            articulation_props=[NewtonArticulationCfg(self_collision_enabled=True)],  # as MuJoCo: all geoms collide
        ),
        init_state=ArticulationCfg.InitialStateCfg(
            pos=base_pos,
            rot=rot,  # x, y, z, w
            joint_pos={re.escape(j): float(joint_pos.get(j, 0.0)) for j in desc.joint_names},
        ),
        actuators=actuator_cfgs(desc, gains, armature),
        **extra,
    )
