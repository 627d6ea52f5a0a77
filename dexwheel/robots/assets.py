"""The committed asset files: what ``scripts/build_assets.py`` writes and the tests compare against."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from dexwheel.atomic import write_atomic
from dexwheel.robots import ROBOTS, WHEEL_LEG_ROBOTS, get_robot
from dexwheel.robots.mjcf import to_mjcf
from dexwheel.robots.urdf import to_urdf

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"


def asset_texts(robot: str) -> dict[str, str]:
    """Relative path -> file text for one robot: MJCF, URDF and, for wheel-leg robots, the scene."""
    desc = get_robot(robot)
    files = {f"{robot}/{robot}.xml": to_mjcf(desc), f"{robot}/{robot}.urdf": to_urdf(desc)}
    if robot in WHEEL_LEG_ROBOTS:
        files[f"{robot}/scene.xml"] = to_mjcf(desc, ground=True)
    return files


def build_assets(
    root: Path = ASSETS_DIR, robots: Iterable[str] = ROBOTS, progress: Callable[[str], None] | None = None
) -> list[Path]:
    """Rebuild every asset file under ``root``; returns the paths written."""
    written = []
    for robot in robots:
        for rel, text in asset_texts(robot).items():
            path = root / rel
            write_atomic(path, text)
            written.append(path)
            if progress is not None:
                progress(str(path))
    return written
