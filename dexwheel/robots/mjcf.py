"""Build a MuJoCo model from a :class:`RobotDescription` through ``mujoco.MjSpec``.

Edits are code, so the MJCF is reproducible: ``scripts/build_assets.py`` writes ``spec.to_xml()``.
"""

from __future__ import annotations

import mujoco
import numpy as np

from dexwheel.robots.description import Geom, RobotDescription, rpy_to_matrix

FREE_JOINT = "floating_base"
VISUAL_GROUP = 2
COLLISION_GROUP = 3

_GEOM_TYPES = {
    "box": mujoco.mjtGeom.mjGEOM_BOX,
    "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
    "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
}
_INTEGRATORS = {
    "Euler": mujoco.mjtIntegrator.mjINT_EULER,
    "RK4": mujoco.mjtIntegrator.mjINT_RK4,
    "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
}


def rpy_to_quat(rpy) -> np.ndarray:
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, rpy_to_matrix(rpy).flatten())
    return quat


def _padded_size(g: Geom) -> list[float]:
    return [*g.size, *([0.0] * (3 - len(g.size)))]


def build_spec(desc: RobotDescription, *, ground: bool = False) -> mujoco.MjSpec:
    """The robot as an ``MjSpec``; ``ground`` adds a flat floor, a light and a skybox (the scene)."""
    spec = mujoco.MjSpec()
    spec.modelname = desc.name if not ground else f"{desc.name}_scene"
    spec.compiler.degree = False
    spec.compiler.balanceinertia = desc.balanceinertia
    spec.compiler.autolimits = True
    spec.option.timestep = desc.timestep
    spec.option.gravity = list(desc.gravity)
    spec.option.integrator = _INTEGRATORS[desc.integrator]

    spec.default.joint.damping = [desc.joint_damping, 0.0, 0.0]
    spec.default.joint.armature = desc.joint_armature
    visual = spec.add_default("visual", spec.default)
    visual.geom.contype = 0
    visual.geom.conaffinity = 0
    visual.geom.group = VISUAL_GROUP
    visual.geom.mass = 0.0
    collision = spec.add_default("collision", spec.default)
    c = desc.contact
    collision.geom.group = COLLISION_GROUP
    collision.geom.margin = c.margin
    collision.geom.friction = list(c.friction)
    collision.geom.solref = list(c.solref)
    collision.geom.solimp = [*c.solimp, 0.5, 2.0]  # width defaults: midpoint 0.5, power 2
    collision.geom.rgba = [0.8, 0.3, 0.3, 0.4]

    bodies = {"world": spec.worldbody}
    for b in desc.bodies:
        parent = bodies["world" if b.parent is None else b.parent]
        pos = list(b.pos)
        if b.parent is None and desc.floating_base:
            pos = [pos[0], pos[1], desc.base_height]
        body = parent.add_body(name=b.name, pos=pos, quat=rpy_to_quat(b.rpy).tolist())
        body.explicitinertial = True
        body.mass = b.inertial.mass
        body.ipos = list(b.inertial.com)
        body.fullinertia = list(b.inertial.inertia)
        bodies[b.name] = body
        if b.parent is None and desc.floating_base:
            body.add_freejoint(name=FREE_JOINT)
        if b.joint is not None:
            j = b.joint
            joint = body.add_joint(name=j.name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=list(j.axis))
            if j.limits is not None:
                joint.range = list(j.limits)
                joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
            if j.damping is not None:
                joint.damping = [j.damping, 0.0, 0.0]
            if j.armature is not None:
                joint.armature = j.armature
        for g in b.collision:
            body.add_geom(
                collision,
                name=g.name,
                type=_GEOM_TYPES[g.type],
                size=_padded_size(g),
                pos=list(g.pos),
                quat=list(g.quat),
            )
        for g in b.visual:
            body.add_geom(visual, name=g.name, type=_GEOM_TYPES[g.type], size=_padded_size(g), pos=list(g.pos), quat=list(g.quat), rgba=list(g.rgba))  # fmt: skip

    for a in desc.actuators:
        act = spec.add_actuator(name=a.name, target=a.joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        if a.kind == "position":
            act.set_to_position(kp=a.kp, kv=a.kv)
        else:
            act.set_to_velocity(kv=a.kv)
        if a.ctrlrange is not None:
            act.ctrlrange = list(a.ctrlrange)
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = list(a.forcerange)
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE

    for b1, b2 in desc.contact_excludes:
        spec.add_exclude(bodyname1=b1, bodyname2=b2)

    cam = desc.camera
    if cam is not None:
        spec.visual.global_.azimuth = cam.azimuth
        spec.visual.global_.elevation = cam.elevation
        spec.stat.center = list(cam.lookat)
        spec.stat.extent = cam.distance / 1.5  # MuJoCo's free camera starts 1.5 x extent away

    if ground:
        _add_ground(spec)
    if desc.floating_base:
        qpos = [0.0, 0.0, desc.base_height, 1.0, 0.0, 0.0, 0.0] + [0.0] * len(desc.joints)
        spec.add_key(name="home", qpos=qpos)
    return spec


def _add_ground(spec: mujoco.MjSpec) -> None:
    tex = spec.add_texture(name="grid", type=mujoco.mjtTexture.mjTEXTURE_2D, builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
                           rgb1=[0.2, 0.3, 0.4], rgb2=[0.1, 0.2, 0.3], width=512, height=512, mark=mujoco.mjtMark.mjMARK_EDGE,
                           markrgb=[0.8, 0.8, 0.8])  # fmt: skip
    spec.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX, builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
                     rgb1=[0.3, 0.5, 0.7], rgb2=[0.0, 0.0, 0.0], width=512, height=3072)  # fmt: skip
    mat = spec.add_material(name="grid", texrepeat=[1, 1], texuniform=True, reflectance=0.1)
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex.name
    spec.worldbody.add_light(name="sun", pos=[0, 0, 3], dir=[0, 0, -1], diffuse=[0.8, 0.8, 0.8])
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], material="grid")


def compile_model(desc: RobotDescription, *, ground: bool = False) -> mujoco.MjModel:
    return build_spec(desc, ground=ground).compile()


def to_mjcf(desc: RobotDescription, *, ground: bool = False) -> str:
    spec = build_spec(desc, ground=ground)
    spec.compile()
    return spec.to_xml()
