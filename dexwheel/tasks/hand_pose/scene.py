"""The hand-pose task's scene (:func:`build_scene`): the G20's MJCF (its description, with the config's contact
excludes), the sensors both drives read (the deepest contact, the projection's per-joint contacts) and a studio
to look at. Each task assembles its scene in its own ``scene.py``, the same way (the velocity task's:
:mod:`dexwheel.tasks.velocity.scene`).
"""

from __future__ import annotations

import dataclasses

import mujoco

from dexwheel.robots import get_robot
from dexwheel.robots.description import RobotDescription
from dexwheel.robots.g20 import ACTIVE_JOINTS, ACTUATOR_NAMES, ALL_JOINTS
from dexwheel.robots.mjcf import VISUAL_GROUP, build_spec
from dexwheel.sim.model_checks import check_robot_model
from dexwheel.sim.projection import add_chain_contact_sensors, add_deepest_contact_sensor
from dexwheel.sim.rendering import add_studio
from dexwheel.tasks.hand_pose.config import G20HandConfig, _bad

#: Height (m) of the rendered floor, just below the wrist (render-only: the floor takes no part in the physics).
FLOOR_Z = -0.02


def description(cfg: G20HandConfig) -> RobotDescription:
    """The hand of ``cfg`` with its contact excludes (an unknown body is refused naming it and the bodies)."""
    desc = get_robot(f"g20_{cfg.hand}")
    if cfg.collision.contact_excludes is None:
        return desc
    bodies = {b.name for b in desc.bodies}
    unknown = sorted({b for pair in cfg.collision.contact_excludes for b in pair} - bodies)
    if unknown:
        raise _bad("contact_excludes", f"contact_excludes names unknown bodies {unknown}; bodies: {sorted(bodies)}")
    return dataclasses.replace(desc, contact_excludes=cfg.collision.contact_excludes)


def build_scene(cfg: G20HandConfig) -> tuple[mujoco.MjModel, RobotDescription]:
    """The compiled scene and the description it was built from, its joints and actuators checked."""
    desc = description(cfg)
    spec = build_spec(desc)
    add_deepest_contact_sensor(spec)  # both drives read their penetration from it
    add_chain_contact_sensors(spec, ACTIVE_JOINTS)  # the projection's per-joint contacts
    add_studio(spec, FLOOR_Z, VISUAL_GROUP)  # lights, backdrop, a visual floor: frames a person can read
    model = spec.compile()
    check_robot_model(model, ALL_JOINTS, ACTUATOR_NAMES, source=f"{desc.name} MJCF")
    return model, desc
