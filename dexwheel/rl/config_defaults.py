"""Every env default of the Hydra tree comes from the env's config dataclass: one source.

The config groups (``task``, ``drive``, ``action``, ``collision``, ``composer``) each hold some of an env
family's fields (:data:`GROUP_FIELDS`; the ``task`` group the rest). Each group option pulls its fields'
defaults from a node registered here (``env_defaults/<family>_<group>``, built from
:class:`~dexwheel.tasks.hand_pose.config.G20HandConfig` and :class:`~dexwheel.tasks.velocity.config.WheelLegEnvCfg`)
and states only what it selects (``drive: pd``). So every field can be overridden by its path
(``task.hand_pose.commands...``, ``task.velocity.rewards...``), and ``gymnasium.make`` and ``train.py`` build the same env by default.
Importing :mod:`dexwheel.rl` registers the nodes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hydra.core.config_store import ConfigStore

from dexwheel.tasks.hand_pose.config import G20HandConfig
from dexwheel.tasks.in_hand.config import reorient_cfg, rotate_cfg, rotate_z_cfg
from dexwheel.tasks.terms import func_path
from dexwheel.tasks.velocity.config import WheelLegEnvCfg
from dexwheel.tasks.velocity.rough import rough_cfg

#: Per env family, the fields each config group holds (the ``task`` group holds every other field).
GROUP_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "hand": {
        "drive": ("drive", "slew_rad_s", "track_test"),
        "action": ("action", "action_delay_steps"),
        "collision": ("collision_projection", "penetration_tol", "projection_iters", "projection_group_free",
                      "contact_excludes"),
        "composer": ("composer_layers", "hold_joints", "hold_pose"),
    },
    "wheel_leg": {
        "action": ("actions", "stance", "knee_kp", "knee_kd", "wheel_kd"),
        "composer": ("composer",),
    },
}  # fmt: skip
#: Fields that are no part of a task config: the robot (the ``robot`` group and the env id select it), and
#: how an env is run or shown (rendering, threads), which the scripts set.
NOT_CONFIG: dict[str, tuple[str, ...]] = {
    "hand": ("hand", "render_mode", "width", "height", "default_camera_config", "num_threads"),
    "wheel_leg": ("robot",),
}
CONFIGS = {"hand": G20HandConfig, "wheel_leg": WheelLegEnvCfg}
#: Task variants of a family: their own ``task`` node (``env_defaults/<variant>_task``: ``task=velocity_rough`` pulls
#: ``wheel_leg_rough_task``), the other groups' nodes shared with the family's default task.
VARIANTS = {"wheel_leg_rough": ("wheel_leg", rough_cfg)}
#: Tasks of a family with a config class of their own (the in-hand tasks, :class:`~dexwheel.tasks.in_hand.config.
#: InHandCfg`): their ``task`` node holds their fields but the sections the family's groups give by the pose task's
#: names (``drive: pd``, ``action: delta``, ``composer_layers``, ``collision_projection``: the config's RENAMES).
OWN_CONFIGS = {"in_hand_rotate": rotate_cfg, "in_hand_rotate_z": rotate_z_cfg, "in_hand_reorient": reorient_cfg}
#: What the family's groups set for them, and what is no part of a task config.
OWN_CONFIG_SKIP = ("drive", "composer", "collision", "hand", "num_threads", "render_mode", "width", "height")


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


def defaults(family: str, cfg: Any = None) -> dict[str, dict[str, Any]]:
    """The family's default field values (``cfg``'s, else the config class's) by config group (``task``
    holding the rest)."""
    fields = _plain(CONFIGS[family]() if cfg is None else cfg)
    groups = {group: {k: fields[k] for k in keys} for group, keys in GROUP_FIELDS[family].items()}
    owned = {k for keys in GROUP_FIELDS[family].values() for k in keys} | set(NOT_CONFIG[family])
    groups["task"] = {k: v for k, v in fields.items() if k not in owned}
    return groups


def register() -> None:
    """Register every ``env_defaults/<family>_<group>`` node (idempotent)."""
    store = ConfigStore.instance()
    for family in CONFIGS:
        for group, node in defaults(family).items():
            store.store(group="env_defaults", name=f"{family}_{group}", node=node)
    for variant, (family, make) in VARIANTS.items():
        store.store(group="env_defaults", name=f"{variant}_task", node=defaults(family, make())["task"])
    for task, make in OWN_CONFIGS.items():
        fields = {k: v for k, v in _plain(make()).items() if k not in OWN_CONFIG_SKIP}
        fields["actions"] = {k: v for k, v in fields["actions"].items() if k not in ("kind", "delay_steps")}
        store.store(group="env_defaults", name=f"{task}_task", node=fields)


register()
