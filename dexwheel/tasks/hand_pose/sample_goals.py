"""Draw a G20 config's random goal set with the MuJoCo task (core venv, MuJoCo 4): :mod:`.goal_set`'s source.

``python -m dexwheel.tasks.hand_pose.sample_goals --write`` rewrites ``random_goals.npz`` for both hands'
default configs; ``--key JSON --out FILE.npy`` draws one key's set (what the Isaac Lab venv asks for).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from dexwheel.tasks.hand_pose import goal_set
from dexwheel.tasks.hand_pose.config import make_cfg
from dexwheel.tasks.hand_pose.task import G20HandTask


def compute(k: dict) -> np.ndarray:
    """``k``'s set: ``size`` goals of :meth:`G20HandTask.sample_goal` (``goal_mode="random"``) from one
    generator seeded ``seed``, in order."""
    task = G20HandTask(goal_set.config_of(k))
    try:
        rng = np.random.default_rng(k["seed"])
        return np.stack([task.sample_goal(rng) for _ in range(k["size"])])
    finally:
        task.close()


def defaults() -> list[dict]:
    """The keys of both hands' default configs (the committed sets)."""
    return [goal_set.key(make_cfg(hand=hand)) for hand in ("left", "right")]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="rewrite random_goals.npz for both hands' defaults")
    p.add_argument("--key", help="a goal_set.key as JSON")
    p.add_argument("--out", help="with --key: the .npy to write")
    args = p.parse_args(argv)
    if args.write:
        goal_set.write([(k, compute(k)) for k in defaults()])
        print(f"wrote {goal_set.TABLE}")
        return 0
    if args.key is None or args.out is None:
        p.error("--write, or --key and --out")
    np.save(args.out, compute(json.loads(args.key)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
