"""The in-hand tasks' scene (:func:`build_scene`): the G20 palm up on a fixed wrist mount and one object on its palm.

The hand is the G20's description as every task builds it (:func:`dexwheel.robots.mjcf.build_spec`), its base turned
so the palm (``+x`` of ``hand_base``) faces up (world ``+z``) with the fingers along world ``-x``; the palm's top is
at ``z = 0.0122`` m and its centre at ``x = -0.073``. The object is a free body: a cube (``size`` its edge), a
cylinder (diameter and height ``size``, its axis along the palm normal) or a sphere (diameter ``size``), of ``mass``.

Contact: the object's geom takes the hand's solver settings (``solref`` 0.004 s, damping ratio 1; ``solimp`` 0.9
0.95 0.001; the spec's, so a fingertip meets the object as it meets the palm), ``condim`` 4 (sliding and torsional
friction: spinning an object on the palm is resisted, as by a real skin) with sliding friction ``friction``
(1.0 by default, the hand's; the spec's rubber-like 1.0 on both sides) and torsional 0.005 m (a 1 cm contact patch);
the palm and finger collision shapes are the spec's capsules and box, unrefined (docs/how-to/in-hand.md says where
they limit a grasp).
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np

from dexwheel.robots import get_robot
from dexwheel.robots.g20 import ACTUATOR_NAMES, ALL_JOINTS
from dexwheel.robots.mjcf import VISUAL_GROUP, build_spec
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

OBJECT_BODY, OBJECT_JOINT, OBJECT_GEOM = "object", "object_root", "object_col"
FLOOR_Z = -0.15  # the rendered floor, well below the hand (render only)


def _geom_size(obj: ObjectSpec) -> list[float]:
    h = obj.size / 2
    return {"cube": [h, h, h], "cylinder": [h, h, 0.0], "sphere": [h, 0.0, 0.0]}[obj.shape]


_TYPES = {"cube": mujoco.mjtGeom.mjGEOM_BOX, "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
          "sphere": mujoco.mjtGeom.mjGEOM_SPHERE}  # fmt: skip


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
    hand: str, obj: ObjectSpec, contact_excludes: tuple[tuple[str, str], ...] | None = None
) -> mujoco.MjSpec:
    """The scene's ``MjSpec`` (see the module docstring); ``contact_excludes``: the hand's body pairs whose contacts
    are excluded (None: the spec's)."""
    desc = get_robot(f"g20_{hand}")
    if contact_excludes is not None:
        desc = dataclasses.replace(desc, contact_excludes=contact_excludes)
    spec = build_spec(desc)
    spec.body("hand_base").quat = list(PALM_UP)
    add_deepest_contact_sensor(spec)  # the hand's deepest contact (the penetration reward, as the pose task's)
    body = spec.worldbody.add_body(name=OBJECT_BODY, pos=list(PALM_CENTRE + PALM_NORMAL * obj.half_height))
    body.add_freejoint(name=OBJECT_JOINT)
    c = desc.contact
    body.add_geom(name=OBJECT_GEOM, type=_TYPES[obj.shape], size=_geom_size(obj), mass=obj.mass, condim=4,
                  friction=[obj.friction, TORSIONAL_FRICTION, ROLLING_FRICTION], solref=list(c.solref), solimp=[*c.solimp, 0.5, 2.0],
                  margin=c.margin, rgba=[0.85, 0.45, 0.15, 1.0])  # fmt: skip
    add_task_sensors(spec)
    add_studio(spec, FLOOR_Z, VISUAL_GROUP)
    return spec


def build_scene(
    hand: str, obj: ObjectSpec, contact_excludes: tuple[tuple[str, str], ...] | None = None
) -> mujoco.MjModel:
    """The compiled scene, the hand's joints and actuators checked."""
    model = scene_spec(hand, obj, contact_excludes).compile()
    check_robot_model(model, ALL_JOINTS, ACTUATOR_NAMES, source=f"g20_{hand} in-hand scene")
    return model


def object_addresses(model: mujoco.MjModel) -> tuple[int, int]:
    """The object's free joint: its ``qpos`` address (position, then quaternion w x y z) and ``qvel`` address
    (linear velocity in the world frame, then angular velocity in the object's frame)."""
    j = model.joint(OBJECT_JOINT).id
    return int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
