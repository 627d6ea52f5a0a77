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
from dexwheel.rl.run_config import FAMILIES, KWARG_GROUPS, TERM_TABLES, env_id, env_section, is_term_table
from dexwheel.rl.schema import ConfigError
from dexwheel.tasks.spaces import IntegerBox


def env_kwargs(cfg: DictConfig, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Merge the chosen groups' kwargs for the robot's family, refusing clashes and missing families; then
    ``overrides`` (``env_overrides``) laid over them (:func:`overlay`)."""
    return overlay(_kwargs_and_paths(cfg)[0], overrides or {})


def overlay(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``top`` laid over it: a config section both hold (``collision``) merged key by key, so an
    override of one field keeps the others the groups set; any other value, a term table too, replaced."""
    out = dict(base)
    for key, value in top.items():
        into = base.get(key)
        merge = isinstance(into, dict) and isinstance(value, dict) and key not in TERM_TABLES
        out[key] = overlay(into, value) if merge else value
    return out


def _override_paths(overrides: dict[str, Any], key: str = "") -> dict[str, str]:
    """Each override's and each of its fields' config path (``collision.contact_excludes`` ->
    ``env_overrides.collision.contact_excludes``)."""
    paths = {}
    for name, value in overrides.items():
        dotted = f"{key}.{name}" if key else name
        paths[dotted] = f"env_overrides.{dotted}"
        if isinstance(value, dict):
            paths |= _override_paths(value, dotted)
    return paths


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
        _merge(kwargs, owner, part, f"{group}.{section}")  # type: ignore[arg-type]
    return kwargs, owner


def _merge(kwargs: dict[str, Any], owner: dict[str, str], part: dict[str, Any], where: str, key: str = "") -> None:
    """``part`` (a group's section) into ``kwargs``: a config section two groups share (``actions``: its kind from
    the action group, its scale from the task) merged field by field; a field set twice refused. ``owner``: each
    keyword's and each section field's config path (``actions.kind`` -> ``action.hand.actions.kind``)."""
    for name, value in part.items():
        dotted = f"{key}.{name}" if key else name
        into = kwargs.get(name)
        if isinstance(into, dict) and isinstance(value, dict) and not is_term_table(value):
            _merge(into, owner, value, f"{where}.{name}", dotted)
            continue
        if name in kwargs:
            raise ConfigError(f"{where}.{name}: already set by {owner[dotted]}")
        kwargs[name] = value
        owner.setdefault(dotted, f"{where}.{name}")
        for sub in value if isinstance(value, dict) and not is_term_table(value) else ():
            owner[f"{dotted}.{sub}"] = f"{where}.{name}.{sub}"


def config_error(e: Exception, env_id: str, kwargs: dict[str, Any], paths: dict[str, str]) -> ConfigError:
    """An env constructor's error as one line; a field error names the field's config path."""
    known = [p for p in paths if e.field == p or e.field.startswith(f"{p}.")] if isinstance(e, ConfigFieldError) else []
    if known:
        head = max(known, key=len)  # the field's own path where it has one (actions.kind), else its section's
        path = paths[head] + e.field[len(head) :]
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
    kwargs = overlay(kwargs, overrides)
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
    kwargs = overlay(kwargs, overrides)
    paths |= _override_paths(overrides)
    try:
        refused = unsupported(task_config(str(cfg.task.name), str(cfg.robot.name), kwargs))
    except (TypeError, ValueError) as e:
        raise config_error(e, env_id(cfg), kwargs, paths) from e
    if refused:  # named as typed: the config key and its value (true, not True)
        named = {key: f"{paths.get(key, key)}={json.dumps(_at(kwargs, key), default=str)}" for key in refused}
        raise ConfigError("; ".join(f"{named[key]}: backend=isaaclab does not run it: {why}"
                                    for key, why in refused.items()))  # fmt: skip


def _at(kwargs: dict[str, Any], dotted: str) -> Any:
    """``kwargs``' value at ``dotted`` (a section's field: ``collision.projection``); None where it is not set."""
    node: Any = kwargs
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def make_vector_env(cfg: DictConfig, num_envs: int, **overrides: Any) -> gym.vector.VectorEnv:
    kwargs, paths = _kwargs_and_paths(cfg)
    kwargs = overlay(kwargs, overrides)
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
