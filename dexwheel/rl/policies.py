"""Policies evaluate.py and view.py can play: a trained checkpoint, random or zero actions, the scripted climbing gait
on the MuJoCo rough task (a privileged baseline: :mod:`dexwheel.tasks.velocity.teacher`), the G20 rolling task's
finger gait (``teacher``: :mod:`dexwheel.tasks.in_hand.teacher`), and in evaluate.py an exported ONNX policy
(:class:`dexwheel.rl.export.ExportedPolicy`)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
from omegaconf import DictConfig

from dexwheel.rl.checkpoints import check_checkpoint, load_vecnormalize, resolve_checkpoint
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.evaluation import Policy
from dexwheel.rl.schema import RSL_ALGOS, ConfigError

POLICIES = ("trained", "random", "zero", "climbing", "teacher", "onnx")  # onnx: an exported policy (dexwheel.rl.export)


def load_policy(run_dir: Path, which: str, run_cfg: DictConfig) -> Policy:
    """Deterministic actions of a run's checkpoint (``best``, ``final``, ``latest`` or a path)."""
    algo = run_cfg.algo.name
    checkpoint = resolve_checkpoint(run_dir, which, algo)
    check_checkpoint(checkpoint)
    if algo in RSL_ALGOS:
        from dexwheel.rl.rsl import actor_policy, load_actor

        env = make_env(run_cfg)  # the action space the actor was built for
        space = env.action_space
        env.close()
        return actor_policy(load_actor(checkpoint, run_cfg, space), space)
    from dexwheel.rl.sb3 import ALGORITHMS

    model = ALGORITHMS[algo].load(checkpoint, device="cpu")
    stats = load_vecnormalize(checkpoint, bool(run_cfg.train.normalize_obs))

    def act(obs: np.ndarray) -> np.ndarray:
        x = stats.normalize_obs(obs) if stats is not None else obs
        return model.predict(x, deterministic=True)[0]

    return act


def baseline_policy(kind: str, env: gym.Env, seed: int) -> Policy:
    """A policy that needs no run: ``zero``, ``random`` (seeded), ``climbing`` (the gait, reading ``env``'s terrain)
    or ``teacher`` (the G20 rolling task's finger gait)."""
    space = env.action_space
    if kind == "zero":
        zero = np.zeros(space.shape, dtype=space.dtype)
        return lambda obs: zero
    if kind == "random":
        space.seed(seed)
        return lambda obs: space.sample()
    if kind == "climbing":
        from dexwheel.tasks.velocity.teacher import gait_policy

        task = getattr(env.unwrapped, "task", None)
        if task is None or not hasattr(task, "terrain"):
            raise ConfigError(f"policy=climbing: the climbing gait drives the wheel-leg rough task on MuJoCo; this env "
                              f"is {env.spec.id if env.spec else type(env.unwrapped).__name__}")  # fmt: skip
        try:
            return gait_policy(env)
        except ValueError as e:
            raise ConfigError(f"policy=climbing: {e}") from None
    if kind == "teacher":
        from dexwheel.tasks.in_hand.task import InHandTask
        from dexwheel.tasks.in_hand.teacher import TEACHER_TASKS, gait_policy

        task = getattr(env.unwrapped, "task", None)
        if not isinstance(task, InHandTask) or task.cfg.task not in TEACHER_TASKS:
            name = env.spec.id if env.spec else type(env.unwrapped).__name__
            raise ConfigError(f"policy=teacher: the finger gait rolls the cylinder of the G20 rolling task "
                              f"(task=in_hand_rotate, MuJoCo); this env is {name}")  # fmt: skip
        try:
            return gait_policy(env)
        except ValueError as e:
            raise ConfigError(f"policy=teacher: {e}") from None
    raise ValueError(f"policy: {kind!r} is not one of {list(POLICIES)}")
