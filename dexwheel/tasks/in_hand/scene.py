"""The in-hand tasks' scene (:func:`build_scene`): the G20 palm up on a fixed wrist mount and one object on its palm.

The hand is the G20's description as every task builds it (:func:`dexwheel.robots.mjcf.build_spec`), its base turned
so the palm (``+x`` of ``hand_base``) faces up (world ``+z``) with the fingers along world ``-x``; the palm's top is
at ``z = 0.0122`` m and its centre at ``x = -0.073``. The object is a free body: a cube (``size`` its edge), a
cylinder (diameter ``size``, length ``length``, default its diameter; upright its axis along the palm normal, across
along the flexion axis, world ``y``) or a sphere (diameter ``size``), of ``mass``.

The simulation is the config's ``physics`` section (:mod:`dexwheel.tasks.in_hand.physics`): the physics step, the
joints' armature and the contact model. ``pads`` (the default): a flat pad on each distal segment's palmar face
(:func:`~dexwheel.tasks.in_hand.physics.pads`), every hand geom taking precedence over the object (``priority`` 1) with
``condim`` 3 (sliding friction only), the object's ``friction`` on the pads,
``palm_friction`` on every other hand geom (the palm, the segments' capsules), ``solimp`` 0.99 0.999 0.001 and
``solref`` (0.02 s, 1).
``spec``: the hand's spec geoms (friction 1.0, torsional 0.5 m, rolling 0.01 m; ``solref`` 0.004 s, ``solimp`` 0.9
0.95 0.001) against an object of ``condim`` 4 with sliding friction ``friction`` and torsional 0.005 m: MuJoCo takes
the larger coefficient of two geoms, so the hand's 0.5 m torsional friction resisted every spin.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np

from dexwheel.robots import get_robot
from dexwheel.robots.g20 import ACTUATOR_NAMES, ALL_JOINTS
from dexwheel.robots.mjcf import COLLISION_GROUP, VISUAL_GROUP, build_spec
from dexwheel.sim.model_checks import check_robot_model
from dexwheel.sim.projection import add_deepest_contact_sensor
from dexwheel.sim.rendering import add_studio
from dexwheel.tasks.in_hand.objects import (
    FINGERTIPS,
    PALM_CENTRE,
    PALM_NORMAL,
    PALM_UP,
    ROLLING_FRICTION,
    TORSIONAL_FRICTION,
    ObjectSpec,
)
from dexwheel.tasks.in_hand.physics import (  # the pads' sizes and settings: both backends' scenes read them there
    GRIP_SUFFIXES,
    PAD_CONDIM,
    PAD_PRIORITY,
    PAD_SOLIMP,
    InHandPhysicsCfg,
    pad_solref,
    pads,
)

OBJECT_BODY, OBJECT_JOINT, OBJECT_GEOM = "object", "object_root", "object_col"
FLOOR_Z = -0.15  # the rendered floor, well below the hand (render only)


def _geom_size(obj: ObjectSpec) -> list[float]:
    h = obj.size / 2
    return {"cube": [h, h, h], "cylinder": [h, obj.extent / 2, 0.0], "sphere": [h, 0.0, 0.0],
            "capsule": [h, obj.extent / 2 - h, 0.0]}[obj.shape]  # fmt: skip


def _pads_contact_model(spec: mujoco.MjSpec, hand: str, obj: ObjectSpec, physics: InHandPhysicsCfg,
                        margin: float) -> None:  # fmt: skip
    """The ``pads`` contact model (the module docstring) on the scene's hand geoms and object."""
    for pad in pads(hand):
        spec.body(pad.body).add_geom(name=pad.name, type=mujoco.mjtGeom.mjGEOM_BOX, size=list(pad.half),
                                     pos=list(pad.pos), group=COLLISION_GROUP, mass=0.0,
                                     rgba=[0.25, 0.25, 0.3, 1.0])  # fmt: skip
    solref = list(pad_solref(physics.timestep))
    for g in spec.geoms:
        if g.name == OBJECT_GEOM or (g.contype == 0 and g.conaffinity == 0):
            continue
        grip = g.name.endswith(GRIP_SUFFIXES)
        g.priority, g.condim = PAD_PRIORITY, PAD_CONDIM
        g.friction = [obj.friction if grip else physics.palm_friction, 0.0, 0.0]
        g.solref, g.solimp, g.margin = solref, [*PAD_SOLIMP, 0.5, 2.0], margin
    g = spec.geom(OBJECT_GEOM)
    g.condim, g.friction = PAD_CONDIM, [obj.friction, 0.0, 0.0]
    g.solref, g.solimp = solref, [*PAD_SOLIMP, 0.5, 2.0]


_TYPES = {"cube": mujoco.mjtGeom.mjGEOM_BOX, "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
          "sphere": mujoco.mjtGeom.mjGEOM_SPHERE, "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE}  # fmt: skip


TIP_SENSOR, FORCE_SENSOR = "object_contact:{}", "actuator_force:{}"


def add_task_sensors(spec: mujoco.MjSpec) -> None:
    """Per fingertip, the number of its contacts with the object (``found``, at most 1 counted); per actuator,
    the force it applies (N m): what the terms read each step, from the last physics step's ``sensordata``."""
    one = [1, 0, 1]  # data "found", no reduction, one slot
    for tip in FINGERTIPS:
        spec.add_sensor(name=TIP_SENSOR.format(tip), type=mujoco.mjtSensor.mjSENS_CONTACT,
                        objtype=mujoco.mjtObj.mjOBJ_BODY, objname=tip, reftype=mujoco.mjtObj.mjOBJ_BODY,
                        refname=OBJECT_BODY, intprm=one)  # fmt: skip
    for name in ACTUATOR_NAMES:
        spec.add_sensor(name=FORCE_SENSOR.format(name), type=mujoco.mjtSensor.mjSENS_ACTUATORFRC,
                        objtype=mujoco.mjtObj.mjOBJ_ACTUATOR, objname=name)  # fmt: skip


def sensor_columns(model: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """Where the fingertips' contact counts and the actuators' forces sit in ``sensordata``."""
    tips = [model.sensor_adr[model.sensor(TIP_SENSOR.format(t)).id] for t in FINGERTIPS]
    forces = [model.sensor_adr[model.sensor(FORCE_SENSOR.format(a)).id] for a in ACTUATOR_NAMES]
    return np.array(tips, dtype=np.intp), np.array(forces, dtype=np.intp)


def scene_spec(
    hand: str,
    obj: ObjectSpec,
    contact_excludes: tuple[tuple[str, str], ...] | None = None,
    physics: InHandPhysicsCfg | None = None,
) -> mujoco.MjSpec:
    """The scene's ``MjSpec`` (see the module docstring); ``contact_excludes``: the hand's body pairs whose contacts
    are excluded (None: the spec's); ``physics``: the step, armature and contact model (None: the tasks' defaults)."""
    desc = get_robot(f"g20_{hand}")
    if contact_excludes is not None:
        desc = dataclasses.replace(desc, contact_excludes=contact_excludes)
    p = physics or InHandPhysicsCfg()
    if any(j.armature is not None for j in desc.joints):
        raise ValueError(f"g20_{hand}: a joint sets its own armature; the in-hand scene sets every joint's")
    desc = dataclasses.replace(desc, timestep=float(p.timestep), joint_armature=float(p.armature))
    spec = build_spec(desc)
    spec.body("hand_base").quat = list(PALM_UP)
    add_deepest_contact_sensor(spec)  # the hand's deepest contact (the penetration reward, as the pose task's)
    body = spec.worldbody.add_body(name=OBJECT_BODY, pos=list(PALM_CENTRE + PALM_NORMAL * obj.half_height),
                                   quat=list(obj.rest_quat))  # fmt: skip
    body.add_freejoint(name=OBJECT_JOINT)
    c = desc.contact
    body.add_geom(name=OBJECT_GEOM, type=_TYPES[obj.shape], size=_geom_size(obj), mass=obj.mass, condim=4,
                  friction=[obj.friction, TORSIONAL_FRICTION, ROLLING_FRICTION], solref=list(c.solref), solimp=[*c.solimp, 0.5, 2.0],
                  margin=c.margin, rgba=[0.85, 0.45, 0.15, 1.0])  # fmt: skip
    if p.contact == "pads":
        _pads_contact_model(spec, hand, obj, p, c.margin)
    add_task_sensors(spec)
    add_studio(spec, FLOOR_Z, VISUAL_GROUP)
    return spec


def build_scene(
    hand: str,
    obj: ObjectSpec,
    contact_excludes: tuple[tuple[str, str], ...] | None = None,
    physics: InHandPhysicsCfg | None = None,
) -> mujoco.MjModel:
    """The compiled scene, the hand's joints and actuators checked."""
    model = scene_spec(hand, obj, contact_excludes, physics).compile()
    check_robot_model(model, ALL_JOINTS, ACTUATOR_NAMES, source=f"g20_{hand} in-hand scene")
    return model


def object_addresses(model: mujoco.MjModel) -> tuple[int, int]:
    """The object's free joint: its ``qpos`` address (position, then quaternion w x y z) and ``qvel`` address
    (linear velocity in the world frame, then angular velocity in the object's frame)."""
    j = model.joint(OBJECT_JOINT).id
    return int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
