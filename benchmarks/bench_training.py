"""Benchmark a training run: where its wall time goes, for each algorithm offered (PPO, SAC, rsl_rl PPO).

Run: ``python benchmarks/bench_training.py [--quick] [--robot solenopsis] [--algo rsl_ppo] [overrides ...]``
(Hydra overrides for every algorithm's run, applied last, e.g. ``algo.policy.net_arch=[128,128,128]
train.learner_threads=2``; every algorithm's config is composed and checked before the first run, and an override
that fails, a typo, or one nothing reads is refused in one line, exit 2, as ``scripts/train.py`` refuses it). The
model and vector env are built by ``dexwheel.rl.training`` exactly as ``scripts/train.py`` builds them (the robot's
own config: its num_envs, normalisation, the algorithm's hyper-parameters), with a reduced budget; SAC's
``learning_starts`` is cut so that most of its short run is the steady state of a long one (policy actions and one
update per vector step).
The instance's methods are wrapped with timers (nothing in the library is changed) to split ``model.learn``:

* simulation: ``VecEnv.step`` on the outer env (physics, the native vector env, VecMonitor, VecNormalize);
* policy inference: ``policy.forward`` (PPO) / ``policy.predict`` (SAC) while collecting;
* rollout bookkeeping: the rest of ``collect_rollouts`` (buffers, tensors, callbacks);
* learner update: ``model.train()``; other: whatever the loop spends outside these (logging, callbacks).

rsl_rl PPO runs ``OnPolicyRunner.learn`` for 8 iterations (``--iterations``) of the config's size: simulation is the VecEnv
adapter's ``step``, policy inference ``PPO.act``, learner update ``PPO.update``; storage and returns are "other".
With ``algo.params.overlap=true`` the update runs beside the rollout, so the shares add up to more than 100 %
and "other" goes negative by the time they overlapped.
``--profile-update`` (rsl_ppo) runs one more iteration with its update under ``torch.profiler`` and prints the
operators taking the most of the update's CPU time: where the learner's share goes.

``learn``'s one-time setup (first reset, TensorBoard writer) is printed apart and left out of the shares and of
env-steps/s. Beside the split: **idle**, the core-seconds no thread of this process used (cores x wall minus
the process's CPU time), each core's utilisation over the run (``/proc/stat``), and the **physics-only** time
of the same env steps (the native vector env stepped with random actions, nothing else): the floor a
training loop could reach. One run, printed as seconds and shares (nothing is asserted; shared machines are
noisy: run it alone).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mujoco  # noqa: E402
import stable_baselines3  # noqa: E402
import torch  # noqa: E402
from omegaconf import DictConfig  # noqa: E402

from dexwheel.rl.env_factory import physics_only_s  # noqa: E402
from dexwheel.rl.run_config import Override, check_overrides_read, compose, parse_overrides  # noqa: E402
from dexwheel.rl.sb3 import _new_model, build_vec_env  # noqa: E402
from dexwheel.rl.schema import ConfigError, critic_thread, validate  # noqa: E402

ROBOTS = sorted(p.stem for p in (ROOT / "configs" / "robot").glob("*.yaml"))

# (overrides, budget) per algorithm: full = 2 PPO updates of the config's size (None) / ~9k SAC steps;
# quick = a smoke run
BUDGETS: dict[str, dict[bool, tuple[list[str], int | None]]] = {
    "ppo": {False: ([], None), True: (["algo.params.n_steps=64"], 64 * 32)},
    "sac": {False: (["algo.params.learning_starts=1024"], 9216), True: (["algo.params.learning_starts=256"], 1024)},
    "rsl_ppo": {False: ([], 1), True: (["algo.params.num_steps_per_env=16"], 1)},  # 4 updates of the config's size
}
RSL_ITERATIONS = 8  # --iterations


def timed(obj: Any, attr: str, totals: dict[str, float], key: str) -> None:
    """Replace ``obj.attr`` (on the instance) by a wrapper that adds its wall time to ``totals[key]``."""
    fn: Callable[..., Any] = getattr(obj, attr)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[key] += time.perf_counter() - t0

    setattr(obj, attr, wrapper)


class CpuWindow:
    """This process's CPU time and each core's busy share between :meth:`start` and :meth:`stop`."""

    def start(self) -> None:
        self.t0, self.cpu0, self.cores0 = time.perf_counter(), _process_cpu(), _core_times()

    def stop(self) -> None:
        self.wall = time.perf_counter() - self.t0
        self.cpu = _process_cpu() - self.cpu0
        after = _core_times()
        #: busy share of each core (None where /proc/stat is missing)
        self.per_core = None if after is None or self.cores0 is None else [
            (busy1 - busy0) / max(total1 - total0, 1e-9)
            for (busy0, total0), (busy1, total1) in zip(self.cores0, after, strict=True)
        ]  # fmt: skip


def _process_cpu() -> float:
    t = os.times()
    return t.user + t.system


def _core_times() -> list[tuple[float, float]] | None:
    """``(busy, total)`` jiffies of each core from /proc/stat (Linux), None elsewhere."""
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return None
    out = []
    for line in lines:
        if line.startswith("cpu") and line[3].isdigit():
            values = [float(v) for v in line.split()[1:]]
            idle = values[3] + (values[4] if len(values) > 4 else 0.0)  # idle + iowait
            out.append((sum(values) - idle, sum(values)))
    return out


def bench_rsl(
    cfg: Any, train_cfg: Any, params: Any, policy: Any, iterations: int, profile: bool = False
) -> tuple[dict[str, float], float, float, int, list[str]]:
    """rsl_rl's runner as train.py builds it (:class:`RslLearner`); ``runner.learn`` for a few iterations, then
    (``profile``) one more whose update runs under torch's profiler: the split, its time, its steps, the profile."""
    from dexwheel.rl.rsl import RslLearner

    with tempfile.TemporaryDirectory() as run_dir:
        t0 = time.perf_counter()
        learner = RslLearner(cfg, train_cfg, params, policy, Path(run_dir), None)
        setup = time.perf_counter() - t0
        runner, t = learner.runner, defaultdict(float)
        timed(runner.env, "step", t, "simulation")
        act = type(runner.alg).act  # on the class: with algo.params.overlap a copy of the PPO object acts
        timed(type(runner.alg), "act", t, "policy inference")
        timed(runner.alg, "update", t, "learner update")
        WINDOW.start()
        try:
            runner.learn(iterations)
        finally:
            type(runner.alg).act = act
        WINDOW.stop()
        total = WINDOW.wall
        steps = iterations * learner.batch
        t = defaultdict(float, t)  # the split so far: a profiled iteration stays out of it
        profiled = profile_update(runner) if profile else []
        learner.close()
    t["rollout bookkeeping"] = 0.0  # storage and GAE are inside "other" (rsl_rl's loop is one function)
    return t, total, setup, steps, profiled


WINDOW = CpuWindow()


def profile_update(runner: Any, rows: int = 8) -> list[str]:
    """One more iteration with its PPO update under ``torch.profiler``: the operators taking the most of the
    update's own CPU time (self time, so nothing is counted twice), as shares of it."""
    update = runner.alg.update
    try:  # every thread's operators: the critic's half of the update runs on a thread of its own (critic_thread)
        every_thread = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
    except TypeError:  # an older torch profiles the calling thread only
        every_thread = None
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], experimental_config=every_thread)

    def profiled(*args: Any, **kwargs: Any) -> Any:
        with prof:
            return update(*args, **kwargs)

    runner.alg.update = profiled
    try:
        runner.learn(1)
    finally:
        runner.alg.update = update
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events)
    lines = [f"  one more update under torch.profiler: {total / 1e3:.0f} ms of CPU time, by operator (self time):"]
    return lines + [
        f"    {e.key:<34} {100 * e.self_cpu_time_total / total:5.1f} %  ({e.count} calls)" for e in events[:rows]
    ]


def checked_config(robot: str, algo: str, quick: bool, user: list[str]) -> DictConfig:
    """``algo``'s run config as ``scripts/train.py`` composes and checks it, with the benchmark's budget and the
    user's overrides last; a ConfigError names what is wrong (a Hydra composition error, a bad value, a key
    nothing reads, or a ``robot=`` / ``algo=`` that would override ``--robot`` / ``--algo``)."""
    extra, budget = BUDGETS[algo][quick]
    typed: list[Override] = []
    for line in user:  # one at a time, so that a parse error names its override
        try:
            typed += parse_overrides([line])
        except Exception as e:  # noqa: BLE001 - Hydra's parse errors, as one line
            raise ConfigError(f"{line}: {e}") from None
    for o in typed:
        if o.group and o.root in ("robot", "algo"):
            raise ConfigError(f"{o.line}: choose the {o.root} with --{o.root}")
    cfg = compose("train", [f"robot={robot}", f"algo={algo}", f"train.total_timesteps={budget or 1}",
                            "train.progress_bar=false", *extra, *user])  # fmt: skip
    validate(cfg)
    chosen = parse_overrides([f"robot={robot}", f"algo={algo}"])  # what a key is checked against
    check_overrides_read("train", cfg, [*chosen, *typed], open_roots=("train", "algo"))
    return cfg


def bench(cfg: DictConfig, quick: bool, iterations: int = RSL_ITERATIONS, profile: bool = False) -> None:
    """One algorithm's run of ``cfg`` (:func:`checked_config`), its time split printed."""
    train_cfg, algo, params, policy = validate(cfg)
    budget = BUDGETS[algo][quick][1] or 2 * params.n_steps * train_cfg.num_envs
    threads = f"learner_threads {train_cfg.learner_threads}"
    if algo == "rsl_ppo":
        threads += f", critic thread {'on' if critic_thread(train_cfg, params.overlap) else 'off'}"
    print(f"{algo}: net_arch {list(policy.net_arch)}, {threads}")
    torch.set_num_threads(train_cfg.torch_threads)  # as training.train() does
    if algo == "rsl_ppo":
        t, total, setup, steps, profiled = bench_rsl(cfg, train_cfg, params, policy, iterations, profile)
        report(algo, t, total, setup, steps, train_cfg.num_envs, physics_only_s(cfg, train_cfg.num_envs, steps))
        print("\n".join(profiled))
        return
    with tempfile.TemporaryDirectory() as run_dir:
        venv = build_vec_env(cfg, train_cfg, cfg.seed)
        model = _new_model(cfg, algo, params, policy, venv, train_cfg, Path(run_dir))
        t: dict[str, float] = defaultdict(float)
        timed(model.env, "step", t, "simulation")
        timed(model.policy, "forward" if algo == "ppo" else "predict", t, "policy inference")
        timed(model, "collect_rollouts", t, "collect")
        timed(model, "train", t, "learner update")
        timed(model, "_setup_learn", t, "setup")
        WINDOW.start()
        model.learn(budget, progress_bar=False)
        WINDOW.stop()
        total = WINDOW.wall
        steps = model.num_timesteps
        venv.close()
    setup = t.pop("setup")
    total -= setup  # the loop's own time
    t["rollout bookkeeping"] = t.pop("collect") - t["simulation"] - t["policy inference"]
    report(algo, t, total, setup, steps, train_cfg.num_envs, physics_only_s(cfg, train_cfg.num_envs, steps))


def report(algo: str, t: dict[str, float], total: float, setup: float, steps: int, num_envs: int,
           physics_s: float) -> None:  # fmt: skip
    t["other"] = total - sum(t.values())
    print(
        f"{algo}: {steps} env steps, num_envs {num_envs}, {total:6.2f} s (+ setup {setup:4.2f} s), "
        f"{steps / total:6.0f} env-steps/s"
    )
    for key in ("simulation", "policy inference", "rollout bookkeeping", "learner update", "other"):
        print(f"  {key:<20} {t[key]:7.2f} s  {100 * t[key] / total:5.1f} %")
    cores = os.cpu_count() or 1
    idle = max(0.0, cores * WINDOW.wall - WINDOW.cpu)
    print(f"  {'idle (core-s)':<20} {idle:7.2f} s  {100 * idle / (cores * WINDOW.wall):5.1f} % of {cores} cores x wall")
    if WINDOW.per_core is not None:
        print("  core utilisation     " + " ".join(f"cpu{i} {100 * u:3.0f} %" for i, u in enumerate(WINDOW.per_core)))
    print(f"  physics only         {physics_s:7.2f} s  ({steps / physics_s:6.0f} env-steps/s: the native vector env "
          f"stepped alone; training takes {total / physics_s:4.1f}x)")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: a few thousand steps")
    parser.add_argument(
        "--robot", default="solenopsis", choices=ROBOTS, help="a configs/robot/ name (default: solenopsis)"
    )
    parser.add_argument("--algo", choices=list(BUDGETS), action="append", help="default: every algorithm")
    parser.add_argument(
        "--iterations",
        type=int,
        default=RSL_ITERATIONS,
        help=f"rsl_ppo's iterations (default {RSL_ITERATIONS}; more to amortise a torch.compile)",
    )
    parser.add_argument(
        "--profile-update", action="store_true", help="rsl_ppo: one more iteration, its update's operators by CPU time"
    )
    parser.add_argument("overrides", nargs="*", help="Hydra overrides for the runs")
    args = parser.parse_args(argv)
    if args.iterations < 1:
        print(f"error: --iterations: must be >= 1, got {args.iterations}", file=sys.stderr)
        return 2
    cfgs = []
    for algo in args.algo or list(BUDGETS):  # every algorithm's config before the first run
        try:
            cfgs.append(checked_config(args.robot, algo, args.quick, args.overrides))
        except ConfigError as e:  # one line (a schema error has several), naming the algorithm it failed for
            print(f"error: {' '.join(str(e).split())} (algo={algo})", file=sys.stderr)
            return 2
    print(
        f"training time split ({args.robot}): {os.cpu_count()} CPUs, torch {torch.__version__}, "
        f"stable-baselines3 {stable_baselines3.__version__}, rsl-rl-lib {version('rsl-rl-lib')}, mujoco {mujoco.__version__}"
    )
    for cfg in cfgs:
        bench(cfg, args.quick, args.iterations, args.profile_update)
    return 0


if __name__ == "__main__":
    sys.exit(main())
