"""The in-hand tasks' objects (:class:`ObjectSpec`), what the G20 can hold and where it holds them, without MuJoCo
(the configs, and both backends' scenes, read it in either venv)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dexwheel.fields import ConfigFieldError

SHAPES = ("cube", "cylinder", "sphere")
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


@dataclasses.dataclass(frozen=True)
class ObjectSpec:
    """One object: ``shape`` of ``SHAPES``, ``size`` (m), ``mass`` (kg), sliding ``friction``."""

    shape: str = "cube"
    size: float = 0.06
    mass: float = 0.1
    friction: float = 1.0

    @property
    def half_height(self) -> float:
        """Its centre's height above the palm when it rests there (m)."""
        return self.size / 2


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
