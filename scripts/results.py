"""Reproduce a results table (docs/results.md): train seeds 0, 1, 2 of a robot's default run, evaluate each on two
disjoint evaluation sets, print one row per run and the spread.

python scripts/results.py robot=solenopsis                 # outputs/results/solenopsis/seed<s>/, ~5-10 min a seed
python scripts/results.py robot=g20_left drive=pd          # the hand on unseen (random) goals
python scripts/results.py robot=solenopsis seeds=[0] sets=[20000]   # fewer
python scripts/results.py robot=solenopsis stress=false             # without the hard-reversal stress test
python scripts/results.py robot=solenopsis physics_steps=524288     # a longer physics timing (default 131072)

The wall time of each row is the training command's own (``command_s`` in its ``train.log``: from the
process's start, imports and setup included, to the final evaluation's end), and that time over the physics
alone of the same steps (the native vector env with random actions): the wall time depends on the machine, the
ratio states it against that machine's own physics. The physics is timed as results.py starts and after each
training, and a run is stated against the mean of the timings just before and just after it, so a machine
that slows down during the runs moves the baseline with them (a run trained earlier is stated against the mean
of them all).

A wheel-leg run is also evaluated on the hard-reversal stress test (:data:`STRESS`): 50 episodes whose commands
drive at 0.8-1.0 m/s and reverse the direction at every resample (every 5 s), the manoeuvre that tips a policy
over; its row counts falls, and its errors stay out of the spread (they are a harder task's).

Any other override goes to train.py; every argument is checked (train.py's by composing its config) before
anything starts, and ``-h``/``--help`` prints this. ``out=`` is relative to the folder results.py is started in.
A seed whose run folder already holds ``checkpoints/final`` is not trained again (delete the folder to retrain)
when its ``config.yaml`` agrees with the config these arguments compose today (every argument typed and every
default); one that differs is refused before anything starts, naming the keys and the folder (choose a new
``out=``): a run trained before a default moved is not today's run. Evaluations are rewritten (``overwrite=true``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

from omegaconf import DictConfig

ROOT = Path(__file__).resolve().parents[1]
METRICS = {"velocity": ("lin_vel_x_error", "ang_vel_z_error", "fall"),
           "hand_pose": ("mean_joint_error", "max_joint_error", "success")}  # fmt: skip
EPISODES = 10  # per evaluation set
STRESS_SEED, STRESS_EPISODES = 50000, 50
PHYSICS_STEPS = "131072"  # env steps timed for the physics-only baseline (about 5-10 s on 2 cores)
STRESS = "env_overrides={commands: {lin_vel_x: [0.8, 1.0], rel_reversal: 1.0, rel_standing_envs: 0.0}}"


def _arg(args: list[str], key: str, default: str) -> str:
    found = [a.split("=", 1)[1] for a in args if a.startswith(f"{key}=")]
    return found[-1] if found else default


def _list(text: str) -> list[int]:
    return [int(x) for x in text.strip("[]").split(",") if x.strip()]


def command_wall_s(train_log: str) -> float:
    """The training command's wall time in seconds, from the last ``done`` line of its ``train.log``:
    ``command_s`` (its launch included), or ``wall_s`` (from the start line) in runs logged before
    ``command_s`` existed; NaN when the run never finished."""
    done = re.findall(r" - done step=\d+ wall_s=([\d.]+)(?: command_s=([\d.]+))?", train_log)
    return float(done[-1][1] or done[-1][0]) if done else float("nan")


def run(cmd: list[str]) -> str:
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return done.stdout


OWN = ("seeds", "sets", "out", "stress", "physics_steps")


def refuse(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def check(args: list[str]) -> tuple[list[str], DictConfig]:
    """The arguments for train.py and the config they compose, once all of them have been checked: nothing
    starts on a typo."""
    if any(a in ("-h", "--help") for a in args):
        print(__doc__)
        raise SystemExit(0)
    for a in args:
        if a.startswith("-") or "=" not in a:
            refuse(f"{a}: not an argument of results.py (key=value overrides; --help shows them)")
    for key in ("seeds", "sets"):
        try:
            if not _list(_arg(args, key, "[0]")):
                refuse(f"{key}: an empty list")
        except ValueError:
            refuse(f"{key}={_arg(args, key, '')}: expected a list of integers such as [0,1,2]")
    if _arg(args, "stress", "true").lower() not in ("true", "false"):
        refuse(f"stress={_arg(args, 'stress', '')}: expected true or false")
    physics_steps = _arg(args, "physics_steps", PHYSICS_STEPS)
    if not physics_steps.isdigit() or int(physics_steps) < 1:
        refuse(f"physics_steps={physics_steps}: expected a positive integer (env steps)")
    train_args = [a for a in args if a.split("=", 1)[0] not in OWN]
    for a in train_args:
        if a.split("=", 1)[0].lstrip("+~") in ("seed", "hydra.run.dir"):
            refuse(f"{a}: results.py sets it for each run (seeds=[...], out=...)")
    sys.path.insert(0, str(ROOT))
    from dexwheel.rl.run_config import compose
    from dexwheel.rl.schema import ConfigError

    try:
        cfg = compose("train", train_args)
    except ConfigError as e:  # it names the override (a typo with the nearest valid name)
        refuse(str(e))
    return train_args, cfg


def seed_overrides(train_args: list[str], seed: int) -> list[str]:
    """train.py's overrides for a seed's run (its folder aside)."""
    return [*train_args, f"seed={seed}", "train.progress_bar=false"]


def trained(run_dir: Path) -> bool:
    return bool(list((run_dir / "checkpoints").glob("final.*")))


def check_reused(run_dir: Path, train_args: list[str], seed: int) -> None:
    """A finished run in ``run_dir`` is reused only when it was trained as typed, today's defaults included: else
    refused, naming what differs."""
    from dexwheel.rl.checkpoints import CheckpointError
    from dexwheel.rl.run_config import compose, differences, load_run_config
    from dexwheel.rl.schema import ConfigError

    typed = seed_overrides(train_args, seed)
    try:
        diffs = differences(load_run_config(run_dir, "out")[0], compose("train", typed), typed)
    except (ConfigError, CheckpointError) as e:
        refuse(str(e))
    if diffs:
        shown = "; ".join(diffs[:6]) + (f"; and {len(diffs) - 6} more" if len(diffs) > 6 else "")
        refuse(f"out: {run_dir} holds a run trained otherwise than typed or today's defaults ({shown}); choose a "
               f"new out= (or delete the folder to retrain)")  # fmt: skip


def main() -> None:
    args = sys.argv[1:]
    train_args, cfg = check(args)
    robot = _arg(args, "robot", "solenopsis")
    seeds, sets = _list(_arg(args, "seeds", "[0,1,2]")), _list(_arg(args, "sets", "[20000,30000]"))
    # the caller's folder, as for train.py and evaluate.py typed there (results.py runs them from the repository)
    out = Path(_arg(args, "out", f"outputs/results/{robot}")).absolute()
    for seed in seeds:  # before anything runs
        if trained(out / f"seed{seed}"):
            check_reused(out / f"seed{seed}", train_args, seed)
    budget = int(cfg.train.total_timesteps)
    timed = cfg.backend.name == "mujoco"  # the baseline is MuJoCo's native vector env
    sample = int(_arg(args, "physics_steps", PHYSICS_STEPS))
    floors = [physics_floor_s(cfg, budget, sample)] if timed else []  # before any training, as the runs find it
    hand = robot.startswith("g20")
    task = "hand_pose" if hand else "velocity"
    goals = ["env_overrides={goal_mode: random}"] if hand else []  # unseen goals only
    evaluations = [(str(s), s, EPISODES, goals) for s in sets]  # (label, eval seed, episodes, extra arguments)
    if not hand and _arg(args, "stress", "true").lower() == "true":
        evaluations.append(("reversals", STRESS_SEED, STRESS_EPISODES, [STRESS]))
    rows, run_floors = [], {}
    for seed in seeds:
        run_dir = out / f"seed{seed}"
        if not trained(run_dir):
            print(f"training seed {seed} -> {run_dir}", flush=True)
            run([sys.executable, "scripts/train.py", *seed_overrides(train_args, seed), f"hydra.run.dir={run_dir}"])
            if timed:
                floors.append(physics_floor_s(cfg, budget, sample))
                run_floors[seed] = (floors[-2] + floors[-1]) / 2
        wall = command_wall_s((run_dir / "train.log").read_text())
        for label, eval_seed, episodes, extra in evaluations:
            out_json = run_dir / "eval" / f"results_{label}.json"
            run([sys.executable, "scripts/evaluate.py", f"run={run_dir}", "checkpoint=final", f"eval_seed={eval_seed}",
                 f"episodes={episodes}", "overwrite=true", f"out={out_json}", *extra])  # fmt: skip
            result = json.loads(out_json.read_text())["results"][robot]
            rows.append((seed, label, episodes, wall, result))
    keys = METRICS[task]
    floor = sum(floors) / len(floors) if floors else None
    print(f"| seed | eval_seed | wall (min{', x physics' if floor else ''}) | {' | '.join(keys)} |")
    print("|---" * (3 + len(keys)) + "|")
    for seed, label, episodes, wall, r in rows:
        cells = [f"{round(r[k] * episodes)}/{episodes}" if k in ("fall", "success") else f"{r[k]:.3f}" for k in keys]
        ratio = f", {wall / run_floors.get(seed, floor):.1f}x" if floor else ""
        print(f"| {seed} | {label} | {wall / 60:.1f} ({wall:.0f} s{ratio}) | {' | '.join(cells)} |")
    for k in keys:
        values = [r[k] for _, label, *_, r in rows if label != "reversals"]
        print(f"{k}: min {min(values):.3f} max {max(values):.3f} mean {sum(values) / len(values):.3f}")
    stress = [(r["fall"] * episodes, episodes) for _, label, episodes, _, r in rows if label == "reversals"]
    if stress:
        print(f"reversal stress falls: {round(sum(f for f, _ in stress))}/{sum(n for _, n in stress)}")
    if floor:
        rates = ", ".join(f"{budget / f:.0f}" for f in floors)
        print(
            f"physics only: {budget} env steps in {floor:.0f} s ({budget / floor:.0f} env-steps/s on average, the native "
            f"vector env alone at {cfg.train.num_envs} envs, random actions; timed on {sample} steps as "
            f"results.py started and after each training: {rates} env-steps/s)"
        )


def physics_floor_s(cfg: DictConfig, steps: int, sample: int) -> float:
    """Seconds the physics alone takes for ``steps`` env steps on this machine, timed on ``sample`` of them: the
    baseline a run's wall time is stated against, as the benchmarks state theirs."""
    from dexwheel.rl.env_factory import physics_only_s

    return physics_only_s(cfg, int(cfg.train.num_envs), sample) * steps / sample


if __name__ == "__main__":
    main()
