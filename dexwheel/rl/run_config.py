"""A run's own config as the source of truth, and what a command line may change of it.

A run folder's ``config.yaml`` holds every value the run was trained with (defaults included).
:func:`load_run_config` reads it back complete: a key the file lacks (a run saved before the key existed)
is filled with today's default and named in a warning with the value used, never filled silently.

A function's import path that has moved since the run was saved (a term's ``func``) is read as today's
(:mod:`dexwheel.rl.saved_paths`, the one table of moved paths) and named in a warning too.

``evaluate.py run=<run>`` and ``train.py train.resume=<run>`` start from that config:
:func:`selection_overrides` composes Hydra's tree with the run's own robot, task, drive, ... (so that
``task.hand_pose.goal_mode=random`` needs no ``robot=g20_left``), and each script then applies exactly the
overrides the user typed (:func:`parse_overrides`), or refuses one naming it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from dexwheel.overrides import CONFIG_DIR
from dexwheel.renames import translate_overrides, translate_saved
from dexwheel.rl.saved_paths import translate
from dexwheel.rl.schema import ConfigError
from dexwheel.run_folders import parent_of_runs

CONFIG_FILE = "config.yaml"
#: the config groups a run selects (``robot`` by its name, the others by their node's ``name``)
GROUPS = ("robot", "task", "drive", "action", "composer", "collision", "algo", "backend")
#: the groups that define the env (an evaluation may change them)
ENV_GROUPS = ("task", "drive", "action", "composer", "collision")
#: tables of terms (``func`` + parameters): a run's table is complete as saved, never merged with today's
TERM_KEYS = ("func",)
#: keys that name a run and change nothing it does (its folder's name): runs that differ only there are the same
LABELS = ("run_name",)
#: the robot families; an env group holds one section of env keyword arguments per family (``drive.hand``), the
#: task group one under the task's name (``task.hand_pose``: :func:`env_section`)
FAMILIES = ("hand", "wheel_leg")
#: the groups whose ``<group>.<family>`` section becomes the env's keyword arguments
KWARG_GROUPS = ("robot", "task", "drive", "action", "composer", "collision")


@dataclass(frozen=True)
class Override:
    """One command-line override: ``line`` as typed, ``key`` its dotted key or group, whether it selects a
    config group option (``drive=pd``) and whether it deletes (``~key``)."""

    line: str
    key: str
    group: bool
    delete: bool

    @property
    def root(self) -> str:
        return self.key.split(".")[0].split("/")[0]

    @property
    def hydra(self) -> bool:
        return self.root == "hydra"


def env_id(cfg: DictConfig) -> str:
    """The Gymnasium id the config builds: the task's for the robot (its registry record's, :mod:`dexwheel.tasks.
    registry`); a task that does not run on the robot is refused naming the robots it runs on."""
    from dexwheel.tasks.registry import TaskRegistryError
    from dexwheel.tasks.registry import env_id as registered_id

    try:
        return registered_id(str(cfg.task.name), str(cfg.robot.name))
    except TaskRegistryError as e:
        raise ConfigError(str(e)) from None


def env_section(cfg: DictConfig, group: str) -> str:
    """The section of ``group`` that holds the env's keyword arguments: the task's own name for the task group
    (``task.hand_pose.*``: one name per task), the robot's family for the others (``drive.hand.*``)."""
    return str(cfg.task.name) if group == "task" else str(cfg.robot.family)


def parse_overrides(lines: list[str]) -> list[Override]:
    """The overrides a user typed (Hydra's syntax), classified."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import OverrideType

    out = []
    for o in OverridesParser.create().parse_overrides(list(lines)):
        key = o.key_or_group
        group = "." not in key and (key in GROUPS or (CONFIG_DIR / key).is_dir())  # task: options from the registry
        out.append(Override(o.input_line or key, key, group, o.type == OverrideType.DEL))
    return out


_ABSENT = object()


def check_overrides_read(config: str, cfg: DictConfig, overrides: list[Override], open_roots: tuple[str, ...]) -> None:
    """Refuse, naming it, a typed override that nothing would read (it would be recorded in the run's config
    and silently have no effect): a key of another robot family's env section (``drive.hand.*`` for a
    wheel-leg robot), or a key the config ``configs/<config>.yaml`` (with the typed group selections) lacks
    (added with ``+``/``++``) outside the places whose readers check every key they get: this robot family's
    env sections (the env refuses a keyword it does not take) and ``open_roots`` (the script's own
    schema-checked settings, e.g. ``train``, ``algo``); and any ``~key`` deletion, since the reader's own default
    would run unrecorded."""
    family = str(cfg.robot.family)
    base = compose(config, [o.line for o in overrides if o.group and not o.delete])
    for o in overrides:
        if o.delete and not o.hydra:  # its reader would fall back on a default of its own, which no file records
            raise ConfigError(f"{o.line}: a config key cannot be deleted (what reads it would use a default the "
                              f"run's {CONFIG_FILE} does not record); type its value instead, or {o.key}=null to "
                              "remove a term from its table")  # fmt: skip
        if o.hydra or o.group:
            continue
        parts = o.key.split(".")
        if parts[0] in KWARG_GROUPS and len(parts) > 1 and parts[1] in FAMILIES and parts[1] != family:
            raise ConfigError(f"{o.line}: {parts[0]}.{parts[1]}.* applies to {parts[1]} robots; this one "
                              f"({cfg.robot.name}) reads {parts[0]}.{family}.*")  # fmt: skip
        own = parts[0] in KWARG_GROUPS and len(parts) > 2 and parts[1] == env_section(cfg, parts[0])
        added = OmegaConf.select(base, o.key, default=_ABSENT, throw_on_missing=False) is _ABSENT
        if added and not (own or parts[0] in open_roots):
            where = ", ".join([f"task.{cfg.task.name}.*", f"<group>.{family}.*", *(f"{r}.*" for r in open_roots)])
            raise ConfigError(f"{o.line}: {o.key} is not a key of the config, and nothing would read it; keys "
                              f"may be added under {where} (a typo? drop the + to have the nearest key named)")  # fmt: skip


def compose(name: str, overrides: list[str]) -> DictConfig:
    """Hydra's composition of ``configs/<name>.yaml`` (inside a Hydra app too); a failure is a one-line
    ConfigError naming the override and the nearest valid name (:func:`dexwheel.overrides.explain`)."""
    from dexwheel.overrides import explain, hydra_compose

    overrides, _ = translate_overrides(list(overrides))  # old task names and keys (hydra_app warns of them)
    try:
        return hydra_compose(name, overrides)
    except Exception as e:  # noqa: BLE001 - Hydra's composition errors, as one line
        raise ConfigError(explain(name, overrides) or " ".join(str(e).split())) from None


def _option(saved: Any, group: str) -> str | None:
    node = saved.get(group) if isinstance(saved, dict) else None
    if not isinstance(node, dict) or "name" not in node:
        return None
    name = node["name"]
    return "off" if name is False else str(name)  # YAML 1.1 reads a bare `off` as false


def selections(saved: dict[str, Any], groups: tuple[str, ...] = GROUPS) -> dict[str, str]:
    """The group options a saved config was composed of (``{"robot": "g20_left", "drive": "hard_write", ...}``)."""
    return {g: name for g in groups if (name := _option(saved, g)) is not None}


#: The env keywords that are term tables (changes by term name), not config sections.
TERM_TABLES = ("observations", "rewards", "terminations", "events")


def is_term_table(node: Any) -> bool:
    return isinstance(node, dict) and bool(node) and all(isinstance(v, dict) and "func" in v for v in node.values())


def missing_keys(saved: Any, fresh: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """``(key, today's value)`` for each key of ``fresh`` that ``saved`` lacks (a whole missing subtree once).
    A term table present in ``saved`` is taken as saved (a term it lacks was left out on purpose)."""
    out: list[tuple[str, Any]] = []
    for key, value in fresh.items():
        path = f"{prefix}{key}"
        if key not in saved:
            out.append((path, value))
        elif isinstance(value, dict) and isinstance(saved[key], dict) and not is_term_table(saved[key]):
            out += missing_keys(saved[key], value, f"{path}.")
    return out


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 100 else text[:97] + "..."


def load_run_config(run_dir: str | Path, what: str = "run") -> tuple[DictConfig, list[str]]:
    """A run's ``config.yaml``, complete, and a warning for each import path in it that has moved (read as today's)
    and each key it lacked (filled with today's default).

    ``what`` names the setting that pointed at the run (``run``, ``train.resume``) in errors.
    """
    from dexwheel.rl.checkpoints import CheckpointError

    path = Path(run_dir) / CONFIG_FILE
    if not path.exists():
        raise CheckpointError(parent_of_runs(what, Path(run_dir))
                              or f"{what}={run_dir}: no {CONFIG_FILE} there; is it a training run folder?")  # fmt: skip
    try:
        saved = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    except Exception as e:  # noqa: BLE001 - YAML, encoding and interpolation errors mean the same to a user
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"{what}={run_dir}: {path} cannot be read as a run's config ({first}); "
                          "restore it from a copy") from None  # fmt: skip
    if not isinstance(saved, dict) or not isinstance(saved.get("robot"), dict) or "name" not in saved["robot"]:
        raise ConfigError(f"{what}={run_dir}: {path} names no robot (robot.name); is it a run's config?")
    warnings = [f"{path}: {key}={old} has moved; using {new}" for key, old, new in translate(saved)]
    warnings += [f"{path}: {note} (renamed; CHANGELOG.md)" for note in translate_saved(saved)]
    chosen = selections(saved)
    try:
        fresh = compose("train", [f"{g}={name}" for g, name in chosen.items()])
    except ConfigError as e:
        raise ConfigError(
            f"{what}={run_dir}: {path} selects {chosen}, which today's configs cannot compose: {e}"
        ) from None
    today = OmegaConf.to_container(fresh, resolve=True)
    cfg = OmegaConf.create(saved)
    for key, value in missing_keys(saved, today):
        set_value(cfg, key, value)
        warnings.append(f"{path} has no {key} (saved before it existed); using today's default {key}={_shown(value)}")
    return cfg, warnings  # type: ignore[return-value]


def run_config(run_dir: Path) -> DictConfig:
    """The resolved config a run was trained with, complete: a key its ``config.yaml`` lacks (saved before the
    key existed) is filled with today's default and named on stderr with the value used."""
    cfg, warnings = load_run_config(run_dir)
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    return cfg


def selection_overrides(args: list[str], key: str, groups: tuple[str, ...] = GROUPS) -> list[str]:
    """``group=option`` for each group of the run ``<key>=<run>`` names in ``args`` that ``args`` does not
    select itself: Hydra then composes the run's own tree. Nothing when there is no such run (the script
    reports that)."""
    runs = [a.split("=", 1)[1] for a in args if a.startswith(f"{key}=")]
    if not runs or not runs[-1] or runs[-1] == "null":
        return []
    path = Path(runs[-1]) / CONFIG_FILE
    try:
        saved = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    except Exception:  # noqa: BLE001 - a missing or broken config is reported by the script itself
        return []
    typed = {a.split("=", 1)[0].lstrip("+~") for a in args if "=" in a}
    return [f"{g}={name}" for g, name in selections(saved, groups).items() if g not in typed]  # type: ignore[arg-type]


def flat(node: Any, prefix: str = "") -> dict[str, Any]:
    """``{"<prefix>.a.b": leaf}``: a node's leaves by their dotted keys (a list or an empty node is one leaf)."""
    if isinstance(node, dict) and node:
        return {k: v for key, sub in node.items() for k, v in flat(sub, f"{prefix}.{key}" if prefix else key).items()}
    return {prefix: node}


def differences(saved: DictConfig, cfg: DictConfig, overrides: list[str]) -> list[str]:
    """``key: run has X, requested Y`` for each value of ``cfg`` (Hydra's composition of the typed ``overrides``)
    that the run's ``saved`` config does not hold (a group of another option is named once, its keys not listed);
    a value nobody typed is named as today's default (``key: run has X, today's default Y``): a run trained before
    a default moved is not today's run."""
    plain, requested = OmegaConf.to_container(saved, resolve=True), OmegaConf.to_container(cfg, resolve=True)
    was, now = selections(plain), selections(requested)  # type: ignore[arg-type]
    other = [g for g in GROUPS if was.get(g) != now.get(g)]
    out = [f"{g}: run has {was.get(g)}, requested {now.get(g)}" for g in other]
    old, new = flat(plain), flat(requested)
    today = flat(OmegaConf.to_container(compose("train", [f"{g}={o}" for g, o in now.items()]), resolve=True))
    typed = tuple(o.key for o in parse_overrides(overrides) if not o.hydra and not o.group)
    defaults = []  # after the typed keys' differences: those are what the user asked about
    for key in sorted(old.keys() | new.keys()):
        if key.split(".")[0] in other or old.get(key, "<unset>") == new.get(key, "<unset>") or key in LABELS:
            continue
        # typed, or set through a typed key (train.total_timesteps is task.train.total_timesteps)
        asked = key in typed or key.startswith(tuple(f"{t}." for t in typed)) or new.get(key) != today.get(key)
        label = "requested" if asked else "today's default"
        (out if asked else defaults).append(
            f"{key}: run has {old.get(key, '<unset>')}, {label} {new.get(key, '<unset>')}"
        )
    return out + defaults


def value_of(cfg: DictConfig, key: str) -> Any:
    """A composed config's value at ``key``, resolved (a node as plain containers)."""
    value = OmegaConf.select(cfg, key, throw_on_missing=False)
    return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value


def set_value(cfg: DictConfig, key: str, value: Any) -> None:
    OmegaConf.update(cfg, key, value, merge=False, force_add=True)
