"""stable-baselines3 learners (``algo=ppo``, ``algo=sac``): the model, its vector env, checkpoints, callbacks."""

from __future__ import annotations

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
from tqdm import tqdm

from dexwheel.rl.checkpoints import CHECKPOINT_DIR, load_vecnormalize, prune, save_checkpoint
from dexwheel.rl.env_factory import make_env, make_vector_env
from dexwheel.rl.evaluation import Policy
from dexwheel.rl.progress import Progress
from dexwheel.rl.sb3.vec_env import GymVectorEnvAdapter
from dexwheel.rl.schema import TrainCfg

ALGORITHMS: dict[str, type[BaseAlgorithm]] = {"ppo": PPO, "sac": SAC}
ACTIVATION_FNS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU}


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


class _Sb3Callback(BaseCallback):
    """Checkpoints every ``checkpoint_every_steps``, the :class:`Evaluator`'s evaluations and the progress lines and
    bar (:mod:`dexwheel.rl.progress`, as rsl_rl's learner writes them), inside SB3's loop."""

    def __init__(self, learner: Sb3Learner, evaluator: Any, progress: Progress, bar: tqdm):
        super().__init__()
        self.learner, self.evaluator, self.progress, self.bar = learner, evaluator, progress, bar
        self.last = 0
        self._counted = 0  # the step count the progress and the bar have seen
        self._rollout_start = self._rollout_end = time.monotonic()

    def _on_training_start(self) -> None:
        self.last = self._counted = self.num_timesteps

    def _on_rollout_start(self) -> None:
        now = time.monotonic()
        self.progress.add(0, 0.0, now - self._rollout_end)  # the update since the last rollout
        self._rollout_start = now

    def _on_rollout_end(self) -> None:
        self._rollout_end = now = time.monotonic()
        self.progress.add(self.num_timesteps - self._counted, now - self._rollout_start, 0.0)
        self._counted = self.num_timesteps
        if self.progress.due():
            infos = self.model.ep_info_buffer or []
            returns, lengths = [e["r"] for e in infos], [e["l"] for e in infos]
            mean = {"mean_return": float(np.mean(returns)) if returns else float("nan"),
                    "mean_episode_length": float(np.mean(lengths)) if lengths else float("nan")}  # fmt: skip
            self.progress.log(self.num_timesteps, mean)

    def _on_step(self) -> bool:
        self.bar.update(self.training_env.num_envs)
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

    def learn(self, total: int, evaluator: Any, resumed: bool, bar: bool) -> None:
        shown = tqdm(total=total, initial=self.num_timesteps, unit="step", disable=not bar)
        try:
            self.model.learn(
                max(0, total - self.num_timesteps),
                callback=_Sb3Callback(self, evaluator, Progress(total=total, bar=shown), shown),
                reset_num_timesteps=not resumed,
                tb_log_name=self.name,
            )
        finally:
            shown.close()

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


def _resumed_model(name: str, checkpoint: Path, venv: VecEnv, train: TrainCfg) -> tuple[BaseAlgorithm, VecEnv]:
    stats = load_vecnormalize(checkpoint, train.normalize_obs)
    if stats is not None:
        inner = venv.venv if isinstance(venv, VecNormalize) else venv
        stats.set_venv(inner)
        venv = stats
    model = ALGORITHMS[name].load(checkpoint, env=venv, device=train.device)
    print(f"resuming from {checkpoint} at step {model.num_timesteps}")
    return model, venv
