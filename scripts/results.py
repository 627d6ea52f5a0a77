"""Reproduce a README results table: train seeds 0, 1, 2 of a robot's default run, evaluate each on two
disjoint evaluation sets, print one row per run and the spread.

python scripts/results.py robot=solenopsis                 # outputs/results/solenopsis/seed<s>/, ~5-10 min a seed
python scripts/results.py robot=g20_left drive=pd          # the hand on unseen (random) goals
python scripts/results.py robot=solenopsis seeds=[0] sets=[20000]   # fewer

Any other override goes to train.py. A seed whose run folder already holds ``checkpoints/final`` is not trained
again (delete the folder to retrain); evaluations are rewritten (``overwrite=true``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = {"velocity_tracking": ("lin_vel_x_error", "ang_vel_z_error", "fall"),
           "hand_pose_tracking": ("mean_joint_error", "max_joint_error", "success")}  # fmt: skip
EPISODES = 10  # per evaluation set


def _arg(args: list[str], key: str, default: str) -> str:
    found = [a.split("=", 1)[1] for a in args if a.startswith(f"{key}=")]
    return found[-1] if found else default


def _list(text: str) -> list[int]:
    return [int(x) for x in text.strip("[]").split(",") if x.strip()]


def run(cmd: list[str]) -> str:
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return done.stdout


def main() -> None:
    args = sys.argv[1:]
    robot = _arg(args, "robot", "solenopsis")
    seeds, sets = _list(_arg(args, "seeds", "[0,1,2]")), _list(_arg(args, "sets", "[20000,30000]"))
    out = Path(_arg(args, "out", f"outputs/results/{robot}"))
    train_args = [a for a in args if a.split("=", 1)[0] not in ("seeds", "sets", "out")]
    hand = robot.startswith("g20")
    task = "hand_pose_tracking" if hand else "velocity_tracking"
    rows = []
    for seed in seeds:
        run_dir = out / f"seed{seed}"
        if not list((run_dir / "checkpoints").glob("final.*")):
            print(f"training seed {seed} -> {run_dir}", flush=True)
            run([sys.executable, "scripts/train.py", *train_args, f"seed={seed}", f"hydra.run.dir={run_dir}",
                 "train.progress_bar=false"])  # fmt: skip
        wall = re.findall(r" - done step=\d+ wall_s=([\d.]+)", (run_dir / "train.log").read_text())
        for eval_seed in sets:
            goals = ["env_overrides={goal_mode: random}"] if hand else []  # unseen goals only
            run([sys.executable, "scripts/evaluate.py", f"run={run_dir}", "checkpoint=final", f"eval_seed={eval_seed}",
                 f"episodes={EPISODES}", "overwrite=true", f"out={run_dir / 'eval' / f'results_{eval_seed}.json'}", *goals])  # fmt: skip
            result = json.loads((run_dir / "eval" / f"results_{eval_seed}.json").read_text())["results"][robot]
            rows.append((seed, eval_seed, float(wall[-1]) if wall else float("nan"), result))
    keys = METRICS[task]
    print(f"| seed | eval_seed | wall (min) | {' | '.join(keys)} |")
    print("|---" * (3 + len(keys)) + "|")
    for seed, eval_seed, wall, r in rows:
        cells = [f"{round(r[k] * EPISODES)}/{EPISODES}" if k in ("fall", "success") else f"{r[k]:.3f}" for k in keys]
        print(f"| {seed} | {eval_seed} | {wall / 60:.1f} | {' | '.join(cells)} |")
    for k in keys:
        values = [r[k] for *_, r in rows]
        print(f"{k}: min {min(values):.3f} max {max(values):.3f} mean {sum(values) / len(values):.3f}")


if __name__ == "__main__":
    main()
