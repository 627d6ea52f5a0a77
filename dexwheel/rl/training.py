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
from dexwheel.cli import script_command, shown_path
from dexwheel.rl.checkpoints import CHECKPOINT_DIR, CheckpointError, check_checkpoint, latest_checkpoint, saved_step
from dexwheel.rl.curves import plot_learning_curve
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.evaluation import EvalResult, Policy, run_episodes
from dexwheel.rl.progress import log, run_log
from dexwheel.rl.run_config import (
    CONFIG_FILE,
    check_overrides_read,
    flat,
    load_run_config,
    parse_overrides,
    selections,
    set_value,
    value_of,
)
from dexwheel.rl.schema import RSL_ALGOS, ConfigError, TrainCfg, validate

HISTORY_FILE = "eval_history.json"
CURVE_FILE = "learning_curve.png"
FINAL_EVAL_FILE = "final_eval.json"
#: ``episodes(policy, n_episodes=, seed=)``: a backend's evaluation episodes
Episodes = Callable[..., EvalResult]


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
    """A resumed run's evaluations so far (its learning curve continues them); a damaged file is refused."""
    path = run_dir / HISTORY_FILE
    if not path.exists():
        return []
    try:
        history = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path} cannot be read as the run's evaluations ({e}); restore it from a copy") from e
    if not (isinstance(history, list) and all(isinstance(h, dict) and "timesteps" in h for h in history)):
        raise CheckpointError(f"{path} is not a list of evaluations (each with its timesteps); restore it from a copy")
    return history


# What defines the env, its spaces and the model's meaning: a resumed run must keep these as saved.
# The training budget (train.*, task.train.*) may change; so may vectorization, device and threads.
RESUME_FIXED = ("robot", "task", "drive", "action", "composer", "collision", "backend", "algo", "seed",
                "train.normalize_obs")  # fmt: skip
RESUME_FREE = ("task.train",)


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
        a, b = flat(old, key), flat(new, key)
        for leaf in sorted(a.keys() | b.keys()):
            was, now = a.get(leaf, "<unset>"), b.get(leaf, "<unset>")
            if was != now and not leaf.startswith(tuple(f"{free}." for free in RESUME_FREE)):
                out.append(f"{leaf}: run has {was}, requested {now}")
    return out


def _refuse(run_dir: Path, diffs: list[str]) -> None:
    if diffs:
        shown = "; ".join(diffs[:6]) + (f"; and {len(diffs) - 6} more" if len(diffs) > 6 else "")
        raise ConfigError(
            f"train.resume={run_dir}: the requested config does not match the run's {Path(run_dir) / CONFIG_FILE} "
            f"({shown}); resume with the run's settings (only the training budget may change)"
        )


def check_resume_config(cfg: DictConfig, run_dir: Path) -> list[str]:
    """Refuse (naming what differs) a composed config that would change the run's env or model; returns the
    warnings about keys the run's config lacked."""
    saved, notes = load_run_config(run_dir, "train.resume")
    requested = OmegaConf.to_container(cfg, resolve=True)
    _refuse(run_dir, resume_differences(OmegaConf.to_container(saved), requested))  # type: ignore[arg-type]
    return notes


def resume_config(cfg: DictConfig, run_dir: Path, overrides: list[str]) -> tuple[DictConfig, list[str]]:
    """The run's own config with the overrides the user typed applied (``cfg``: Hydra's composition of them);
    one that would change the run's env or model is refused naming the field. Returns the config and the
    warnings about keys the run's config lacked."""
    saved, notes = load_run_config(run_dir, "train.resume")
    plain = OmegaConf.to_container(saved)
    merged = OmegaConf.create(plain)
    parsed = [o for o in parse_overrides(overrides) if not o.hydra]
    for o in parsed:
        if o.delete:
            raise ConfigError(f"{o.line}: a resume cannot delete a key of the run's {run_dir / CONFIG_FILE}")
        if o.group:
            if selections(plain, (o.key,)) != selections({o.key: value_of(cfg, o.key)}, (o.key,)):
                set_value(merged, o.key, value_of(cfg, o.key))  # another option: named as a difference below
        else:
            set_value(merged, o.key, value_of(cfg, o.key))
    typed = {o.key for o in parsed}
    # train.total_timesteps: ${task.train.total_timesteps} follows a typed task.train.*; so does the algorithm's
    # rollout length (${task.train.steps_per_env}), which the comparison below then refuses as a change of algo
    for where in ("train", "algo.params"):
        node = OmegaConf.select(cfg, where)
        for key in node:
            if OmegaConf.is_interpolation(node, key):
                source = str(node._get_node(key)._value()).strip("${}")  # type: ignore[union-attr]
                if source in typed and f"{where}.{key}" not in typed:
                    set_value(merged, f"{where}.{key}", value_of(cfg, f"{where}.{key}"))
    _refuse(run_dir, resume_differences(plain, OmegaConf.to_container(merged, resolve=True)))  # type: ignore[arg-type]
    return merged, notes


def check_budget(checkpoint: Path, total: int) -> None:
    """A resume continues a run to a larger budget: one at or below the steps its checkpoint holds is refused
    (the run's config would record a budget its model has passed, and its final files be rewritten for nothing)."""
    done = saved_step(checkpoint)
    if done is not None and total <= done:
        raise ConfigError(f"train.total_timesteps={total}: the run is at step {done} already ({checkpoint}); a "
                          f"resume continues it to a larger budget: give train.total_timesteps > {done}")  # fmt: skip


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


def train(cfg: DictConfig, run_dir: Path, overrides: list[str] | None = None,
          launched: float | None = None) -> dict[str, Any]:  # fmt: skip
    """Train as the config says, writing everything into ``run_dir``; returns the final evaluation.

    With ``train.resume=<run>`` the run continues in its own folder. ``overrides`` (what the user typed,
    as ``scripts/train.py`` passes them) are then applied to the run's own config (:func:`resume_config`);
    without them, ``cfg`` itself must match the run's config (:func:`check_resume_config`).
    ``backend=isaaclab`` runs the training itself in the Isaac Lab venv (:mod:`dexwheel.rl.isaaclab_launch`)
    once everything here has been checked. ``launched`` (``time.monotonic()`` at the command's start) adds
    ``launch_s`` and ``command_s`` to the log lines: the wall time the command took, its launch included.
    """
    checkpoint, notes = None, []
    if cfg.train.resume:  # a missing, corrupted or incompatible run fails before anything in it is written
        run_dir = Path(cfg.train.resume)
        checkpoint = latest_checkpoint(run_dir)
        check_checkpoint(checkpoint)
        if overrides is None:
            notes = check_resume_config(cfg, run_dir)
        else:
            cfg, notes = resume_config(cfg, run_dir, overrides)
    elif (Path(run_dir) / CONFIG_FILE).exists():  # a fresh run never writes over another's files
        raise ConfigError(f"hydra.run.dir={run_dir}: the folder holds a run already ({CONFIG_FILE}); continue it "
                          f"with train.resume={run_dir} or choose another folder")  # fmt: skip
    train_cfg, name, params, policy = validate(cfg)
    if overrides is not None:
        check_overrides_read("train", cfg, parse_overrides(overrides), open_roots=("train", "algo"))
    if checkpoint is not None:
        check_budget(checkpoint, train_cfg.total_timesteps)
    isaaclab = cfg.backend.name == "isaaclab"
    if isaaclab:
        from dexwheel.rl.isaaclab_launch import check_training, train_on_isaaclab

        check_training(cfg, train_cfg, name, overrides)
    make_env(cfg).close()  # env kwargs are checked (and named) before anything else runs
    run_dir = Path(run_dir)
    if isaaclab:
        return train_on_isaaclab(cfg, run_dir, notes, launched)
    run_dir.mkdir(parents=True, exist_ok=True)
    learner = make_learner(cfg, train_cfg, name, params, policy, run_dir, checkpoint)
    return run_training(cfg, train_cfg, learner, Evaluator(cfg, train_cfg, run_dir), run_dir, notes, launched)


def run_training(cfg: DictConfig, train_cfg: TrainCfg, learner: Any, evaluator: Evaluator, run_dir: Path,
                 notes: list[str] = (), launched: float | None = None) -> dict:  # fmt: skip
    """The run itself, whatever the learner and the backend: progress lines (to the run's ``train.log``),
    periodic evaluations and checkpoints, Ctrl-C saving a checkpoint, the final checkpoint and evaluation."""
    main = getattr(learner, "is_main", True)  # a distributed run's other processes only learn
    with run_log(run_dir, active=main):
        for line in notes:
            log.warning(line)
        return _run_training(cfg, train_cfg, learner, evaluator, run_dir, main, launched)


def _run_training(cfg: DictConfig, train_cfg: TrainCfg, learner: Any, evaluator: Evaluator, run_dir: Path,
                  main: bool, launched: float | None) -> dict:  # fmt: skip
    name = cfg.algo.name
    evaluator.active = main
    if not main:
        log.disabled = True
    torch.set_num_threads(train_cfg.torch_threads)
    if main:
        write_atomic(run_dir / CONFIG_FILE, OmegaConf.to_yaml(cfg, resolve=True))  # once the model is built
    evaluator.start(learner.num_timesteps)
    bar = train_cfg.progress_bar and sys.stdout.isatty()  # off a terminal, the log lines show progress
    # the launch before training (imports, config, envs, learner) is part of what the command costs a user
    launch = "" if launched is None else f" launch_s={evaluator.t0 - launched:.1f}"
    log.info(
        f"start robot={cfg.robot.name} algo={name} seed={cfg.seed} total_timesteps={train_cfg.total_timesteps} "
        f"from_step={learner.num_timesteps} num_envs={train_cfg.num_envs} backend={cfg.backend.name} run={run_dir}"
        f"{launch}"
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
        resume = script_command("train.py", f"train.resume={shown_path(run_dir)}")
        print(f"\ninterrupted: saved {shown_path(path)}; resume with: {resume}")
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
    now = time.monotonic()
    command = "" if launched is None else f" command_s={now - launched:.1f}"
    log.info(
        f"done step={learner.num_timesteps} wall_s={now - evaluator.t0:.1f}{command} {_fields(summary)} "
        f"checkpoints={run_dir / CHECKPOINT_DIR}"
    )
    return summary
