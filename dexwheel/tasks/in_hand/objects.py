"""The in-hand tasks' objects (:class:`ObjectSpec`), what the G20 can hold and where it holds them, without MuJoCo
(the configs, and both backends' scenes, read it in either venv)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dexwheel.fields import ConfigFieldError

SHAPES = ("cube", "cylinder", "sphere", "capsule")
#: The shapes with a symmetry axis and a length along it (a capsule's is tip to tip).
AXIAL = ("cylinder", "capsule")
#: The shapes that can lie across the fingers in the hooked hand (a sphere there: the rolling task's other shape).
ACROSS = (*AXIAL, "sphere")
#: How an object rests on the palm: ``upright`` (its symmetry axis along the palm normal: a cube on a face, a cylinder
#: on its end) or ``across`` (a cylinder or capsule lying across the fingers, its axis along the palm's width: the
#: flexion axis; a sphere laid in the hooked fingers the same way).
ORIENTATIONS = ("upright", "across")
#: A cylinder's length (m): from a finger's width to the four fingers' span.
LENGTH_RANGE = (0.03, 0.1)
#: What an object may be (m, kg, sliding friction): from what the fingers can wrap (4 cm: the flexed fingertips
#: still reach it; 8 cm: the palm's width less a finger) and lift (the 8 N m actuators hold 0.5 kg with margin),
#: and friction from wet plastic to rubber.
SIZE_RANGE, MASS_RANGE, FRICTION_RANGE = (0.04, 0.08), (0.02, 0.5), (0.3, 2.0)
#: The hand base's orientation (w, x, y, z): -90 deg about world y, so the palm normal (+x of hand_base) is world +z.
PALM_UP = (math.cos(-math.pi / 4), 0.0, math.sin(-math.pi / 4), 0.0)
#: Where the palm's top face is centred in the world (m), and its normal: the object rests there.
PALM_CENTRE = np.array([-0.0734, 0.0, 0.0122])
PALM_NORMAL = np.array([0.0, 0.0, 1.0])
#: Where an object is dropped to be grasped: the palm's centre moved 35 mm toward the fingers (their flexed tips
#: reach it there).
DROP_POINT = PALM_CENTRE + np.array([-0.035, 0.0, 0.0])
#: The bodies whose contacts with the object the tasks observe (thumb first, then index ... pinky).
FINGERTIPS = ("thumb_distal", "index_distal", "middle_distal", "ring_distal", "pinky_distal")
#: The object's torsional (m: a 1 cm contact patch) and rolling friction (MuJoCo's default).
TORSIONAL_FRICTION, ROLLING_FRICTION = 0.005, 0.0001


#: The world's y axis: the fingers' flexion axis (their pitch joints' axis), across the palm.
FLEXION_AXIS = np.array([0.0, 1.0, 0.0])


@dataclasses.dataclass(frozen=True)
class ObjectSpec:
    """One object: ``shape`` of ``SHAPES``, ``size`` (m: a cube's edge, a cylinder's, sphere's or capsule's diameter),
    ``mass`` (kg), sliding ``friction``; a cylinder's or capsule's ``length`` (m, a capsule's tip to tip; None: its
    diameter) and how it rests (``orientation`` of :data:`ORIENTATIONS`)."""

    shape: str = "cube"
    size: float = 0.06
    mass: float = 0.1
    friction: float = 1.0
    length: float | None = None
    orientation: str = "upright"

    @property
    def extent(self) -> float:
        """Its extent along its symmetry axis (m): a cylinder's or capsule's length, else its size."""
        return self.length if (self.shape in AXIAL and self.length is not None) else self.size

    @property
    def half_height(self) -> float:
        """Its centre's height above the palm when it rests there (m)."""
        return (self.extent if self.orientation == "upright" else self.size) / 2

    @property
    def rest_quat(self) -> tuple[float, float, float, float]:
        """Its orientation (w x y z) at rest on the palm: upright the identity, across -90 deg about world x (its
        body z axis, the cylinder's, along world +y)."""
        if self.orientation == "across":
            return (math.cos(-math.pi / 4), math.sin(-math.pi / 4), 0.0, 0.0)
        return (1.0, 0.0, 0.0, 0.0)

    @property
    def symmetry_axis(self) -> np.ndarray:
        """Its symmetry axis in the world at rest (the palm normal, or the flexion axis across)."""
        return FLEXION_AXIS if self.orientation == "across" else PALM_NORMAL


def validate_object(obj: ObjectSpec, where: str = "object") -> None:
    """Refuse, in one line naming the key and its allowed values, an object the hand cannot hold."""
    if obj.shape not in SHAPES:
        raise ConfigFieldError(f"{where}.shape", f"{where}.shape: {obj.shape!r}; choose one of {list(SHAPES)}")
    for name, (lo, hi), unit in (
        ("size", SIZE_RANGE, " m"),
        ("mass", MASS_RANGE, " kg"),
        ("friction", FRICTION_RANGE, ""),
    ):
        v = getattr(obj, name)
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and lo <= v <= hi):
            raise ConfigFieldError(f"{where}.{name}", f"{where}.{name}: {v!r}{unit} is outside [{lo:g}, {hi:g}]{unit} "
                                                      "(what the G20 can hold)")  # fmt: skip
    if obj.orientation not in ORIENTATIONS:
        raise ConfigFieldError(f"{where}.orientation", f"{where}.orientation: {obj.orientation!r}; choose one of "
                                                       f"{list(ORIENTATIONS)}")  # fmt: skip
    if obj.orientation == "across" and obj.shape not in ACROSS:
        raise ConfigFieldError(f"{where}.orientation", f"{where}.orientation: 'across' lays a cylinder, capsule or "
                                                       f"sphere across the fingers; a {obj.shape} rests 'upright'")  # fmt: skip
    if obj.length is not None:
        lo, hi = LENGTH_RANGE
        v = obj.length
        if obj.shape not in AXIAL:
            raise ConfigFieldError(f"{where}.length", f"{where}.length: a cylinder's or capsule's; a {obj.shape} takes "
                                                      "null")  # fmt: skip
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and lo <= v <= hi):
            raise ConfigFieldError(f"{where}.length", f"{where}.length: {v!r} m is outside [{lo:g}, {hi:g}] m (from a "
                                                      "finger's width to the four fingers' span)")  # fmt: skip
        if obj.shape == "capsule" and v <= obj.size:
            raise ConfigFieldError(f"{where}.length", f"{where}.length: {v!r} m is not longer than the capsule's "
                                                      f"diameter {obj.size!r} m (its two caps)")  # fmt: skip
    elif obj.shape == "capsule":
        raise ConfigFieldError(f"{where}.length", f"{where}.length: a capsule needs its length (tip to tip, m, longer "
                                                  "than its diameter)")  # fmt: skip
