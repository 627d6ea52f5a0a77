"""Policies evaluate.py and view.py can play: a trained checkpoint, random or zero actions (evaluate.py also an
exported ONNX policy: :class:`dexwheel.rl.export.ExportedPolicy`)."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from omegaconf import DictConfig

from dexwheel.rl.checkpoints import (
    CHECKPOINT_DIR,
    CheckpointError,
    check_checkpoint,
    latest_checkpoint,
    load_vecnormalize,
    suffix_of,
)
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.evaluation import Policy
from dexwheel.rl.run_config import load_run_config
from dexwheel.rl.training import RSL_ALGOS

POLICIES = ("trained", "random", "zero", "onnx")  # onnx: an exported policy (dexwheel.rl.export)


def run_config(run_dir: Path) -> DictConfig:
    """The resolved config a run was trained with, complete: a key its ``config.yaml`` lacks (saved before the
    key existed) is filled with today's default and named on stderr with the value used."""
    cfg, warnings = load_run_config(run_dir)
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    return cfg


def resolve_checkpoint(run_dir: Path, which: str | Path, algo: str) -> Path:
    if which is None or which == "":
        raise CheckpointError(f"checkpoint: final | best | latest | a path to a checkpoint, got {which!r}")
    if which == "latest":
        return latest_checkpoint(run_dir)
    if which in ("best", "final"):
        suffix = suffix_of(algo)
        path = Path(run_dir) / CHECKPOINT_DIR / f"{which}{suffix}"
        if which == "best" and not path.exists():  # a run too short for a periodic evaluation
            path = Path(run_dir) / CHECKPOINT_DIR / f"final{suffix}"
        return path
    return Path(which)


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


def baseline_policy(kind: str, space: gym.spaces.Box, seed: int) -> Policy:
    if kind == "zero":
        zero = np.zeros(space.shape, dtype=space.dtype)
        return lambda obs: zero
    if kind == "random":
        space.seed(seed)
        return lambda obs: space.sample()
    raise ValueError(f"policy: {kind!r} is not one of {list(POLICIES)}")
