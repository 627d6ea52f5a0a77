"""How the Solenopsis wheels meet a step's edge under the installed MuJoCo: contacts per wheel at the edge.

The climbing teacher (:class:`~dexwheel.tasks.velocity.teacher.ClimbingTeacher`, privileged, no learning) drives
the step benchmark's single-step scenes up; after every physics step each wheel's contacts with the terrain
whose point lies within ``--band`` m of the step's top edge (x = 0, z = h) are counted. MuJoCo 4.0.1 changed
cylinder-edge multi-contact (its changelog: "fixed issues in single-shot multicontact for cylinder edge
collisions"), so this is what a version bump moves for the wheels; docs/changelog.md has both versions'
tables.

    python benchmarks/wheel_edge_contacts.py                  # 0.10 and 0.15 m up, 5 trials each
    python benchmarks/wheel_edge_contacts.py --heights 0.1 0.125 0.15 --trials 10 --json out.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np

import dexwheel  # noqa: F401  (registers the env ids)
from dexwheel.protocols import steps
from dexwheel.rl.step_benchmark import benchmark_env_kwargs, run_step_benchmark
from dexwheel.robots.wheel_leg import LEGS
from dexwheel.tasks.velocity.teacher import gait_policy


class EdgeContactCounter:
    """Called after every ``mj_step``: per wheel, a histogram of how many contacts it has at the edge."""

    def __init__(self, model: mujoco.MjModel, height: float, band: float) -> None:
        self.wheel_of = {mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"{leg}_wheel_col"): leg for leg in LEGS}
        self.height, self.band = height, band
        self.histogram = {leg: Counter() for leg in LEGS}

    def __call__(self, env: int, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        at_edge = Counter()
        for c in data.contact[: data.ncon]:
            leg = self.wheel_of.get(int(c.geom1), self.wheel_of.get(int(c.geom2)))
            x, _, z = c.pos
            if leg is not None and abs(x) < self.band and abs(z - self.height) < self.band:
                at_edge[leg] += 1
        for leg, n in at_edge.items():
            self.histogram[leg][n] += 1


def measure(heights: list[float], trials: int, band: float) -> dict:
    bench = steps.make_cfg({"heights": heights, "directions": ["up"], "trials": trials, "stairs": False})
    counters: dict[float, EdgeContactCounter] = {}

    def make(desc):
        env = gym.make("Solenopsis-Rough-v0", terrain=desc, **benchmark_env_kwargs(bench))
        task = env.unwrapped.task
        height = float(desc.boxes[:, 2].max() + desc.boxes[:, 5].max())  # the raised floor's top
        counters[round(height, 3)] = task.physics.on_substep = EdgeContactCounter(task.models[0], height, band)
        return env

    outcomes = run_step_benchmark(make, gait_policy, bench)["outcomes"]
    result = {"mujoco": mujoco.__version__, "band_m": band, "trials": trials, "heights": {}}
    for h in heights:
        counter = counters[round(h, 3)]
        per_wheel = {}
        for leg, hist in counter.histogram.items():
            touching = sum(hist.values())
            mean = sum(n * k for n, k in hist.items()) / touching if touching else 0.0
            per_wheel[leg] = {"steps_at_edge": touching, "mean_contacts": round(mean, 3),
                              "histogram": {str(n): hist[n] for n in sorted(hist)}}  # fmt: skip
        result["heights"][f"{h:.3f}"] = {"outcomes": outcomes[f"step {h:.3f} up"], "wheels": per_wheel}
    return result


def format_table(result: dict) -> str:
    lines = [f"mujoco {result['mujoco']}: contacts per wheel within {result['band_m']} m of the edge "
             f"(physics steps at the edge; mean contacts there; histogram), the teacher's outcomes",
             "| height (m) | outcomes | wheel | steps at edge | mean contacts | histogram |", "|---|---|---|---|---|---|"]  # fmt: skip
    for h, row in result["heights"].items():
        for leg, w in row["wheels"].items():
            hist = ", ".join(f"{n}: {k}" for n, k in w["histogram"].items()) or "-"
            lines.append(
                f"| {h} | {row['outcomes']} | {leg} | {w['steps_at_edge']} | {w['mean_contacts']:.2f} | {hist} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--heights", type=float, nargs="+", default=[0.10, 0.15])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--band", type=float, default=0.01, help="m around the edge a contact counts within")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()
    result = measure(args.heights, args.trials, args.band)
    print(format_table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
