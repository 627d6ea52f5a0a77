"""Checkpoints written atomically (temporary file, then rename), with clear errors when one is bad.

An SB3 checkpoint is the model zip plus, when observations are normalised, the ``VecNormalize``
statistics next to it (``<name>.zip`` and ``<name>.vecnormalize.pkl``). An rsl_rl checkpoint is the runner's
``torch.save`` dict (``<name>.pt``: models with their observation normalisers, optimiser, iteration, and
``infos["num_timesteps"]``).
"""

from __future__ import annotations

import pickle
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:  # stable-baselines3 loads for SB3 runs only (the Isaac Lab venv has none)
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.vec_env import VecNormalize

from dexwheel.atomic import atomic_open

CHECKPOINT_DIR = "checkpoints"
SUFFIXES = (".zip", ".pt")  # SB3, rsl_rl
_STEP_RE = re.compile(r"step_(\d+)\.(zip|pt)$")
#: what an rsl_rl runner's checkpoint holds (``OnPolicyRunner.save``)
RSL_KEYS = ("actor_state_dict", "critic_state_dict", "optimizer_state_dict", "iter")


def suffix_of(algo: str) -> str:
    return ".pt" if algo.startswith("rsl_") else ".zip"


class CheckpointError(RuntimeError):
    """A checkpoint or run folder that cannot be used, with the path and the reason."""


def save_checkpoint(model: BaseAlgorithm, path: Path, vecnormalize: VecNormalize | None) -> Path:
    """Save ``model`` (and the normalisation statistics) so that no file is ever half-written."""
    path = Path(path).with_suffix(".zip")
    if vecnormalize is not None:
        with atomic_open(stats_path(path)) as f:
            pickle.dump(vecnormalize, f)
    with atomic_open(path) as f:
        model.save(f)
    return path


def stats_path(checkpoint: Path) -> Path:
    return Path(checkpoint).with_suffix(".vecnormalize.pkl")


def step_checkpoints(run_dir: Path) -> list[Path]:
    """Periodic checkpoints of a run, oldest first."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    found = [(int(m.group(1)), p) for p in folder.glob("step_*") if (m := _STEP_RE.search(p.name))]
    return [p for _, p in sorted(found)]


def prune(run_dir: Path, keep: int) -> None:
    """Keep the ``keep`` newest periodic checkpoints (the best and the final ones are never pruned)."""
    for old in step_checkpoints(run_dir)[:-keep] if keep > 0 else []:
        old.unlink(missing_ok=True)
        stats_path(old).unlink(missing_ok=True)


def latest_checkpoint(run_dir: Path) -> Path:
    """The checkpoint to resume from: the newest periodic one, else ``final.zip`` / ``final.pt``."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"train.resume: run folder {run_dir} does not exist")
    candidates = step_checkpoints(run_dir) + [run_dir / CHECKPOINT_DIR / f"final{x}" for x in SUFFIXES]
    existing = [p for p in candidates if p.exists()]
    if not existing:
        raise CheckpointError(
            f"{run_dir}: no checkpoint in {run_dir / CHECKPOINT_DIR} (expected step_*.zip/.pt or final.zip/.pt)"
        )
    return max(existing, key=lambda p: p.stat().st_mtime_ns)


def check_checkpoint(path: Path) -> None:
    """Raise :class:`CheckpointError` naming the file when it is missing or not a readable SB3 zip or
    rsl_rl checkpoint."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if path.suffix == ".pt":
        load_rsl(path)
        return
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            bad = z.testzip()
    except (zipfile.BadZipFile, OSError) as e:
        raise CheckpointError(f"checkpoint {path} is corrupted or not an SB3 model zip ({e})") from e
    if bad is not None or "data" not in names or "policy.pth" not in names:
        raise CheckpointError(f"checkpoint {path} is corrupted or incomplete (entries: {sorted(names)})")


def load_vecnormalize(checkpoint: Path) -> VecNormalize | None:
    path = stats_path(checkpoint)
    if not path.exists():
        return None
    try:
        with open(path, "rb") as f:
            stats = pickle.load(f)
    except Exception as e:  # noqa: BLE001 - any unpickling failure means the same thing to a user
        raise CheckpointError(f"normalisation statistics {path} are corrupted ({e})") from e
    from stable_baselines3.common.vec_env import VecNormalize

    if not isinstance(stats, VecNormalize):
        raise CheckpointError(f"{path} does not hold VecNormalize statistics")
    return stats


def save_rsl(saved: dict[str, Any], path: Path) -> Path:
    """Write an rsl_rl runner's state dict (``OnPolicyRunner.save``'s content) atomically."""
    with atomic_open(Path(path).with_suffix(".pt")) as f:
        torch.save(saved, f)
    return Path(path).with_suffix(".pt")


def load_rsl(path: Path) -> dict[str, Any]:
    """An rsl_rl checkpoint's dict (tensors and plain values only), or :class:`CheckpointError` naming the file."""
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - a truncated file and a foreign one mean the same to a user
        raise CheckpointError(f"checkpoint {path} is corrupted or not an rsl_rl checkpoint ({e})") from e
    missing = [k for k in RSL_KEYS if not isinstance(saved, dict) or k not in saved]
    if missing:
        raise CheckpointError(f"checkpoint {path} is not an rsl_rl runner checkpoint (missing {missing})")
    return saved
