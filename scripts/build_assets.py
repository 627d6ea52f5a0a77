"""Rebuild the committed MJCF, URDF and scene files under assets/ from dexwheel.robots.

python scripts/build_assets.py            # all robots
python scripts/build_assets.py solenopsis # one robot
"""

from __future__ import annotations

import argparse

from tqdm import tqdm

from dexwheel.atomic import write_atomic
from dexwheel.robots import ROBOTS
from dexwheel.robots.assets import ASSETS_DIR, asset_texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("robots", nargs="*", help=f"robots to build (default: all of {list(ROBOTS)})")
    args = parser.parse_args()
    unknown = sorted(set(args.robots) - set(ROBOTS))
    if unknown:
        parser.error(f"unknown robot(s) {unknown}; choose from {list(ROBOTS)}")
    robots = args.robots or list(ROBOTS)
    for robot in tqdm(robots, desc="building assets", unit="robot"):
        for rel, text in asset_texts(robot).items():
            write_atomic(ASSETS_DIR / rel, text)
            tqdm.write(f"wrote assets/{rel}")


if __name__ == "__main__":
    main()
