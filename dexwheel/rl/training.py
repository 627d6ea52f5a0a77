"""Training with stable-baselines3 (PPO, SAC) or rsl_rl (PPO): vector envs, normalisation, periodic
evaluation, atomic checkpoints, the same run folder for every learner.

The Hydra entry point is ``scripts/train.py``; this module holds everything it does so tests can
call it with a composed config.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf

from dexwheel.atomic import write_atomic
from dexwheel.rl.checkpoints import CHECKPOINT_DIR, check_checkpoint, latest_checkpoint
from dexwheel.rl.curves import plot_learning_curve
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.evaluation import EvalResult, Policy, run_episodes
from dexwheel.rl.schema import ConfigError, TrainCfg, validate

RSL_ALGOS = ("rsl_ppo",)  # rsl_rl's runner (dexwheel.rl.rsl); the others are stable-baselines3's (dexwheel.rl.sb3)
CONFIG_FILE = "config.yaml"
HISTORY_FILE = "eval_history.json"
CURVE_FILE = "learning_curve.png"
FINAL_EVAL_FILE = "final_eval.json"
#: ``episodes(policy, n_episodes=, seed=)``: a backend's evaluation episodes
Episodes = Callable[..., EvalResult]
#: progress lines; under ``scripts/train.py`` Hydra's job logging sends them to ``<run>/train.log`` and stdout
log = logging.getLogger("dexwheel.train")


def _fields(summary: dict[str, float]) -> str:
    return " ".join(f"{k}={v:.4g}" for k, v in summary.items() if k != "timesteps")


@contextlib.contextmanager
def _not_on_console(active: bool):
    """While the progress bar draws on the terminal, progress lines go to the log files only: a line
    written straight to stdout under the bar garbles it."""
    console = [h for h in logging.getLogger().handlers if type(h) is logging.StreamHandler] if active else []

    def keep(record: logging.LogRecord) -> bool:
        return record.name != log.name

    for handler in console:
        handler.addFilter(keep)
    try:
        yield
    finally:
        for handler in console:
            handler.removeFilter(keep)


class Evaluator:
    """Deterministic episodes on a separate env every ``eval_every_steps``: the history, the learning curve,
    one progress line per evaluation; says whether the policy is the best so far (highest mean return)."""

    def __init__(self, cfg: DictConfig, train: TrainCfg, run_dir: Path, episodes: Episodes | None = None):
        """``episodes(policy, n, seed)`` runs the evaluation episodes; by default on a single MuJoCo env."""
        self.cfg, self.train, self.run_dir = cfg, train, run_dir
        self.task = cfg.task.name
        if episodes is None:
            self.env = make_env(cfg)
            episodes = partial(run_episodes, self.env, task=self.task)
        else:
            self.env = None
        self.episodes = episodes
        self.active = True
        self.history: list[dict[str, float]] = _load_history(run_dir)
        self.last = 0
        self.t0, self.first = time.monotonic(), 0  # this process's start: a resumed run's rate counts its own steps

    def start(self, steps: int) -> None:
        self.last = self.first = steps
        self.t0 = time.monotonic()

    def due(self, steps: int) -> bool:
        return steps - self.last >= self.train.eval_every_steps

    def evaluate(self, act: Policy, steps: int) -> tuple[dict[str, float], bool]:
        self.last = steps
        if not self.active:  # another process of a distributed run evaluates
            return {}, False
        summary = self.episodes(act, n_episodes=self.train.eval_episodes, seed=self.train.eval_seed).summary()
        summary["timesteps"] = float(steps)
        elapsed = time.monotonic() - self.t0
        rate = (steps - self.first) / max(elapsed, 1e-9)
        log.info(f"eval step={steps} env_steps_per_s={rate:.0f} elapsed_s={elapsed:.1f} {_fields(summary)}")
        best = all(summary["return"] > h["return"] for h in self.history)
        self.history.append(summary)
        write_atomic(self.run_dir / HISTORY_FILE, json.dumps(self.history, indent=1))
        self.plot()
        return summary, best

    def plot(self) -> None:
        steps = [int(h["timesteps"]) for h in self.history]
        keys = ["return", *[k for k in self.history[-1] if k not in ("return", "timesteps", "episodes", "length")]]
        series = {k: [h[k] for h in self.history] for k in keys}
        title = f"{self.cfg.robot.name} / {self.cfg.algo.name} / seed {self.cfg.seed}"
        plot_learning_curve(self.run_dir / CURVE_FILE, steps, series, title)

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


def _load_history(run_dir: Path) -> list[dict[str, float]]:
    path = run_dir / HISTORY_FILE
    return json.loads(path.read_text()) if path.exists() else []


# What defines the env, its spaces and the model's meaning: a resumed run must keep these as saved.
# The training budget (train.*, task.train.*) may change; so may vectorization, device and threads.
RESUME_FIXED = ("robot", "task", "drive", "action", "composer", "collision", "backend", "algo", "seed",
                "train.normalize_obs")  # fmt: skip
RESUME_FREE = ("task.train",)


def _flat(node: Any, prefix: str) -> dict[str, Any]:
    if isinstance(node, dict) and node:
        return {k: v for key, sub in node.items() for k, v in _flat(sub, f"{prefix}.{key}").items()}
    return {prefix: node}


def _selected(cfg: dict[str, Any], key: str) -> Any:
    node: Any = cfg
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def resume_differences(saved: dict[str, Any], requested: dict[str, Any]) -> list[str]:
    """``key: run has X, requested Y`` for each env-defining difference (a whole group when its name differs)."""
    out: list[str] = []
    for key in RESUME_FIXED:
        old, new = _selected(saved, key), _selected(requested, key)
        if isinstance(old, dict) and isinstance(new, dict) and old.get("name") != new.get("name"):
            out.append(f"{key}: run has {old.get('name')}, requested {new.get('name')}")
            continue
        a, b = _flat(old, key), _flat(new, key)
        for leaf in sorted(a.keys() | b.keys()):
            was, now = a.get(leaf, "<unset>"), b.get(leaf, "<unset>")
            if was != now and not leaf.startswith(tuple(f"{free}." for free in RESUME_FREE)):
                out.append(f"{leaf}: run has {was}, requested {now}")
    return out


def check_resume_config(cfg: DictConfig, run_dir: Path) -> None:
    """Refuse (naming what differs) a resume whose config would change the run's env or model."""
    path = run_dir / CONFIG_FILE
    if not path.exists():
        raise ConfigError(f"train.resume={run_dir}: no {CONFIG_FILE} there; is it a training run folder?")
    saved = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    requested = OmegaConf.to_container(cfg, resolve=True)
    diffs = resume_differences(saved, requested)  # type: ignore[arg-type]
    if diffs:
        shown = "; ".join(diffs[:6]) + (f"; and {len(diffs) - 6} more" if len(diffs) > 6 else "")
        raise ConfigError(
            f"train.resume={run_dir}: the requested config does not match the run's {path} ({shown}); "
            f"resume with the run's settings (only the training budget may change)"
        )


def _rsl_learn(learner: Any, total: int, evaluator: Evaluator, train: TrainCfg, bar: bool) -> None:
    """rsl_rl's loop runs in chunks up to the next checkpoint or evaluation (SB3's runs them in callbacks)."""
    last = [learner.num_timesteps]

    def due(steps: int) -> int:
        return min(last[0] + train.checkpoint_every_steps, evaluator.last + train.eval_every_steps) - steps

    def on_chunk() -> None:
        steps = learner.num_timesteps
        if steps - last[0] >= train.checkpoint_every_steps:
            learner.save_step(train.keep_checkpoints)
            last[0] = steps
        if evaluator.due(steps) and evaluator.evaluate(learner.policy(), steps)[1]:  # [1]: the best so far
            learner.save("best")

    learner.learn(total, due, on_chunk, bar)


def make_learner(cfg: DictConfig, train: TrainCfg, name: str, params: DictConfig, policy: DictConfig, run_dir: Path,
                 checkpoint: Path | None) -> Any:  # fmt: skip
    """The run's learner; each library loads only for its own runs."""
    if name in RSL_ALGOS:
        from dexwheel.rl.rsl import RslLearner

        return RslLearner(cfg, train, params, policy, run_dir, checkpoint)
    from dexwheel.rl.sb3 import Sb3Learner

    return Sb3Learner(cfg, train, name, params, policy, run_dir, checkpoint)


def train(cfg: DictConfig, run_dir: Path) -> dict[str, Any]:
    """Train as the config says, writing everything into ``run_dir``; returns the final evaluation.

    ``backend=isaaclab`` runs the training itself in the Isaac Lab venv (:mod:`dexwheel.rl.isaaclab_launch`)
    once everything here has been checked.
    """
    train_cfg, name, params, policy = validate(cfg)
    make_env(cfg).close()  # env kwargs are checked (and named) before anything else runs
    run_dir = Path(train_cfg.resume) if train_cfg.resume else Path(run_dir)
    checkpoint = latest_checkpoint(run_dir) if train_cfg.resume else None
    if checkpoint is not None:  # a missing, corrupted or incompatible run fails before anything in it is written
        check_checkpoint(checkpoint)
        check_resume_config(cfg, run_dir)
    if cfg.backend.name == "isaaclab":
        from dexwheel.rl.isaaclab_launch import train_on_isaaclab

        return train_on_isaaclab(cfg, name, run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    learner = make_learner(cfg, train_cfg, name, params, policy, run_dir, checkpoint)
    return run_training(cfg, train_cfg, learner, Evaluator(cfg, train_cfg, run_dir), run_dir)


def run_training(cfg: DictConfig, train_cfg: TrainCfg, learner: Any, evaluator: Evaluator, run_dir: Path) -> dict:
    """The run itself, whatever the learner and the backend: progress lines, periodic evaluations and
    checkpoints, Ctrl-C saving a checkpoint, the final checkpoint and evaluation."""
    name = cfg.algo.name
    main = getattr(learner, "is_main", True)  # a distributed run's other processes only learn
    evaluator.active = main
    if not main:
        log.disabled = True
    torch.set_num_threads(train_cfg.torch_threads)
    if main:
        write_atomic(run_dir / CONFIG_FILE, OmegaConf.to_yaml(cfg, resolve=True))  # once the model is built
    evaluator.start(learner.num_timesteps)
    bar = train_cfg.progress_bar and sys.stdout.isatty()  # off a terminal, the log lines show progress
    log.info(
        f"start robot={cfg.robot.name} algo={name} seed={cfg.seed} total_timesteps={train_cfg.total_timesteps} "
        f"from_step={learner.num_timesteps} num_envs={train_cfg.num_envs} backend={cfg.backend.name} run={run_dir}"
    )
    interrupted = False
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C raises KeyboardInterrupt here
    try:
        with _not_on_console(bar):
            if name in RSL_ALGOS:
                _rsl_learn(learner, train_cfg.total_timesteps, evaluator, train_cfg, bar)
            else:
                learner.learn(train_cfg.total_timesteps, evaluator, bool(train_cfg.resume), bar)
    except KeyboardInterrupt:
        interrupted = True
        path = learner.save_step(train_cfg.keep_checkpoints)
        print(f"\ninterrupted: saved {path}; resume with train.resume={run_dir}")
        log.info(f"interrupted at step={learner.num_timesteps}: saved {path}")
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted:
        evaluator.close()
        learner.close()
        raise SystemExit(130)
    learner.save("final")
    summary, best = evaluator.evaluate(learner.policy(), learner.num_timesteps)
    if best:
        learner.save("best")
    evaluator.close()  # only now: the final evaluation runs on it, and a closed env refuses to step
    if main:
        write_atomic(run_dir / FINAL_EVAL_FILE, json.dumps(summary, indent=1))
    learner.close()
    log.info(
        f"done step={learner.num_timesteps} wall_s={time.monotonic() - evaluator.t0:.1f} {_fields(summary)} "
        f"checkpoints={run_dir / CHECKPOINT_DIR}"
    )
    return summary
