"""Where training runs go and how they are found: a run folder's name says what a user compares runs by.

``outputs/<name>/<time>/`` (``configs/train.yaml``'s ``hydra.run.dir``; a ``-m`` sweep's jobs under
``outputs/multirun/<time>/<job>_<name>/``), where ``<name>`` is ``run_name=`` when typed, else
:func:`run_folder_name`: the robot, the task, the learner, the backend, each config group chosen otherwise than the
robot's defaults (``composer-wheels_only``, ``experiment-rough_climb``) and the seed, as Isaac Lab and mjlab name
their runs by task and experiment. Hydra resolves the name through the ``dexwheel_run_folder`` resolver
(:func:`register`, from ``Hydra``'s ``runtime.choices``). :func:`runs_under` lists the runs a parent folder holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from dexwheel.overrides import CONFIG_DIR

RESOLVER = "dexwheel_run_folder"
#: named in every run folder's name, in this order (the robot first)
ALWAYS = ("robot", "task", "algo", "backend")
#: named when chosen otherwise than the robot's (or configs/train.yaml's) default, in this order
CHANGED = ("drive", "action", "composer", "collision", "experiment")


def _defaults(path: Path) -> dict[str, str]:
    """The group options a config file's ``defaults`` list selects (``/task: rough``, ``override /algo: x``)."""
    out = {}
    for entry in OmegaConf.to_container(OmegaConf.load(path)).get("defaults", []):  # type: ignore[union-attr]
        if isinstance(entry, dict):
            for key, option in entry.items():
                out[key.split()[-1].strip("/")] = str(option)
    return out


def run_folder_name(choices: Mapping[str, Any], seed: Any) -> str:
    """``<robot>_<task>_<algo>_<backend>[_<group>-<option>...]_seed<seed>`` from Hydra's group choices."""
    robot = str(choices["robot"])
    defaults = _defaults(CONFIG_DIR / "train.yaml") | _defaults(CONFIG_DIR / "robot" / f"{robot}.yaml")
    named = [str(choices[g]) for g in ALWAYS if choices.get(g) is not None]
    changed = [f"{g}-{choices[g]}" for g in CHANGED if choices.get(g) is not None and choices[g] != defaults.get(g)]
    return "_".join([*named, *changed, f"seed{seed}"])


def _resolve(run_name: Any, choices: Any, seed: Any) -> str:
    return str(run_name) if run_name not in (None, "") else run_folder_name(choices, seed)


def register() -> None:
    """The resolver ``${dexwheel_run_folder:${run_name},${hydra:runtime.choices},${seed}}`` (idempotent)."""
    if not OmegaConf.has_resolver(RESOLVER):
        OmegaConf.register_new_resolver(RESOLVER, _resolve)


def runs_under(folder: Path, limit: int = 1000) -> list[Path]:
    """The training runs (folders with a ``config.yaml`` and ``checkpoints/``) under ``folder``, newest first."""
    found = [p.parent for p in Path(folder).rglob("config.yaml") if (p.parent / "checkpoints").is_dir()]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)[:limit]


def parent_of_runs(what: str, folder: Path, shown: int = 5) -> str | None:
    """``<what>=<folder>: a folder of N runs, not a run; choose one: ...`` (the newest first) when ``folder`` holds
    training runs but is none itself; None otherwise."""
    folder = Path(folder)
    if (folder / "config.yaml").exists() or not folder.is_dir():
        return None
    runs = runs_under(folder)
    if not runs:
        return None
    listed = ", ".join(f"{what}={run}" for run in runs[:shown])
    more = f", and {len(runs) - shown} older" if len(runs) > shown else ""
    return f"{what}={folder}: a folder of {len(runs)} run{'s' * (len(runs) > 1)}, not a run; choose one (newest first): {listed}{more}"
