"""The in-hand tasks' objects (:class:`ObjectSpec`) and what the G20 can hold, without MuJoCo (the configs read it
in either venv)."""

from __future__ import annotations

import dataclasses

from dexwheel.fields import ConfigFieldError

SHAPES = ("cube", "cylinder", "sphere")
#: What an object may be (m, kg, sliding friction): from what the fingers can wrap (4 cm: the flexed fingertips
#: still reach it; 8 cm: the palm's width less a finger) and lift (the 8 N m actuators hold 0.5 kg with margin),
#: and friction from wet plastic to rubber.
SIZE_RANGE, MASS_RANGE, FRICTION_RANGE = (0.04, 0.08), (0.02, 0.5), (0.3, 2.0)


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
