"""Robot descriptions: each robot's facts once, as data plus build functions."""

from __future__ import annotations

from collections.abc import Callable

from dexwheel.robots.description import RobotDescription
from dexwheel.robots.g20 import g20_left, g20_right
from dexwheel.robots.wheel_leg import m20_legacy, solenopsis

ROBOTS: dict[str, Callable[[], RobotDescription]] = {
    "g20_left": g20_left,
    "g20_right": g20_right,
    "solenopsis": solenopsis,
    "m20_legacy": m20_legacy,
}
WHEEL_LEG_ROBOTS = ("solenopsis", "m20_legacy")


def get_robot(name: str) -> RobotDescription:
    try:
        return ROBOTS[name]()
    except KeyError:
        raise ValueError(f"robot: unknown robot {name!r}; choose one of {sorted(ROBOTS)}") from None


__all__ = ["ROBOTS", "WHEEL_LEG_ROBOTS", "RobotDescription", "get_robot"]
