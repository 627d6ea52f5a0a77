"""The velocity task's scene (:func:`build_scene`): the wheel-leg robot's MJCF (its description), the PD actuators,
flat ground or a terrain, and what the task reads. Each task assembles its scene in its own ``scene.py``, the same
way (the hand-pose task's: :mod:`dexwheel.tasks.hand_pose.scene`).

Everything a task needs after a physics step is a MuJoCo sensor, so one ``sensordata`` row per env holds
it and a batched step (``mujoco.batch``) returns it without a Python loop per env: an IMU site at the
base origin (gyro, velocimeter, world z axis in the base frame), knee positions, joint velocities,
actuator forces and, per non-wheel body, whether it touches the floor. All values come from the same instant (MuJoCo evaluates
sensors in the forward pass of the last physics step), so an observation is self-consistent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import mujoco

from dexwheel.robots.description import RobotDescription
from dexwheel.robots.mjcf import build_spec
from dexwheel.robots.wheel_leg import (
    BASE_BODY,
    KNEE_JOINTS,
    NON_WHEEL_BODIES,
    POLICY_JOINT_ORDER,
    ROBOT_JOINT_ORDER,
)
from dexwheel.sim.rendering import compile_without_textures
from dexwheel.sim.wheel_leg_drive import make_pd_actuators

if TYPE_CHECKING:
    from dexwheel.terrain.description import TerrainDescription

FLOOR_GEOM = "floor"
IMU_SITE = "imu"
TRACK_CAMERA = "track"

_S = mujoco.mjtSensor
_O = mujoco.mjtObj


@dataclass(frozen=True)
class SensorLayout:
    """Column slices of ``sensordata`` (fixed by :func:`scene_spec`)."""

    base_ang_vel: slice  # gyro at the base origin, base frame, rad/s
    base_lin_vel: slice  # velocimeter at the base origin, base frame, m/s
    world_z_in_base: slice  # world z axis in the base frame; projected gravity is its negative
    knee_pos: slice  # KNEE_JOINTS order, rad
    joint_vel: slice  # POLICY_JOINT_ORDER (knees then wheels), rad/s
    actuator_force: slice  # ROBOT_JOINT_ORDER, N m
    floor_contact: slice  # NON_WHEEL_BODIES order: number of contacts with the floor
    size: int


def _add(spec: mujoco.MjSpec, name: str, stype, objtype, objname: str, **kw) -> None:
    spec.add_sensor(name=name, type=stype, objtype=objtype, objname=objname, **kw)


def scene_spec(desc: RobotDescription, terrain: TerrainDescription | None = None) -> tuple[mujoco.MjSpec, SensorLayout]:
    """The robot on flat ground with the PD actuators, the task's sensors and a tracking camera.

    With ``terrain`` the flat floor gives way to the terrain's static geoms (:func:`dexwheel.terrain.mujoco.add_terrain`),
    all in the world body: the floor-contact sensors then count contacts with any geom of the world body.
    """
    spec = build_spec(desc, ground=True)
    floor_type, floor_name = _O.mjOBJ_GEOM, FLOOR_GEOM
    if terrain is not None:
        from dexwheel.terrain.mujoco import add_terrain

        spec.delete(spec.geom(FLOOR_GEOM))
        add_terrain(spec, terrain)
        floor_type, floor_name = _O.mjOBJ_BODY, "world"
    make_pd_actuators(spec)
    base = spec.body(BASE_BODY)
    base.add_site(name=IMU_SITE, pos=[0.0, 0.0, 0.0], size=[0.01, 0.01, 0.01])
    # "track" mode keeps a world-aligned offset from the base: a chase view that does not spin with it.
    base.add_camera(name=TRACK_CAMERA, mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACK, pos=[0.0, -1.8, 0.6],
                    xyaxes=[1.0, 0.0, 0.0, 0.0, 0.33, 0.944])  # fmt: skip
    _add(spec, "base_ang_vel", _S.mjSENS_GYRO, _O.mjOBJ_SITE, IMU_SITE)
    _add(spec, "base_lin_vel", _S.mjSENS_VELOCIMETER, _O.mjOBJ_SITE, IMU_SITE)
    _add(spec, "world_z_in_base", _S.mjSENS_FRAMEZAXIS, _O.mjOBJ_XBODY, "world",
         reftype=_O.mjOBJ_SITE, refname=IMU_SITE)  # fmt: skip
    for j in KNEE_JOINTS:
        _add(spec, f"{j}_pos", _S.mjSENS_JOINTPOS, _O.mjOBJ_JOINT, j)
    for j in POLICY_JOINT_ORDER:
        _add(spec, f"{j}_vel", _S.mjSENS_JOINTVEL, _O.mjOBJ_JOINT, j)
    for j in ROBOT_JOINT_ORDER:
        act = next(a.name for a in spec.actuators if a.target == j)
        _add(spec, f"{act}_force", _S.mjSENS_ACTUATORFRC, _O.mjOBJ_ACTUATOR, act)
    found = int(mujoco.mjtConDataField.mjCONDATA_FOUND)
    for body in NON_WHEEL_BODIES:
        # intprm: (data fields bitmask, reduce: none, num); "found" is the number of matching contacts.
        _add(spec, f"{body}_floor_contact", _S.mjSENS_CONTACT, _O.mjOBJ_BODY, body,
             reftype=floor_type, refname=floor_name, intprm=[1 << found, 0, 1])  # fmt: skip
    sizes = [("base_ang_vel", 3), ("base_lin_vel", 3), ("world_z_in_base", 3), ("knee_pos", len(KNEE_JOINTS)),
             ("joint_vel", len(POLICY_JOINT_ORDER)), ("actuator_force", len(ROBOT_JOINT_ORDER)),
             ("floor_contact", len(NON_WHEEL_BODIES))]  # fmt: skip
    slices, start = {}, 0
    for name, n in sizes:
        slices[name] = slice(start, start + n)
        start += n
    return spec, SensorLayout(**slices, size=start)


def build_scene(
    desc: RobotDescription, terrain: TerrainDescription | None = None, *, textures: bool = True
) -> tuple[mujoco.MjModel, SensorLayout]:
    """The compiled scene (on ``terrain``, else flat ground); ``textures=False``: its builtin textures at 1 x 1
    texel, the rest the same bits (a model a vector env's envs run their physics on,
    :func:`~dexwheel.sim.rendering.compile_without_textures`)."""
    spec, layout = scene_spec(desc, terrain)
    model = spec.compile() if textures else compile_without_textures(spec)
    if model.nsensordata != layout.size:
        raise AssertionError(f"sensor layout expects {layout.size} values, the model has {model.nsensordata}")
    return model, layout
