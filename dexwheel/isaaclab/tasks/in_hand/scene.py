"""The in-hand scene on Isaac Lab: the hand and the object with the config's ``physics`` section
(:mod:`dexwheel.tasks.in_hand.physics`), as the MuJoCo scene builds them (:mod:`dexwheel.tasks.in_hand.scene`).

* **The step and the armature**: the simulation's ``dt`` is ``physics.timestep`` (the env's decimation
  ``1 / (control_hz * timestep)``), every hand joint's armature ``physics.armature``
  (:func:`hand_cfg`; :func:`dexwheel.isaaclab.robots.actuator_cfgs`).
* **The object** (:func:`object_cfg`): a cube, cylinder, sphere or capsule of the :class:`ObjectSpec`'s size, length
  and mass, its axis along its body ``z`` (a capsule's ``height`` is its spine, ``length - size``), turned by its
  ``rest_quat`` at spawn (``across``: lying along the flexion axis; a reset writes the grasp's pose anyway).
* **The contact model** (:func:`contact_model`), authored on the spawned prims before Isaac Lab clones them, which
  Newton reads from USD and passes to MuJoCo-Warp: MuJoCo's geom ``priority`` and ``condim`` (``mjc:priority``,
  ``mjc:condim``), ``solref`` and ``solimp`` (``mjc:solref``, ``mjc:solimp``), and the friction of each collision
  shape as a bound physics material (sliding, torsional, rolling). ``pads``: a box on each distal segment
  (:func:`dexwheel.tasks.in_hand.physics.pads`, the same bodies, sizes and places), every hand shape priority 1 and
  ``condim`` 3, the pads at the object's friction and every other hand shape at ``palm_friction``, ``solimp`` 0.99
  0.999 and ``solref`` 0.02 s on the hand and the object; ``spec``: the hand's shapes at the description's friction
  ``(1.0, 0.5, 0.01)`` against an object of ``condim`` 4 (torsional 0.005 m, rolling 0.0001 m), the description's
  ``solref`` and ``solimp`` on both.

Not the same: the hand's capsules are a cylinder and two spheres in the USD (the URDF's), and Newton zeroes the geom
margins of a model with boxes (the MuJoCo scene's are 0.5 mm): docs/how-to/isaaclab.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import isaaclab.sim as sim_utils
from isaaclab.assets import ArticulationCfg, RigidObjectCfg
from isaaclab.sim.schemas import MassCfg, UsdPhysicsCollisionCfg, UsdPhysicsRigidBodyCfg
from isaaclab.sim.spawners.from_files.from_files import spawn_from_usd_file
from isaaclab.sim.spawners.materials.physics_materials import spawn_physics_material
from isaaclab.sim.spawners.shapes.shapes import spawn_geom_from_prim_type
from isaaclab.sim.utils import bind_physics_material, clone
from isaaclab.utils import configclass
from isaaclab_newton.sim.schemas import NewtonMaterialPropertiesCfg
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

from dexwheel.isaaclab.robots import articulation_cfg
from dexwheel.robots import get_robot
from dexwheel.tasks.in_hand.objects import ROLLING_FRICTION, TORSIONAL_FRICTION, ObjectSpec
from dexwheel.tasks.in_hand.physics import (
    GRIP_SUFFIXES,
    PAD_CONDIM,
    PAD_PRIORITY,
    PAD_SOLIMP,
    InHandPhysicsCfg,
    pad_solref,
    pads,
)

#: MuJoCo's ``solimp`` width defaults (midpoint, power), as the MJCF builder writes them.
_SOLIMP_TAIL = (0.5, 2.0)
#: The object's ``condim`` in the ``spec`` model (the MuJoCo scene's: sliding and torsional friction).
SPEC_OBJECT_CONDIM = 4
#: The hand's collision shapes' materials (``role`` -> prim name under the hand): the pads' and every other's.
MATERIALS = {"grip": "ContactMaterials/grip", "hand": "ContactMaterials/hand"}


def _shape(friction, priority: int, condim: int, solref, solimp) -> dict[str, Any]:
    return {"friction": [float(v) for v in friction], "priority": int(priority), "condim": int(condim),
            "solref": [float(v) for v in solref], "solimp": [float(v) for v in solimp]}  # fmt: skip


def contact_model(hand: str, obj: ObjectSpec, physics: InHandPhysicsCfg) -> dict[str, Any]:
    """What the spawners author (plain lists and numbers: a config field): ``hand`` (every hand collision shape),
    ``grip`` (those ending in ``grip_suffixes``: the pads), ``object``, and the ``pads`` to add (name, body, half
    sizes, centre), for ``physics.contact`` (the module docstring)."""
    if physics.contact == "pads":
        solref, solimp = pad_solref(physics.timestep), (*PAD_SOLIMP, *_SOLIMP_TAIL)
        return {
            "contact": "pads",
            "hand": _shape((physics.palm_friction, 0.0, 0.0), PAD_PRIORITY, PAD_CONDIM, solref, solimp),
            "grip": _shape((obj.friction, 0.0, 0.0), PAD_PRIORITY, PAD_CONDIM, solref, solimp),
            "grip_suffixes": list(GRIP_SUFFIXES),
            "object": _shape((obj.friction, 0.0, 0.0), 0, PAD_CONDIM, solref, solimp),
            "pads": [dataclasses.asdict(p) for p in pads(hand)],
        }
    c = get_robot(f"g20_{hand}").contact
    solimp = (*c.solimp, *_SOLIMP_TAIL)
    spec_hand = _shape(c.friction, 0, 3, c.solref, solimp)
    return {
        "contact": "spec",
        "hand": spec_hand,
        "grip": spec_hand,
        "grip_suffixes": [],
        "object": _shape((obj.friction, TORSIONAL_FRICTION, ROLLING_FRICTION), 0, SPEC_OBJECT_CONDIM, c.solref, solimp),
        "pads": [],
    }


def _material(friction) -> NewtonMaterialPropertiesCfg:
    mu, torsional, rolling = friction
    return NewtonMaterialPropertiesCfg(static_friction=mu, dynamic_friction=mu, torsional_friction=torsional,
                                       rolling_friction=rolling, restitution=0.0)  # fmt: skip


def _author(prim: Usd.Prim, shape: dict[str, Any]) -> None:
    """``shape``'s MuJoCo geom attributes on a collision prim (Newton reads them: ``mjc:*``)."""
    for name, kind, value in (("mjc:priority", Sdf.ValueTypeNames.Int, shape["priority"]),
                              ("mjc:condim", Sdf.ValueTypeNames.Int, shape["condim"]),
                              ("mjc:solref", Sdf.ValueTypeNames.DoubleArray, shape["solref"]),
                              ("mjc:solimp", Sdf.ValueTypeNames.DoubleArray, shape["solimp"])):  # fmt: skip
        prim.CreateAttribute(name, kind, custom=False, variability=Sdf.VariabilityUniform).Set(value)


def _colliders(root: Usd.Prim) -> list[Usd.Prim]:
    return [p for p in Usd.PrimRange(root) if p.HasAPI(UsdPhysics.CollisionAPI)]


def _add_pad(stage: Usd.Stage, body: Usd.Prim, pad: dict[str, Any]) -> Usd.Prim:
    """A box collider ``pad`` fixed to ``body`` (a guide, as the converter's colliders)."""
    cube = UsdGeom.Cube.Define(stage, body.GetPath().AppendChild(pad["name"]))
    cube.CreateSizeAttr(1.0)
    cube.CreatePurposeAttr(UsdGeom.Tokens.guide)
    cube.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*pad["pos"]))
    cube.AddOrientOp().Set(Gf.Quatf(1.0, 0.0, 0.0, 0.0))
    cube.AddScaleOp().Set(Gf.Vec3f(*(2.0 * h for h in pad["half"])))
    prim = cube.GetPrim()
    UsdPhysics.CollisionAPI.Apply(prim)
    prim.AddAppliedSchema("NewtonCollisionAPI")
    return prim


def author_hand_contacts(root: Usd.Prim, contacts: dict[str, Any]) -> None:
    """The contact model ``contacts`` (:func:`contact_model`) on a spawned hand: its pads added to their bodies,
    every collision shape's MuJoCo attributes and material."""
    stage = root.GetStage()
    bodies = {p.GetName(): p for p in Usd.PrimRange(root) if p.HasAPI(UsdPhysics.RigidBodyAPI)}
    for pad in contacts["pads"]:
        if pad["body"] not in bodies:
            raise RuntimeError(f"{root.GetPath()}: no body {pad['body']!r} for the pad {pad['name']!r}")
        _add_pad(stage, bodies[pad["body"]], pad)
    base = str(root.GetPath())
    for role, name in MATERIALS.items():
        spawn_physics_material(f"{base}/{name}", _material(contacts[role]["friction"]), stage=stage)
    suffixes = tuple(contacts["grip_suffixes"])
    for prim in _colliders(root):
        role = "grip" if suffixes and prim.GetName().endswith(suffixes) else "hand"
        _author(prim, contacts[role])
        bind_physics_material(str(prim.GetPath()), f"{base}/{MATERIALS[role]}", stage=stage)


@clone
def spawn_hand(prim_path: str, cfg: InHandUsdFileCfg, translation=None, orientation=None, **kwargs) -> Usd.Prim:
    """The hand's USD (Isaac Lab's ``spawn_from_usd``) with the contact model ``cfg.contacts`` authored on it."""
    prim = spawn_from_usd_file(prim_path, cfg.usd_path, cfg, translation, orientation)
    author_hand_contacts(prim, cfg.contacts)
    return prim


@configclass
class InHandUsdFileCfg(sim_utils.UsdFileCfg):
    """The hand's USD and the contact model authored on it (:func:`spawn_hand`)."""

    func: Callable | str = "dexwheel.isaaclab.tasks.in_hand.scene:spawn_hand"
    contacts: dict = {}
    """:func:`contact_model`'s."""


def _geometry(shape: str, size: float, length: float | None) -> tuple[str, dict[str, Any]]:
    r = size / 2
    extent = length if length is not None else size
    return {"cube": ("Cube", {"size": size}), "sphere": ("Sphere", {"radius": r}),
            "cylinder": ("Cylinder", {"radius": r, "height": extent, "axis": "Z"}),
            "capsule": ("Capsule", {"radius": r, "height": extent - size, "axis": "Z"})}[shape]  # fmt: skip


@clone
def spawn_object(prim_path: str, cfg: InHandObjectCfg, translation=None, orientation=None, **kwargs) -> Usd.Prim:
    """The object as Isaac Lab's shape spawners make it (a rigid body over ``geometry/mesh``, its collider), with the
    contact model's ``object`` entry authored on its collider."""
    prim_type, attributes = _geometry(cfg.shape, cfg.size, cfg.length)
    prim = spawn_geom_from_prim_type(prim_path, cfg, prim_type, attributes, translation, orientation)
    colliders = _colliders(prim)
    if len(colliders) != 1:
        raise RuntimeError(f"{prim_path}: expected one collider, found {len(colliders)}")
    _author(colliders[0], cfg.contacts)
    return prim


@configclass
class InHandObjectCfg(sim_utils.ShapeCfg):
    """The object's shape (:class:`ObjectSpec`'s ``shape``, ``size``, ``length``) and its collider's contact
    attributes (:func:`spawn_object`)."""

    func: Callable | str = "dexwheel.isaaclab.tasks.in_hand.scene:spawn_object"
    shape: str = "cube"
    size: float = 0.06
    length: float | None = None
    contacts: dict = {}
    """:func:`contact_model`'s ``object`` entry."""


def hand_cfg(hand: str, physics: InHandPhysicsCfg, contacts: dict[str, Any], prim_path: str,
             joint_pos: dict[str, float], rot: tuple[float, float, float, float]) -> ArticulationCfg:  # fmt: skip
    """The G20 ``hand`` (the description's USD, its PD motors) with every joint's armature ``physics.armature`` and
    the contact model ``contacts`` authored on it, its joints at ``joint_pos``, turned by ``rot`` (x, y, z, w)."""
    cfg = articulation_cfg(f"g20_{hand}", prim_path, joint_pos, rot=rot, armature=float(physics.armature))
    usd = cfg.spawn
    cfg.spawn = InHandUsdFileCfg(usd_path=usd.usd_path, articulation_props=usd.articulation_props, contacts=contacts)
    return cfg


def object_cfg(obj: ObjectSpec, contacts: dict[str, Any], prim_path: str,
               init_state: RigidObjectCfg.InitialStateCfg) -> RigidObjectCfg:  # fmt: skip
    """An in-hand object as a free rigid body: the MuJoCo scene's shape, size, length and mass, and the contact
    model's ``object`` entry (its friction as its material)."""
    spawn = InHandObjectCfg(shape=obj.shape, size=float(obj.size), length=None if obj.length is None else
                            float(obj.length), contacts=contacts["object"],
                            mass_props=MassCfg(mass=obj.mass), rigid_props=UsdPhysicsRigidBodyCfg(rigid_body_enabled=True),
                            collision_props=UsdPhysicsCollisionCfg(collision_enabled=True),
                            physics_material=_material(contacts["object"]["friction"]))  # fmt: skip
    return RigidObjectCfg(prim_path=prim_path, spawn=spawn, init_state=init_state)
