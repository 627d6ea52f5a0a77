"""From a composed Hydra config to env constructor keyword arguments and (vector) envs.

Each config group (robot, drive, action, composer, collision) holds, per env family (``hand`` or ``wheel_leg``),
the keyword arguments it contributes; the task group holds them under the task's own name (``task.hand_pose``,
``task.velocity``: :func:`~dexwheel.rl.run_config.env_section`), with the family it runs on. A group option without
an entry for the chosen robot's family is not available for that robot, and says so. An env constructor's error
about one of its fields (:class:`~dexwheel.fields.ConfigFieldError`) becomes a one-line :class:`ConfigError` naming
the field's full config path (``task.hand_pose.goal_mode``), the value and what is allowed.
"""

from __future__ import annotations

import json
import time
from typing import Any

import gymnasium as gym
import numpy as np
from omegaconf import DictConfig, OmegaConf

import dexwheel  # noqa: F401  (registers the env ids)
from dexwheel.fields import ConfigFieldError
from dexwheel.rl.run_config import FAMILIES, KWARG_GROUPS, env_id, env_section
from dexwheel.rl.schema import ConfigError
from dexwheel.tasks.spaces import IntegerBox


def env_kwargs(cfg: DictConfig) -> dict[str, Any]:
    """Merge the chosen groups' kwargs for the robot's family, refusing clashes and missing families."""
    return _kwargs_and_paths(cfg)[0]


def _kwargs_and_paths(cfg: DictConfig) -> tuple[dict[str, Any], dict[str, str]]:
    """:func:`env_kwargs` and each kwarg's config path (``goal_mode`` -> ``task.hand_pose.goal_mode``)."""
    family = cfg.robot.family
    kwargs: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for group in KWARG_GROUPS:
        node = cfg.get(group)
        if node is None:
            continue
        section = env_section(cfg, group)
        if group == "task" and node.get("family") != family:
            raise ConfigError(f"task={node.get('name', '?')} is not available for robot {cfg.robot.name} ({family}); "
                              f"it runs on {node.get('family')} robots")  # fmt: skip
        if section not in node:
            options = [f for f in FAMILIES if f in node]
            raise ConfigError(
                f"{group}={node.get('name', '?')} is not available for robot {cfg.robot.name} ({family}); "
                f"it applies to {options or 'no robot family'}"
            )
        part = OmegaConf.to_container(node[section], resolve=True) or {}
        for key, value in part.items():  # type: ignore[union-attr]
            if key in kwargs:
                raise ConfigError(f"{group}.{section}.{key}: already set by {owner[key]}")
            kwargs[key], owner[key] = value, f"{group}.{section}.{key}"
    return kwargs, owner


def config_error(e: Exception, env_id: str, kwargs: dict[str, Any], paths: dict[str, str]) -> ConfigError:
    """An env constructor's error as one line; a field error names the field's config path."""
    if isinstance(e, ConfigFieldError) and e.field.partition(".")[0] in paths:
        head, _, rest = e.field.partition(".")
        path = paths[head] + (f".{rest}" if rest else "")
        detail = e.detail
        message = path + detail[len(e.field) :] if detail.startswith(e.field) else f"{path}: {detail}"
    elif isinstance(e, TypeError):
        message = f"{env_id}: {e} (env kwargs from the config: {sorted(kwargs)})"
    else:
        message = f"{env_id}: {e}"
    return ConfigError(" ".join(message.split()))  # one line


def make_env(cfg: DictConfig, **overrides: Any) -> gym.Env:
    """One env; constructor errors are re-raised naming the config field that caused them. An env with an
    integer-valued action space (G20 ``sdk255``) rounds the (float) actions of a policy."""
    kwargs, paths = _kwargs_and_paths(cfg)
    kwargs |= overrides
    try:
        env = gym.make(env_id(cfg), **kwargs)
    except (TypeError, ValueError) as e:
        raise config_error(e, env_id(cfg), kwargs, paths) from e
    return RoundedActions(env) if isinstance(env.action_space, IntegerBox) else env


def check_isaaclab_env(cfg: DictConfig, **overrides: Any) -> None:
    """Refuse an env setting the robot's Isaac Lab task cannot run (:mod:`dexwheel.rl.isaaclab_support`), naming its
    config key, here in the core venv: before Isaac Lab starts (about 20 s) and would refuse it by its keyword."""
    from dexwheel.rl.isaaclab_support import task_config, unsupported

    kwargs, paths = _kwargs_and_paths(cfg)
    kwargs |= overrides
    paths |= {key: f"env_overrides.{key}" for key in overrides}
    try:
        refused = unsupported(task_config(str(cfg.task.name), str(cfg.robot.name), kwargs))
    except (TypeError, ValueError) as e:
        raise config_error(e, env_id(cfg), kwargs, paths) from e
    if refused:  # named as typed: the config key and its value (true, not True)
        named = {key: f"{paths.get(key, key)}={json.dumps(kwargs.get(key), default=str)}" for key in refused}
        raise ConfigError("; ".join(f"{named[key]}: backend=isaaclab does not run it: {why}"
                                    for key, why in refused.items()))  # fmt: skip


def make_vector_env(cfg: DictConfig, num_envs: int, **overrides: Any) -> gym.vector.VectorEnv:
    kwargs, paths = _kwargs_and_paths(cfg)
    kwargs |= overrides
    try:
        return gym.make_vec(env_id(cfg), num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    except (TypeError, ValueError) as e:
        raise config_error(e, env_id(cfg), kwargs, paths) from e


def physics_only_s(cfg: DictConfig, num_envs: int, steps: int) -> float:
    """Seconds the native vector env takes for ``steps`` env steps with random actions, nothing else (no policy,
    no learner): the floor a training loop over the same steps could reach on this machine, the baseline the
    training benchmark and ``scripts/results.py`` state their times against."""
    venv = make_vector_env(cfg, num_envs)
    venv.reset(seed=0)
    venv.action_space.seed(0)
    actions = [venv.action_space.sample() for _ in range(64)]  # any action space (sdk255's integers too)
    for action in actions[:4]:  # first calls (compiled kernels' dispatch, caches) untimed
        venv.step(action)
    n = max(1, steps // num_envs)
    t0 = time.perf_counter()
    for k in range(n):
        venv.step(actions[k % 64])
    seconds = time.perf_counter() - t0
    venv.close()
    return seconds * steps / (n * num_envs)


class RoundedActions(gym.ActionWrapper):
    """Rounds actions to the nearest integer, for an integer-valued action space (:class:`IntegerBox`):
    learners with Gaussian policies act in floats (and SB3 clips them to the bounds; this rounds them)."""

    def action(self, action: Any) -> np.ndarray:
        return np.rint(action)
