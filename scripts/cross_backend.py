"""Cross-backend dynamics table: the same initial states and open-loop commands on MuJoCo 4 and Isaac Lab.

Run in the Isaac Lab venv (it starts the MuJoCo half in .venv itself):

.venv-isaaclab/bin/python scripts/cross_backend.py                   # every group, the table on stdout
.venv-isaaclab/bin/python scripts/cross_backend.py --group hand      # G20 hands only
.venv-isaaclab/bin/python scripts/cross_backend.py --group hand_task # the G20 task cases (mappings, hard-write)
.venv-isaaclab/bin/python scripts/cross_backend.py --group in_hand   # a cube dropped on the G20's palm, then grasped
.venv-isaaclab/bin/python scripts/cross_backend.py --group in_hand_task  # the object tasks: the capsule's gait, holds
.venv-isaaclab/bin/python scripts/cross_backend.py --group wheel_leg_task  # stance layer, randomisation off/on
.venv-isaaclab/bin/python scripts/cross_backend.py --isaac-pd-split  # Isaac Lab's own kp/kd split
.venv-isaaclab/bin/python scripts/cross_backend.py --group terrain --plot step.png  # the 0.05 m step, drawn

Each half says on stderr when it starts and how long it took, its own output relayed as it comes; the table goes
to stdout. --json, --plot and --workdir never replace a file unless --overwrite: they are checked before the run
(minutes), as are --group (a group named twice runs once) and --device (cpu, cuda or cuda:N); bad input is one
line, `error: <option>: ...`, exit 2. Exits 1 when a quantity misses its tolerance or a half fails (one line
naming it; its output is above). Set WARP_CACHE_PATH to reuse compiled kernels (make does).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from dexwheel.atomic import write_atomic
from dexwheel.cli import Parser, refuse
from dexwheel.isaaclab import cross_backend, scenarios


def device(text: str) -> str:
    if not re.fullmatch(r"cpu|cuda(:\d+)?", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a device; use cpu, cuda or cuda:N (N: the GPU's index)")
    return text


def check_outputs(args: argparse.Namespace, groups: tuple[str, ...]) -> None:
    """Refuse, before the run, an output the run could not write or would silently replace."""
    files = {"--json": args.json, "--plot": args.plot}
    if args.json is not None and args.plot is not None and args.json.resolve() == args.plot.resolve():
        refuse(f"--plot: {args.plot} is --json's file too; give each its own")
    for option, path in files.items():
        if path is None:
            continue
        if not path.parent.is_dir():
            refuse(f"{option}: the folder {path.parent} does not exist")
        if path.is_dir():
            refuse(f"{option}: {path} is a folder; {option} names the file to write")
        if path.exists() and not args.overwrite:
            refuse(f"{option}: {path} already exists; choose another path or pass --overwrite")
    if args.workdir is not None:
        if args.workdir.exists() and not args.workdir.is_dir():
            refuse(f"--workdir: {args.workdir} is a file; --workdir names a folder")
        taken = [args.workdir / n for n in cross_backend.outputs(groups) if (args.workdir / n).exists()]
        if taken and not args.overwrite:
            refuse(
                f"--workdir: {taken[0]} already exists (an earlier run's); choose another folder or pass --overwrite"
            )


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--group", action="append", choices=list(cross_backend.GROUPS), help="default: all")
    parser.add_argument("--device", default="cpu", type=device, help="Isaac Lab device: cpu, cuda or cuda:N")
    parser.add_argument("--isaac-pd-split", action="store_true", help="Isaac Lab's kp/kd split, not one motor")
    parser.add_argument("--workdir", type=Path, help="keep the trajectories (.npz) here")
    parser.add_argument("--json", type=Path, help="also write the table and run details as JSON")
    parser.add_argument("--plot", type=Path, help="draw the step: base height and pitch over time (PNG)")
    parser.add_argument("--overwrite", action="store_true", help="replace existing --json, --plot, --workdir files")
    args = parser.parse_args(argv)
    groups = tuple(dict.fromkeys(args.group or cross_backend.GROUPS))  # a group named twice runs once
    if args.plot is not None and "terrain" not in groups:
        refuse(f"--plot: it draws the terrain group's step; --group {' '.join(groups)} leaves it out")
    check_outputs(args, groups)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            result = cross_backend.run(args.workdir or Path(tmp), groups, args.device, not args.isaac_pd_split)
    except cross_backend.CrossBackendError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(scenarios.format_table(result.rows))
    for name, meta in result.meta.items():
        timing = {k: meta[k] for k in ("build_s", "step_s", "steps", "num_envs") if k in meta}
        print(f"{name}: {timing or meta}")
    for traces in result.steps.values() if args.plot is not None else []:
        print(f"plot: {scenarios.plot_step(traces, args.plot)}")
    if args.json:
        rows = [{**r.__dict__, "ok": r.ok} for r in result.rows]
        run = {"groups": list(groups), "device": args.device, "isaac_pd_split": args.isaac_pd_split}
        write_atomic(args.json, json.dumps({"run": run, "rows": rows, "meta": result.meta}, indent=2, default=str))
    for r in result.failures:
        print(f"FAILED {r.robot}: {r.quantity} differs by {r.diff:.3g} (tolerance {r.tol:g})", file=sys.stderr)
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
