"""Search the climbing gait's numbers (dexwheel/tasks/velocity/teacher.py) on the step benchmark: a cross-entropy
search over its three phases' knee actions, its reaches and its climbing speed.

python scripts/tune_climbing_gait.py --out /tmp/gait.json                 # 8 rounds of 20 candidates, ~8 min on 2 cores
python scripts/tune_climbing_gait.py --out /tmp/gait.json --start /tmp/gait.json --rounds 4   # go on from a result
python scripts/tune_climbing_gait.py --stairs --out /tmp/stairs.json   # the stairs mode's numbers, on real stairs

Each candidate runs the protocol below on MuJoCo (``--stairs``: the stairs mode's keywords on 5-step flights of 0.10
and 0.125 m risers, 0.30 m treads); its score is the successes minus half the falls. Each round
draws ``--population`` candidates around the mean, keeps the best ``--elites`` and moves the mean and spread to
them. Prints each round, writes the best candidate (its ClimbingTeacher keywords, score and outcome letters) to
``--out`` (refused if it exists, unless --overwrite) after every round, and a log beside it.
"""

from __future__ import annotations

import inspect
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from dexwheel.atomic import write_atomic
from dexwheel.cli import Parser, refuse

#: the searched keywords of ClimbingTeacher, each (low, high); the phases' pairs are (leading, trailing) arms
BOUNDS = {
    "prepare": ((-1.0, 1.0), (-1.0, 1.0)),
    "lead": ((-1.0, 1.0), (-1.0, 1.0)),
    "trail": ((-1.0, 1.0), (-1.0, 1.0)),
    "lead_reach": ((0.0, 0.15),),
    "trail_reach": ((0.0, 0.2),),
    "approach": ((0.1, 0.5),),
    "climb_speed": ((0.5, 1.5),),
    "pre_reach": ((0.1, 0.6),),
}
#: ``--stairs``: the stairs mode's keywords (knee actions (leading, trailing), reaches in m, speeds in m/s)
STAIRS_BOUNDS = {
    "stairs_cruise": ((-1.0, 1.0), (-1.0, 1.0)),
    "stairs_lead": ((-1.0, 1.0), (-1.0, 1.0)),
    "stairs_trail": ((-1.0, 1.0), (-1.0, 1.0)),
    "stairs_lead_reach": ((0.0, 0.25),),
    "stairs_trail_reach": ((0.0, 0.25),),
    "stairs_speed": ((0.1, 1.5),),
    "stairs_lead_speed": ((0.0, 1.5),),
    "stairs_trail_speed": ((0.0, 1.5),),
    "stairs_speed_gain": ((0.0, 6.0),),
    "stairs_pitch_gain": ((0.0, 4.0),),
    "stairs_pitch": ((0.0, 0.6),),
    "stairs_max_pitch": ((0.3, 0.9),),
    "stairs_guard_speed": ((-0.5, 0.5),),
}
#: the protocol a candidate is scored on: the heights and flight that the issue asks for, at the widest start yaw
PROTOCOL = {
    "heights": [0.15, 0.2],
    "directions": ["up"],
    "stairs_risers": [0.15],
    "stairs_tread": 0.8,
    "stairs_steps": 3,
    "yaw_range": 0.5,
}
#: ``--stairs``: real stairs (5 risers, 0.30 m treads) at the risers around the gait's limit, up
STAIRS_PROTOCOL = {"heights": [], "directions": ["up"], "stairs_risers": [0.1, 0.125], "stairs_tread": 0.3,
                   "stairs_steps": 5}  # fmt: skip


def limits(bounds: dict) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([lo for b in bounds.values() for lo, _ in b]),
        np.array([hi for b in bounds.values() for _, hi in b]),
    )


def to_keywords(x: np.ndarray, bounds: dict = BOUNDS) -> dict:
    low, high = limits(bounds)
    out, i = {}, 0
    for name, b in bounds.items():
        values = [round(float(v), 3) for v in np.clip(x[i : i + len(b)], low[i : i + len(b)], high[i : i + len(b)])]
        out[name] = tuple(values) if len(b) > 1 else values[0]
        i += len(b)
    return out


def from_keywords(kw: dict, bounds: dict = BOUNDS) -> np.ndarray:
    return np.array([v for name in bounds for v in np.atleast_1d(kw[name])], dtype=float)


def score(x: np.ndarray, trials: int, stairs: bool = False) -> tuple[float, dict[str, str]]:
    """A candidate's score and outcome letters (runs in a worker process)."""
    import gymnasium as gym

    from dexwheel.protocols import steps
    from dexwheel.rl.step_benchmark import benchmark_env_kwargs, run_step_benchmark
    from dexwheel.tasks.velocity.teacher import gait_policy

    kw = to_keywords(x, STAIRS_BOUNDS if stairs else BOUNDS)
    bench = steps.make_cfg({**(STAIRS_PROTOCOL if stairs else PROTOCOL), "trials": trials})

    def make(desc):
        return gym.make("Solenopsis-Rough-v0", terrain=desc, **benchmark_env_kwargs(bench))

    letters = run_step_benchmark(make, lambda env: gait_policy(env, **kw), bench)["outcomes"]
    return sum(s.count("S") - 0.5 * s.count("F") for s in letters.values()), letters


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the best candidate's JSON")
    parser.add_argument("--start", type=Path, help="a result JSON to start from; default: the gait's defaults")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--population", type=int, default=20)
    parser.add_argument("--elites", type=int, default=5)
    parser.add_argument("--spread", type=float, default=0.15, help="the first round's spread, a share of each range")
    parser.add_argument("--trials", type=int, default=8, help="per scene")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--overwrite", action="store_true")
    parser.add_argument("--stairs", action="store_true", help="search the stairs mode's numbers on real stairs")
    args = parser.parse_args(argv)
    for name in ("rounds", "population", "trials", "workers"):
        if getattr(args, name) < 1:
            refuse(f"--{name}: expected an integer >= 1, got {getattr(args, name)}")
    if not 1 <= args.elites <= args.population:
        refuse(f"--elites: expected 1 <= elites <= --population = {args.population}, got {args.elites}")
    if args.out.exists() and not args.overwrite:
        refuse(f"--out: {args.out} exists; choose another --out or pass --overwrite")
    if args.start is not None:
        start = json.loads(args.start.read_text())["keywords"]
    else:
        from dexwheel.tasks.velocity.teacher import ClimbingTeacher

        params = inspect.signature(ClimbingTeacher).parameters
        start = {name: params[name].default for name in (STAIRS_BOUNDS if args.stairs else BOUNDS)}
    bounds, protocol = (STAIRS_BOUNDS, STAIRS_PROTOCOL) if args.stairs else (BOUNDS, PROTOCOL)
    low, high = limits(bounds)
    log_path = args.out.with_suffix(".log")
    rng = np.random.default_rng(args.seed)
    mean, spread = from_keywords(start, bounds), (high - low) * args.spread
    best: dict = {"score": -np.inf}
    with ProcessPoolExecutor(args.workers) as pool, open(log_path, "w") as log:

        def say(line: str) -> None:
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()

        for k in range(args.rounds):
            xs = np.clip(mean + spread * rng.standard_normal((args.population, len(mean))), low, high)
            if k == 0:
                xs[0] = np.clip(mean, low, high)  # the start itself is scored
            results = list(pool.map(score, xs, [args.trials] * len(xs), [args.stairs] * len(xs)))
            scores = np.array([s for s, _ in results])
            order = np.argsort(-scores, kind="stable")
            elites = xs[order[: args.elites]]
            mean, spread = elites.mean(axis=0), elites.std(axis=0) + (high - low) * 0.02
            top = order[0]
            if scores[top] > best["score"]:
                best = {"score": float(scores[top]), "keywords": to_keywords(xs[top], bounds), "outcomes": results[top][1],
                        "protocol": {**protocol, "trials": args.trials}, "round": k}  # fmt: skip
                write_atomic(args.out, json.dumps(best, indent=1) + "\n")
            say(f"round {k + 1}/{args.rounds}: best {best['score']:g} (this round {scores[top]:g}, "
                f"mean {scores.mean():.2f}) {json.dumps(best['keywords'])}")  # fmt: skip
        say(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
