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
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from stable_baselines3 import PPO, SAC
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor, VecNormalize

from dexwheel.atomic import write_atomic
from dexwheel.rl.checkpoints import (
    CHECKPOINT_DIR,
    check_checkpoint,
    latest_checkpoint,
    load_vecnormalize,
    prune,
    save_checkpoint,
)
from dexwheel.rl.curves import plot_learning_curve
from dexwheel.rl.env_factory import make_env, make_vector_env
from dexwheel.rl.evaluation import Policy, run_episodes
from dexwheel.rl.sb3_vec_env import GymVectorEnvAdapter
from dexwheel.rl.schema import ConfigError, TrainCfg, validate

ALGORITHMS: dict[str, type[BaseAlgorithm]] = {"ppo": PPO, "sac": SAC}
RSL_ALGOS = ("rsl_ppo",)  # rsl_rl's runner (dexwheel.rl.rsl)
ACTIVATION_FNS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU}
CONFIG_FILE = "config.yaml"
HISTORY_FILE = "eval_history.json"
CURVE_FILE = "learning_curve.png"
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


def build_vec_env(cfg: DictConfig, train: TrainCfg, seed: int) -> VecEnv:
    n = train.num_envs
    if train.vectorization == "native":
        venv: VecEnv = GymVectorEnvAdapter(make_vector_env(cfg, n))
    else:
        factory = [lambda: Monitor(make_env(cfg)) for _ in range(n)]
        venv = (
            SubprocVecEnv(factory, start_method="forkserver")
            if train.vectorization == "subproc"
            else DummyVecEnv(factory)
        )
    venv = VecMonitor(venv) if train.vectorization == "native" else venv
    venv.seed(seed)
    if train.normalize_obs:
        venv = VecNormalize(venv, norm_obs=True, norm_reward=False)
    return venv


def normalizer_of(model: BaseAlgorithm) -> VecNormalize | None:
    env = model.get_env()
    return env if isinstance(env, VecNormalize) else None


def policy_fn(model: BaseAlgorithm, normalizer: VecNormalize | None):
    """Deterministic actions from raw single-env observations (normalised with the training statistics)."""

    def act(obs: np.ndarray) -> np.ndarray:
        x = normalizer.normalize_obs(obs) if normalizer is not None else obs
        action, _ = model.predict(x, deterministic=True)
        return action

    return act


class Evaluator:
    """Deterministic episodes on a separate env every ``eval_every_steps``: the history, the learning curve,
    one progress line per evaluation; says whether the policy is the best so far (highest mean return)."""

    def __init__(self, cfg: DictConfig, train: TrainCfg, run_dir: Path):
        self.cfg, self.train, self.run_dir = cfg, train, run_dir
        self.task = cfg.task.name
        self.env = make_env(cfg)
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
        summary = run_episodes(self.env, act, self.task, self.train.eval_episodes, self.train.eval_seed).summary()
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
        self.env.close()


class _Sb3Callback(BaseCallback):
    """Checkpoints every ``checkpoint_every_steps`` and the :class:`Evaluator`'s evaluations, inside SB3's loop."""

    def __init__(self, learner: Sb3Learner, evaluator: Evaluator):
        super().__init__()
        self.learner, self.evaluator = learner, evaluator
        self.last = 0

    def _on_training_start(self) -> None:
        self.last = self.num_timesteps

    def _on_step(self) -> bool:
        train = self.evaluator.train
        if self.num_timesteps - self.last >= train.checkpoint_every_steps:
            self.learner.save_step(train.keep_checkpoints)
            self.last = self.num_timesteps
        if self.evaluator.due(self.num_timesteps):
            summary, best = self.evaluator.evaluate(self.learner.policy(), self.num_timesteps)
            for key, value in summary.items():
                self.logger.record(f"eval/{key}", value)
            if best:
                self.learner.save("best")
        return True


def _load_history(run_dir: Path) -> list[dict[str, float]]:
    path = run_dir / HISTORY_FILE
    return json.loads(path.read_text()) if path.exists() else []


class Sb3Learner:
    """One stable-baselines3 training run: the model, its (normalised) vector env and its step count."""

    suffix = ".zip"

    def __init__(self, cfg: DictConfig, train: TrainCfg, name: str, params: DictConfig, policy: DictConfig,
                 run_dir: Path, checkpoint: Path | None):  # fmt: skip
        self.run_dir, self.name = run_dir, name
        venv = build_vec_env(cfg, train, cfg.seed)
        if checkpoint is not None:
            self.model, self.venv = _resumed_model(name, checkpoint, venv, train)
        else:
            self.model, self.venv = _new_model(cfg, name, params, policy, venv, train, run_dir), venv

    @property
    def num_timesteps(self) -> int:
        return self.model.num_timesteps

    def learn(self, total: int, evaluator: Evaluator, resumed: bool, bar: bool) -> None:
        self.model.learn(
            max(0, total - self.num_timesteps),
            callback=_Sb3Callback(self, evaluator),
            reset_num_timesteps=not resumed,
            progress_bar=bar,
            tb_log_name=self.name,
        )

    def save(self, name: str) -> Path:
        return save_checkpoint(self.model, self.run_dir / CHECKPOINT_DIR / f"{name}.zip", normalizer_of(self.model))

    def save_step(self, keep: int) -> Path:
        path = self.save(f"step_{self.num_timesteps}")
        prune(self.run_dir, keep)
        return path

    def policy(self) -> Policy:
        return policy_fn(self.model, normalizer_of(self.model))

    def close(self) -> None:
        self.venv.close()


def _new_model(cfg: DictConfig, name: str, params: DictConfig, policy: DictConfig, venv: VecEnv, train: TrainCfg,
               run_dir: Path) -> BaseAlgorithm:  # fmt: skip
    policy_kwargs: dict[str, Any] = {
        "net_arch": list(policy.net_arch),
        "activation_fn": ACTIVATION_FNS[policy.activation],
    }
    if name == "ppo":
        policy_kwargs["log_std_init"] = policy.log_std_init
    return ALGORITHMS[name](
        "MlpPolicy",
        venv,
        seed=cfg.seed,
        device=train.device,
        tensorboard_log=str(run_dir / "tb"),
        policy_kwargs=policy_kwargs,
        verbose=0,
        **OmegaConf.to_container(params),  # type: ignore[arg-type]
    )


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


def _resumed_model(name: str, checkpoint: Path, venv: VecEnv, train: TrainCfg) -> tuple[BaseAlgorithm, VecEnv]:
    stats = load_vecnormalize(checkpoint)
    if stats is not None:
        inner = venv.venv if isinstance(venv, VecNormalize) else venv
        stats.set_venv(inner)
        venv = stats
    model = ALGORITHMS[name].load(checkpoint, env=venv, device=train.device)
    print(f"resuming from {checkpoint} at step {model.num_timesteps}")
    return model, venv


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
                 checkpoint: Path | None) -> Sb3Learner | Any:  # fmt: skip
    if name in RSL_ALGOS:
        from dexwheel.rl.rsl import RslLearner  # rsl_rl and tensordict load only for rsl runs

        return RslLearner(cfg, train, params, policy, run_dir, checkpoint)
    return Sb3Learner(cfg, train, name, params, policy, run_dir, checkpoint)


def train(cfg: DictConfig, run_dir: Path) -> dict[str, Any]:
    """Train as the config says, writing everything into ``run_dir``; returns the final evaluation."""
    train_cfg, name, params, policy = validate(cfg)
    make_env(cfg).close()  # env kwargs are checked (and named) before anything else runs
    run_dir = Path(train_cfg.resume) if train_cfg.resume else Path(run_dir)
    checkpoint = latest_checkpoint(run_dir) if train_cfg.resume else None
    if checkpoint is not None:  # a missing, corrupted or incompatible run fails before anything in it is written
        check_checkpoint(checkpoint)
        check_resume_config(cfg, run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(train_cfg.torch_threads)

    learner = make_learner(cfg, train_cfg, name, params, policy, run_dir, checkpoint)
    write_atomic(run_dir / CONFIG_FILE, OmegaConf.to_yaml(cfg, resolve=True))  # once the model is built
    evaluator = Evaluator(cfg, train_cfg, run_dir)
    evaluator.start(learner.num_timesteps)
    bar = train_cfg.progress_bar and sys.stdout.isatty()  # off a terminal, the log lines show progress
    log.info(
        f"start robot={cfg.robot.name} algo={name} seed={cfg.seed} total_timesteps={train_cfg.total_timesteps} "
        f"from_step={learner.num_timesteps} num_envs={train_cfg.num_envs} run={run_dir}"
    )
    interrupted = False
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C raises KeyboardInterrupt here
    try:
        with _not_on_console(bar):
            if isinstance(learner, Sb3Learner):
                learner.learn(train_cfg.total_timesteps, evaluator, bool(train_cfg.resume), bar)
            else:
                _rsl_learn(learner, train_cfg.total_timesteps, evaluator, train_cfg, bar)
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
    write_atomic(run_dir / "final_eval.json", json.dumps(summary, indent=1))
    learner.close()
    log.info(
        f"done step={learner.num_timesteps} wall_s={time.monotonic() - evaluator.t0:.1f} {_fields(summary)} "
        f"checkpoints={run_dir / CHECKPOINT_DIR}"
    )
    return summary
