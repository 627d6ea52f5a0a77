"""Draw a G20 config's random goal set with the MuJoCo task (core venv, MuJoCo 4): :mod:`.goal_set`'s source.

``python -m dexwheel.tasks.hand_pose.sample_goals --write`` rewrites ``random_goals.npz`` for both hands'
default configs (atomically; it takes no other option). ``--key JSON --out FILE`` draws one key's set (what the
Isaac Lab venv asks for) into FILE as ``.npy`` data, exactly that name, refusing an existing file unless
``--overwrite``. Bad input is one line, ``error: <option>: ...``, exit status 2, before the draw.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import numpy as np

from dexwheel.atomic import write_atomic, write_new
from dexwheel.cli import Parser, refuse
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


def parse_key(text: str) -> dict:
    """``--key``'s JSON as a :func:`goal_set.key` (its fields, no others), checked by the config it describes;
    ValueError names what is wrong."""
    fields = list(goal_set.key(make_cfg()))
    try:
        k = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e}); a key is a JSON object with the fields {fields}") from None
    if not isinstance(k, dict):
        raise ValueError(f"must be a JSON object with the fields {fields}, got a {type(k).__name__}")
    missing, unknown = [f for f in fields if f not in k], sorted(set(k) - set(fields))
    if missing or unknown:
        wrong = ", ".join(filter(None, [missing and f"missing {missing}", unknown and f"unknown {unknown}"]))
        raise ValueError(f"{wrong}; a key has the fields {fields} (goal_set.key as JSON)")
    for name, low in (("size", 1), ("seed", 0)):
        if not isinstance(k[name], int) or isinstance(k[name], bool) or k[name] < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {k[name]!r}")
    try:
        goal_set.config_of(k)  # the config's own checks: hand, penetration_tol, hold_joints, ...
    except (TypeError, ValueError) as e:
        raise ValueError(str(e)) from None
    return k


def write_table() -> None:
    """Draw both hands' default sets (about 5 s each) and replace the committed file with them."""
    keys, sets = defaults(), []
    for i, k in enumerate(keys, 1):
        start = time.perf_counter()
        sets.append((k, compute(k)))
        print(f"[{i}/{len(keys)}] {k['hand']} hand: {k['size']} goals ({time.perf_counter() - start:.1f} s)",
              flush=True)  # fmt: skip
    goal_set.write(sets)
    print(f"wrote {goal_set.TABLE}")


def main(argv: list[str] | None = None) -> int:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true",
                   help=f"rewrite {goal_set.TABLE.name} for both hands' defaults (no other option)")  # fmt: skip
    p.add_argument("--key", help="a goal_set.key as JSON: draw its set into --out")
    p.add_argument("--out", type=Path, help="with --key: the file to write (.npy data, exactly this name)")
    p.add_argument("--overwrite", action="store_true", help="with --out: replace an existing file")
    args = p.parse_args(argv)
    if args.write:
        for option, value in (("--key", args.key), ("--out", args.out), ("--overwrite", args.overwrite)):
            if value:
                refuse(f"{option}: --write rewrites {goal_set.TABLE.name} for both hands' default configs and takes "
                       f"no {option} (without --write, --key JSON --out FILE draws one key's set)")  # fmt: skip
        write_table()
        return 0
    if args.key is None or args.out is None:
        refuse(f"{'--key' if args.key is None else '--out'}: give --key JSON and --out FILE (one key's set), "
               f"or --write alone (rewrite {goal_set.TABLE.name})")  # fmt: skip
    try:
        k = parse_key(args.key)
    except ValueError as e:
        refuse(f"--key: {e}")
    taken = f"--out: {args.out} already exists; choose another path or pass --overwrite"
    if args.out.is_dir():
        refuse(f"--out: {args.out} is a folder; --out names the file to write")
    if args.out.exists() and not args.overwrite:  # before the draw; write_new checks again as it writes
        refuse(taken)
    buf = io.BytesIO()
    np.save(buf, compute(k))
    try:
        (write_atomic if args.overwrite else write_new)(args.out, buf.getvalue())
    except FileExistsError:  # created during the draw
        refuse(taken)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
