"""Search the rolling task's finger gait (dexwheel/tasks/in_hand/teacher.py) on the task itself: a cross-entropy search
over the gait's numbers (its period, the finger pairs' offset, each joint's mean, amplitude and phase).

python scripts/tune_in_hand_gait.py --out /tmp/gait.json                         # 20 rounds of 16 candidates
python scripts/tune_in_hand_gait.py --out /tmp/gait.json --start /tmp/gait.json --rounds 10   # go on from a result

Each round draws ``--population`` candidates around the mean (the best so far among them, evaluated again), runs each
on ``--trials`` fresh grasps of the task's cache for ``--seconds`` (one vector env, every candidate on the same
grasps, new grasps each round), and scores it as the rotation benchmark does: the object's mean angular velocity about
the axis over the whole trial (a drop ends its turning), less ``--drop-price`` times the share of trials that dropped.
The best ``--elites`` move the mean and spread. Prints each round, writes the best candidate (its GaitParams, score,
rate and drops) to ``--out`` after every round (refused if it exists, unless --overwrite).
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import dexwheel  # noqa: F401  (registers the env ids)
from dexwheel.atomic import write_atomic
from dexwheel.cli import Parser, refuse
from dexwheel.tasks.in_hand.teacher import DEFAULT_GAIT, GAIT_JOINTS, PARAM_DIM, FingerGaitTeacher, GaitParams

#: The searched range of each number: (low, high); a joint's mean within its limits, its amplitude up to half its range.
_JOINT_BOUNDS = {"mcp_pitch": (0.0, 1.22), "pip": (0.0, 1.74), "mcp_roll": (-0.23, 0.23), "thumb_cmc_yaw": (0.0, 1.57),
                 "thumb_cmc_roll": (0.0, 1.47), "thumb_cmc_pitch": (0.0, 0.84), "thumb_mcp": (0.0, 1.26)}  # fmt: skip
LOW = np.array([0.5, -math.pi, *(v for j in GAIT_JOINTS for v in (_JOINT_BOUNDS[j][0], 0.0, -math.pi)), 0.0])
HIGH = np.array([4.0, math.pi, *(v for j in GAIT_JOINTS for v in (_JOINT_BOUNDS[j][1],
                                                               (_JOINT_BOUNDS[j][1] - _JOINT_BOUNDS[j][0]) / 2, math.pi)),
                 3.0])  # fmt: skip


def evaluate(venv, candidates: np.ndarray, trials: int, seconds: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's mean rate (rad/s, the benchmark's: turn / seconds) and drop share over ``trials`` grasps
    (reset seeds ``seed .. seed + trials - 1``, the same for every candidate)."""
    task = venv.unwrapped.task
    n = len(candidates) * trials
    venv.reset(seed=[seed + k for _ in candidates for k in range(trials)])
    teacher = FingerGaitTeacher(task, np.repeat(candidates, trials, axis=0))
    turned, dropped, done = np.zeros(n), np.zeros(n, bool), np.zeros(n, bool)
    for _ in range(round(seconds / task.dt)):
        _, _, terminated, truncated, info = venv.step(teacher())
        live = ~done & ~terminated & ~truncated
        turned[live] += np.asarray(info["rotation_rate"])[live] * task.dt
        dropped |= terminated & ~done
        done |= terminated | truncated
    rate = (turned / seconds).reshape(len(candidates), trials).mean(axis=1)
    return rate, dropped.reshape(len(candidates), trials).mean(axis=1)


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--overwrite", action="store_true")
    parser.add_argument("--start", type=Path, help="a result of this script to go on from (its mean and best)")
    parser.add_argument("--env", default="G20Rotate-v0")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--population", type=int, default=16)
    parser.add_argument("--elites", type=int, default=4)
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--drop-price", type=float, default=1.0, help="rad/s per share of trials dropped")
    parser.add_argument("--spread", type=float, default=0.3, help="the first round's spread, a share of each range")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.out.exists() and not args.overwrite:
        refuse(f"--out: {args.out} exists; choose another --out or pass --overwrite")
    if not (1 <= args.elites < args.population) or args.trials < 1 or args.rounds < 1 or not args.seconds > 0:
        refuse("--elites, --population, --trials, --rounds, --seconds: 1 <= elites < population, trials and rounds "
               ">= 1, seconds > 0")  # fmt: skip
    mean = DEFAULT_GAIT.vector()
    if args.start is not None:
        try:
            start = json.loads(args.start.read_text())
            mean = GaitParams(**start["mean"]).vector()
        except (OSError, ValueError, KeyError, TypeError) as e:
            refuse(f"--start: {args.start} is no result of this script ({type(e).__name__}: {e})")
    rng = np.random.default_rng(args.seed)
    std = args.spread * (HIGH - LOW)
    best, best_score, log = mean.copy(), -np.inf, []
    venv = gym.make_vec(args.env, num_envs=args.population * args.trials, vectorization_mode="vector_entry_point",
                        episode_length_s=args.seconds + 1.0)  # fmt: skip
    try:
        for r in range(args.rounds):
            t0 = time.monotonic()
            pop = np.clip(mean + std * rng.standard_normal((args.population, PARAM_DIM)), LOW, HIGH)
            pop[0] = best  # the best so far, on this round's grasps
            rate, drops = evaluate(venv, pop, args.trials, args.seconds, seed=1000 * (args.seed + 1) + r * args.trials)
            score = rate - args.drop_price * drops
            order = np.argsort(-score)
            elites = pop[order[: args.elites]]
            mean, std = elites.mean(axis=0), np.maximum(elites.std(axis=0), 0.01 * (HIGH - LOW))
            k = order[0]
            best, best_score = pop[k].copy(), float(score[k])
            entry = {"round": r, "score": best_score, "rate": float(rate[k]), "drops": float(drops[k]),
                     "seconds": round(time.monotonic() - t0, 1)}  # fmt: skip
            log.append(entry)
            print(f"round {r + 1}/{args.rounds}: best score {best_score:.3f} (rate {rate[k]:.3f} rad/s, drops "
                  f"{drops[k]:.0%}); elites' mean score {score[order[: args.elites]].mean():.3f} "
                  f"({entry['seconds']:.0f} s)", flush=True)  # fmt: skip
            result = {"best": GaitParams.from_vector(best).as_dict(), "mean": GaitParams.from_vector(mean).as_dict(),
                      **{k: v for k, v in entry.items() if k != "seconds"}, "env": args.env, "trials": args.trials,
                      "protocol_seconds": args.seconds, "log": log}  # fmt: skip
            write_atomic(args.out, json.dumps(result, indent=1))
    finally:
        venv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
