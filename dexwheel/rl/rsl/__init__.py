"""rsl_rl PPO (``algo=rsl_ppo``) on the MuJoCo backend: the learner Isaac Lab and mjlab users know.

rsl_rl's ``OnPolicyRunner`` trains over the native vector env (:class:`RslVecEnv`); dexwheel keeps its own
run layout around it, as for SB3 runs: the runner's iterations run in chunks up to the next evaluation or
checkpoint, checkpoints (``checkpoints/step_<n>.pt``, ``best.pt``, ``final.pt``) are written atomically with the
SHA-256 of their bytes inside (:mod:`dexwheel.rl.checkpoints`),
TensorBoard gets rsl_rl's own scalars in ``tb/rsl_ppo``. Observation normalisation lives in the actor and
critic models (rsl_rl's ``obs_normalization``), so a checkpoint and an exported policy carry it along.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from rsl_rl.env import VecEnv
from rsl_rl.models import MLPModel
from rsl_rl.runners import OnPolicyRunner
from tensordict import TensorDict
from tqdm import tqdm

from dexwheel.rl.checkpoints import CHECKPOINT_DIR, load_rsl, prune, save_rsl
from dexwheel.rl.env_factory import make_vector_env
from dexwheel.rl.progress import Progress
from dexwheel.rl.rsl.cfg import CRITIC_GROUP, IMITATION_KEYS, POLICY_GROUP, runner_cfg
from dexwheel.rl.rsl.imitation import TeacherGuide, imitate, teacher_for
from dexwheel.rl.rsl.overlap import OverlappingLoop
from dexwheel.rl.rsl.parallel import CriticThread
from dexwheel.rl.rsl.symmetry import AugmentedSymmetry
from dexwheel.rl.rsl.vec_env import RslVecEnv, clip_actions
from dexwheel.rl.schema import ConfigError, TrainCfg, critic_thread

Policy = Callable[[np.ndarray], np.ndarray]
#: The env's step means a progress line carries besides the return, by their TensorBoard names: the curriculum's
#: mean level as the MuJoCo envs and as Isaac Lab's ``terrain_levels_vel`` name it.
PROGRESS_SCALARS = ("Curriculum/terrain_level", "Curriculum/terrain_levels")


def _mean(values: Any) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


class _Runner(OnPolicyRunner):
    overlapping: OverlappingLoop | None = None

    def learn(self, num_learning_iterations: int, init_at_random_ep_len: bool = False) -> None:
        """rsl_rl's loop, or with ``algo.params.overlap`` the one that updates while it collects."""
        if not self.cfg.get("overlap"):
            super().learn(num_learning_iterations, init_at_random_ep_len)
            return
        if self.overlapping is None:
            self.overlapping = OverlappingLoop()
        self.overlapping.learn(self, num_learning_iterations)

    def save(self, path: str, infos: dict | None = None) -> None:
        """No-op: the runner's own saves (a non-atomic ``torch.save`` at the end of each ``learn``) are
        replaced by :meth:`RslLearner.save`."""

    def _configure_multi_gpu(self) -> None:
        """rsl_rl's multi-GPU set-up (torchrun's ``WORLD_SIZE``/``RANK``/``LOCAL_RANK``, NCCL, ``cuda:<local
        rank>`` per process), and the same on the CPU with gloo, which rsl_rl does not offer: several CPU
        processes train one policy (gradients, KL and normaliser statistics all-reduced)."""
        world = int(os.getenv("WORLD_SIZE", "1"))
        if world == 1 or not str(self.device).startswith("cpu"):
            super()._configure_multi_gpu()
            return
        self.gpu_world_size, self.is_distributed = world, True
        self.gpu_local_rank, self.gpu_global_rank = int(os.getenv("LOCAL_RANK", "0")), int(os.getenv("RANK", "0"))
        self.cfg["multi_gpu"] = {"global_rank": self.gpu_global_rank, "local_rank": self.gpu_local_rank,
                                 "world_size": world}  # fmt: skip
        if not torch.distributed.is_initialized():
            torch.distributed.init_process_group("gloo", init_method=os.getenv("DEXWHEEL_DIST_INIT", "env://"),
                                                 rank=self.gpu_global_rank, world_size=world)  # fmt: skip


def _quiet(logger: Any, on_iteration: Callable[[float, float, dict[str, float]], None]) -> Callable[..., None]:
    """rsl_rl's per-iteration log, with its console block (dozens of lines, several per second on the CPU)
    swallowed: progress shows as the run's log lines and the progress bar; TensorBoard gets every scalar.
    ``on_iteration(collect_time, learn_time, scalars)`` follows each iteration's log, with the iteration's last
    value of each :data:`PROGRESS_SCALARS` entry the env reported (read before the log clears them)."""
    log = logger.log

    def wrapped(*args: Any, **kwargs: Any) -> None:
        scalars = {}
        for extras in logger.ep_extras:
            for key in PROGRESS_SCALARS:
                if key in extras:
                    scalars[key] = float(extras[key])
        with contextlib.redirect_stdout(io.StringIO()):
            log(*args, **kwargs)
        on_iteration(float(kwargs.get("collect_time", 0.0)), float(kwargs.get("learn_time", 0.0)), scalars)

    return wrapped


def _with_threads(update: Callable[..., Any], threads: int, rest: int) -> Callable[..., Any]:
    """``update`` on ``threads`` torch threads, ``rest`` again afterwards (docs/reference/training.md)."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        torch.set_num_threads(threads)
        try:
            return update(*args, **kwargs)
        finally:
            torch.set_num_threads(rest)

    return wrapped


class RslLearner:
    """One rsl_rl training run: the runner, its vector env and its step count."""

    suffix = ".pt"

    def __init__(self, cfg: DictConfig, train: TrainCfg, params: DictConfig, policy: DictConfig, run_dir: Path,
                 checkpoint: Path | None, venv: VecEnv | None = None):  # fmt: skip
        """``venv``: the backend's rsl_rl env (Isaac Lab's ``RslRlVecEnvWrapper``); by default the native
        MuJoCo vector env of ``cfg``."""
        self.run_dir = run_dir
        #: distributed training (torchrun): each process steps its own envs; the first one writes the run
        self.rank, self.world = int(os.getenv("RANK", "0")), int(os.getenv("WORLD_SIZE", "1"))
        self.is_main = self.rank == 0
        device = train.device
        if self.world > 1 and device.startswith("cuda"):  # one GPU per process, as rsl_rl requires
            device = f"cuda:{int(os.getenv('LOCAL_RANK', '0'))}"
        torch.manual_seed(cfg.seed)  # the models' initial weights and PPO's minibatch order
        if venv is None:
            seed = cfg.seed + self.rank * train.num_envs  # env i of process r: seed + r * num_envs + i
            venv = RslVecEnv(make_vector_env(cfg, train.num_envs), seed=seed, device=device)
        self.venv = venv
        mirror = getattr(venv, "mirror_maps", None) is not None
        if params.get("symmetry") and not mirror:
            raise ConfigError(f"algo.params.symmetry: the {cfg.robot.name} env has no left-right mirror here "
                              f"(the wheel-leg robots on the MuJoCo backend have one)")  # fmt: skip
        params = {
            **OmegaConf.to_container(params),
            "symmetry": mirror if params.get("symmetry") is None else params.symmetry,
        }
        critic = CRITIC_GROUP if CRITIC_GROUP in venv.get_observations().keys() else POLICY_GROUP  # noqa: SIM118
        self.cfg = runner_cfg(params, policy, train.normalize_obs, critic)
        teacher = params.get("teacher")
        self.teacher = teacher_for(teacher, venv, params.get("teacher_expert")) if teacher else None
        self.imitation = {k: params.get(k) for k in IMITATION_KEYS}
        self.guide: TeacherGuide | None = None
        self.batch = self.cfg["num_steps_per_env"] * train.num_envs * self.world  # every process's samples
        with contextlib.redirect_stdout(io.StringIO()):  # the model printout
            self.runner = _Runner(self.venv, self.cfg, log_dir=str(run_dir / "tb" / "rsl_ppo"), device=device)
        if self.runner.alg.symmetry is not None:
            self.runner.alg.symmetry = AugmentedSymmetry.like(self.runner.alg.symmetry)
        self.runner.add_git_repo_to_log(__file__)  # the dexwheel commit and diff, next to rsl_rl's own
        self.num_timesteps = 0
        if checkpoint is not None:
            saved = load_rsl(checkpoint)
            self.runner.alg.load(saved, None, True)
            self.runner.current_learning_iteration = int(saved["iter"])
            self.num_timesteps = int((saved.get("infos") or {}).get("num_timesteps", saved["iter"] * self.batch))
            print(f"resuming from {checkpoint} at step {self.num_timesteps}")
        self._bar: tqdm | None = None
        self._progress = Progress()
        self.runner.logger.log = _quiet(self.runner.logger, self._iteration_done)
        self.critic_thread: CriticThread | None = None
        if critic_thread(train, bool(params.get("overlap"))):
            self.critic_thread = self.runner.alg.update = CriticThread(self.runner.alg)
        if train.learner_threads != train.torch_threads:
            self.runner.alg.update = _with_threads(self.runner.alg.update, train.learner_threads, train.torch_threads)

    def _iteration_done(self, collect_time: float, learn_time: float, env_scalars: dict[str, float]) -> None:
        self.num_timesteps += self.batch
        if self._bar is not None:
            self._bar.update(self.batch)
        self._progress.add(self.batch, collect_time, learn_time)
        if self._progress.due():
            logger = self.runner.logger
            scalars = {"mean_return": _mean(logger.rewbuffer), "mean_episode_length": _mean(logger.lenbuffer)}
            self._progress.log(self.num_timesteps, {**scalars, **env_scalars})

    def learn(self, total: int, due: Callable[[int], int], on_chunk: Callable[[], None], bar: bool) -> None:
        """Iterate until ``total`` steps, pausing for ``on_chunk`` whenever ``due(steps)`` steps (the next
        evaluation or checkpoint) have passed."""
        self._bar = tqdm(total=total, initial=self.num_timesteps, unit="step", disable=not bar)
        self._progress.total, self._progress.bar = total, self._bar
        try:
            if self.teacher is not None and self.num_timesteps == 0:  # a fresh run starts from the teacher
                self._imitate()
            if self.teacher is not None and self.imitation["teacher_guide"] and self.guide is None:
                self.guide = TeacherGuide(
                    self.runner.alg,
                    self.venv,
                    self.teacher,
                    self.imitation["guide_steps"],
                    self.imitation["guide_focus"],
                )
            while self.num_timesteps < total:
                steps = min(due(self.num_timesteps), total - self.num_timesteps)
                iterations = max(1, math.ceil(steps / self.batch))
                writer = self.runner.logger.writer
                if writer is not None:  # learn() opens a new one each call
                    writer.close()
                self.runner.learn(iterations)
                self.runner.current_learning_iteration += 1  # learn() leaves it at the last one it ran
                on_chunk()
        finally:
            self._bar.close()
            self._bar = None
            if self.runner.logger.writer is not None:
                self.runner.logger.writer.close()

    def _imitate(self) -> None:
        """The imitation rounds, then ``critic_warmup`` PPO iterations with the actor frozen."""
        log = logging.getLogger("dexwheel.train")  # the run's train.log (dexwheel.rl.training)
        alg, imitation = self.runner.alg, self.imitation
        taken = imitate(alg, self.venv, self.teacher, int(imitation["teacher_steps"]),
                        float(imitation["teacher_std"]), log.info)  # fmt: skip
        self.num_timesteps += taken
        if self._bar is not None:
            self._bar.update(taken)
        self._progress = Progress(total=self._progress.total, bar=self._bar)  # PPO's iterations' rates, not the rounds'
        warmup = int(imitation["critic_warmup"])
        if warmup > 0:
            frozen = [p for p in alg.actor.parameters() if p.requires_grad]
            for p in frozen:
                p.requires_grad_(False)
            self.runner.learn(warmup)
            self.runner.current_learning_iteration += 1
            for p in frozen:
                p.requires_grad_(True)
            alg.learning_rate = self.cfg["algorithm"]["learning_rate"]  # the KL schedule raised it meanwhile
            for group in alg.optimizer.param_groups:
                group["lr"] = alg.learning_rate
        log.info(f"imitation done at step={self.num_timesteps} (critic warm-up: {warmup} iterations)")

    def save(self, name: str) -> Path:
        path = self.run_dir / CHECKPOINT_DIR / f"{name}.pt"
        if not self.is_main:  # one copy of the (all-reduced, identical) weights
            return path
        saved = self.runner.alg.save()
        saved["iter"] = self.runner.current_learning_iteration
        saved["infos"] = {"num_timesteps": self.num_timesteps}
        return save_rsl(saved, path)

    def save_step(self, keep: int) -> Path:
        path = self.save(f"step_{self.num_timesteps}")
        if self.is_main:
            prune(self.run_dir, keep)
        return path

    def policy(self) -> Policy:
        """Deterministic actions for the evaluation env (a single MuJoCo env)."""
        actor = self.runner.alg.get_policy()
        act = actor_policy(actor, self.venv.env.single_action_space)

        def evaluating(obs: np.ndarray) -> np.ndarray:
            actor.eval()  # rsl_rl's learn() switches back to training mode
            return act(obs)

        return evaluating

    def close(self) -> None:
        if self.runner.logger.writer is not None:  # a runner.learn() outside learn() leaves it open
            self.runner.logger.writer.close()
        if self.runner.overlapping is not None:
            self.runner.overlapping.close()
        if self.critic_thread is not None:
            self.critic_thread.close()
        self.venv.close()


def actor_policy(actor: MLPModel, space: gym.spaces.Box) -> Policy:
    """Deterministic actions (the Gaussian's mean, clipped to the action space) for single observations;
    the actor reads their leading ``actor.obs_dim`` (policy) columns."""
    dim = actor.obs_dim

    def act(obs: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32)[None, :dim])
        with torch.inference_mode():
            out = actor(TensorDict({POLICY_GROUP: x}, batch_size=[1]))
        return clip_actions(space, out[0].numpy())

    return act


def load_actor(checkpoint: Path, run_cfg: DictConfig, action_space: gym.spaces.Box) -> MLPModel:
    """The trained actor (with its observation normaliser) of an rsl_rl checkpoint; its input size is the
    checkpoint's (the policy columns of the run's observation)."""
    cfg = runner_cfg(run_cfg.algo.params, run_cfg.algo.policy, run_cfg.train.normalize_obs)
    weights = load_rsl(checkpoint)["actor_state_dict"]
    obs_dim = next(w for k, w in weights.items() if k.startswith("mlp.") and k.endswith(".weight")).shape[1]
    obs = TensorDict({POLICY_GROUP: torch.zeros(1, obs_dim)}, batch_size=[1])
    actor_cfg = {k: v for k, v in cfg["actor"].items() if k != "class_name"}
    actor = MLPModel(obs, cfg["obs_groups"], "actor", int(np.prod(action_space.shape)), **actor_cfg)
    actor.load_state_dict(weights)
    return actor.eval()
