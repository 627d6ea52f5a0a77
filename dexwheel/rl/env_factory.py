"""From a composed Hydra config to env constructor keyword arguments and (vector) envs.

Each config group (robot, task, drive, action, composer, collision) holds, per env family
(``hand`` or ``wheel_leg``), the keyword arguments it contributes. A group option without an entry
for the chosen robot's family is not available for that robot, and says so.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from omegaconf import DictConfig, OmegaConf

import dexwheel  # noqa: F401  (registers the env ids)
from dexwheel.rl.schema import ConfigError

KWARG_GROUPS = ("robot", "task", "drive", "action", "composer", "collision")


def env_kwargs(cfg: DictConfig) -> dict[str, Any]:
    """Merge the chosen groups' kwargs for the robot's family, refusing clashes and missing families."""
    family = cfg.robot.family
    kwargs: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for group in KWARG_GROUPS:
        node = cfg.get(group)
        if node is None:
            continue
        if family not in node:
            options = [f for f in ("hand", "wheel_leg") if f in node]
            raise ConfigError(
                f"{group}={node.get('name', '?')} is not available for robot {cfg.robot.name} ({family}); "
                f"it applies to {options or 'no robot family'}"
            )
        part = OmegaConf.to_container(node[family], resolve=True) or {}
        for key, value in part.items():  # type: ignore[union-attr]
            if key in kwargs:
                raise ConfigError(f"{group}.{family}.{key}: already set by {owner[key]}")
            kwargs[key], owner[key] = value, f"{group}.{family}.{key}"
    return kwargs


def make_env(cfg: DictConfig, **overrides: Any) -> gym.Env:
    """One env; constructor errors are re-raised naming the config field that caused them."""
    kwargs = env_kwargs(cfg) | overrides
    try:
        return gym.make(cfg.robot.env_id, **kwargs)
    except TypeError as e:
        raise ConfigError(f"{cfg.robot.env_id}: {e} (env kwargs from the config: {sorted(kwargs)})") from e


def make_vector_env(cfg: DictConfig, num_envs: int, **overrides: Any) -> gym.vector.VectorEnv:
    kwargs = env_kwargs(cfg) | overrides
    try:
        return gym.make_vec(cfg.robot.env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    except TypeError as e:
        raise ConfigError(f"{cfg.robot.env_id}: {e} (env kwargs from the config: {sorted(kwargs)})") from e
