"""Every env default of the Hydra tree comes from the env's config dataclass, and every task option from the task
registry (:mod:`dexwheel.tasks.registry`): one source each.

The config groups (``task``, ``drive``, ``action``, ``collision``, ``composer``) each hold some of an env
family's fields (:data:`GROUP_FIELDS`; the ``task`` group the rest). Each group option pulls its fields'
defaults from a node registered here (``env_defaults/<family>_<group>``, built from
:class:`~dexwheel.tasks.hand_pose.config.G20HandConfig` and :class:`~dexwheel.tasks.velocity.config.WheelLegEnvCfg`)
and states only what it selects (``drive: pd``). Each registered task is a ``task`` option (``task=<name>``): its
fields under ``task.<name>.*`` (``env_defaults/<name>_task``, from its config factory), its family, its default
budget (``task.train.*``) and the group options it selects for itself (the object tasks: ``drive: pd``). So every
field can be overridden by its path (``task.hand_pose.commands...``, ``task.velocity.rewards...``), and
``gymnasium.make`` and ``train.py`` build the same env by default. Importing :mod:`dexwheel.rl` registers the nodes
(a task a user registers later: :func:`register_task_option`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hydra.core.config_store import ConfigStore

from dexwheel.tasks.hand_pose.config import G20HandConfig
from dexwheel.tasks.registry import TaskRecord, derive_from_each
from dexwheel.tasks.terms import func_path
from dexwheel.tasks.velocity.config import WheelLegEnvCfg

#: Per env family, the fields each config group holds, a section's field by its dotted name (the ``task`` group
#: holds every other field): every task of a family is configured by the same keys.
GROUP_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "hand": {
        "drive": ("drive",),
        "action": ("actions.kind", "actions.delay_steps"),
        "collision": ("collision",),
        "composer": ("composer",),
    },
    "wheel_leg": {
        "action": ("actions", "stance", "knee_kp", "knee_kd", "wheel_kd"),
        "composer": ("composer",),
    },
}
#: Fields that are no part of a task config: the robot (the ``robot`` group and the env id select it).
NOT_CONFIG: dict[str, tuple[str, ...]] = {
    "hand": ("hand",),
    "wheel_leg": ("robot",),
}
CONFIGS = {"hand": G20HandConfig, "wheel_leg": WheelLegEnvCfg}


def _plain(value: Any) -> Any:
    """Dataclasses, dicts and tuples as the dicts and lists a Hydra node holds (a term's function as its
    import path)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(func_path(v) if f.name == "func" else v) for f in dataclasses.fields(value)
                for v in [getattr(value, f.name)]}  # fmt: skip
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _pop(node: dict[str, Any], dotted: str) -> Any:
    """Remove and return ``node``'s value at ``dotted`` (``actions.kind``)."""
    *parents, last = dotted.split(".")
    for part in parents:
        node = node[part]
    return node.pop(last)


def defaults(family: str, cfg: Any = None) -> dict[str, dict[str, Any]]:
    """The family's default field values (``cfg``'s, else the config class's) by config group (``task``
    holding the rest)."""
    rest = _plain(CONFIGS[family]() if cfg is None else cfg)
    groups: dict[str, dict[str, Any]] = {}
    for group, paths in GROUP_FIELDS[family].items():
        node = groups[group] = {}
        for dotted in paths:
            *parents, last = dotted.split(".")
            into = node
            for part in parents:
                into = into.setdefault(part, {})
            into[last] = _pop(rest, dotted)
    for name in NOT_CONFIG[family]:
        rest.pop(name)
    groups["task"] = rest
    return groups


def task_fields(record: TaskRecord) -> dict[str, Any]:
    """The task's own fields (its ``task.<name>`` section) from its config factory, for its first robot."""
    return defaults(record.family, record.default_config(record.robots[0]))["task"]


def register_task_option(record: TaskRecord) -> None:
    """The Hydra option ``task=<name>`` of a registered task and its env defaults (``env_defaults/<name>_task``)."""
    store = ConfigStore.instance()
    store.store(group="env_defaults", name=f"{record.name}_task", node=task_fields(record))
    chosen = [{f"override /{group}@_global_.{group}": option} for group, option in record.groups.items()]
    node = {"defaults": [f"/env_defaults/{record.name}_task@{record.name}", *chosen, "_self_"],
            "name": record.name, "family": record.family, "train": dataclasses.asdict(record.train)}  # fmt: skip
    store.store(group="task", name=record.name, node=node, package="task")


def register() -> None:
    """Register every ``env_defaults/<family>_<group>`` node and every registered task's option (idempotent)."""
    store = ConfigStore.instance()
    for family in CONFIGS:
        for group, node in defaults(family).items():
            if group != "task":
                store.store(group="env_defaults", name=f"{family}_{group}", node=node)
    derive_from_each(register_task_option)  # and a task a user registers later


register()
