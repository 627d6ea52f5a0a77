"""Cross-backend dynamics table: the same initial states and open-loop commands on MuJoCo 4 and Isaac Lab.

Run in the Isaac Lab venv (it starts the MuJoCo half in .venv itself):

.venv-isaaclab/bin/python scripts/cross_backend.py                   # every group, the table on stdout
.venv-isaaclab/bin/python scripts/cross_backend.py --group hand      # G20 hands only
.venv-isaaclab/bin/python scripts/cross_backend.py --group hand_task # the G20 task cases (mappings, hard-write)
.venv-isaaclab/bin/python scripts/cross_backend.py --group wheel_leg_task  # stance layer, randomisation off/on
.venv-isaaclab/bin/python scripts/cross_backend.py --isaac-pd-split  # Isaac Lab's own kp/kd split
.venv-isaaclab/bin/python scripts/cross_backend.py --group terrain --plot step.png  # the 0.05 m step, drawn

Exits 1 when a quantity misses its tolerance. Set WARP_CACHE_PATH to reuse compiled kernels (make does).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from dexwheel.isaaclab import cross_backend, scenarios


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--group", action="append", choices=list(cross_backend.GROUPS), help="default: all")
    parser.add_argument("--device", default="cpu", help="Isaac Lab device (cpu, cuda:0)")
    parser.add_argument("--isaac-pd-split", action="store_true", help="Isaac Lab's kp/kd split, not one motor")
    parser.add_argument("--workdir", type=Path, help="keep the trajectories (.npz) here")
    parser.add_argument("--json", type=Path, help="also write the table and run details as JSON")
    parser.add_argument("--plot", type=Path, help="draw the step: base height and pitch over time (PNG)")
    args = parser.parse_args()
    groups = tuple(args.group or cross_backend.GROUPS)
    if args.plot is not None and "terrain" not in groups:
        parser.error(f"--plot draws the terrain group's step; --group {' '.join(groups)} leaves it out")
    with tempfile.TemporaryDirectory() as tmp:
        result = cross_backend.run(args.workdir or Path(tmp), groups, args.device, not args.isaac_pd_split)
    print(scenarios.format_table(result.rows))
    for name, meta in result.meta.items():
        timing = {k: meta[k] for k in ("build_s", "step_s", "steps", "num_envs") if k in meta}
        print(f"{name}: {timing or meta}")
    for traces in result.steps.values() if args.plot is not None else []:
        print(f"plot: {scenarios.plot_step(traces, args.plot)}")
    if args.json:
        rows = [{**r.__dict__, "ok": r.ok} for r in result.rows]
        args.json.write_text(json.dumps({"rows": rows, "meta": result.meta}, indent=2, default=str))
    for r in result.failures:
        print(f"FAILED {r.robot}: {r.quantity} differs by {r.diff:.3g} (tolerance {r.tol:g})", file=sys.stderr)
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
