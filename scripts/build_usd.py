"""Rebuild the committed USD files (assets/<robot>/usd/<robot>.usda, assets/ground_plane.usda) from the URDFs.

Runs in the Isaac Lab venv (urdf-usd-converter lives there):

.venv-isaaclab/bin/python scripts/build_usd.py             # all robots
.venv-isaaclab/bin/python scripts/build_usd.py solenopsis  # one robot (and the ground plane)

Rebuild the URDFs first (scripts/build_assets.py) when a robot description changes.
"""

from __future__ import annotations

import argparse

from dexwheel.robots import ROBOTS
from dexwheel.robots.assets import ASSETS_DIR


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("robots", nargs="*", help=f"robots to convert (default: all of {list(ROBOTS)})")
    args = parser.parse_args()
    unknown = sorted(set(args.robots) - set(ROBOTS))
    if unknown:
        parser.error(f"unknown robot(s) {unknown}; choose from {list(ROBOTS)}")
    from dexwheel.isaaclab.usd import build_usd  # after argument errors: importing USD takes a moment

    for path in build_usd(args.robots or list(ROBOTS)):
        print(f"wrote {path.relative_to(ASSETS_DIR.parent)}")


if __name__ == "__main__":
    main()
