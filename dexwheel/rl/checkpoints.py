"""Checkpoints written atomically (temporary file, then rename), with clear errors when one is bad.

An SB3 checkpoint is the model zip plus, when observations are normalised, the ``VecNormalize``
statistics next to it (``<name>.zip`` and ``<name>.vecnormalize.pkl``), which record the SHA-256 of the zip
they were saved with: a pair from two saves (a save interrupted between its two renames) is refused on
reading, and so are statistics missing where the run normalises observations. An rsl_rl checkpoint is the runner's
``torch.save`` dict (``<name>.pt``: models with their observation normalisers, optimiser, iteration, and
``infos["num_timesteps"]``).

Both are zip archives. An SB3 zip is checked by its entries' CRC32s. An rsl_rl ``.pt`` carries the SHA-256
of its own bytes in the archive's comment (``dexwheel-sha256:<64 hex>``, the zip format's end-of-archive
comment, which torch and any zip reader skip), written with the file in one atomic rename: every byte of the
file is covered (the archive up to the comment by the digest, the comment by its fixed layout), and a
checkpoint whose bytes changed is refused, naming the file, before anything reads it. A ``.pt`` without one
(saved before dexwheel wrote them, or by rsl_rl itself) is checked by its entries' CRC32s, which torch
writes but does not verify on loading, and used with one warning on stderr (docs/reference/training.md).
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import re
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:  # stable-baselines3 loads for SB3 runs only (the Isaac Lab venv has none)
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.vec_env import VecNormalize

from dexwheel.atomic import atomic_open
from dexwheel.run_folders import parent_of_runs

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
    """Save ``model`` (and the normalisation statistics, tied to the zip by its SHA-256) so that no file is
    ever half-written."""
    path = Path(path).with_suffix(".zip")
    buffer = io.BytesIO()
    model.save(buffer)
    archive = buffer.getvalue()
    with atomic_open(path) as f:
        f.write(archive)
    if vecnormalize is not None:
        with atomic_open(stats_path(path)) as f:
            pickle.dump({"vecnormalize": vecnormalize, "model_sha256": hashlib.sha256(archive).hexdigest()}, f)
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


def saved_step(checkpoint: Path) -> int | None:
    """The env-step count a checkpoint was saved at: a periodic one's from its name, else read from the file
    (rsl_rl: ``infos["num_timesteps"]``; SB3: the zip's ``data``); None where the file does not say."""
    checkpoint = Path(checkpoint)
    if m := _STEP_RE.search(checkpoint.name):
        return int(m.group(1))
    if checkpoint.suffix == ".pt":
        steps = (load_rsl(checkpoint).get("infos") or {}).get("num_timesteps")
    else:
        check_checkpoint(checkpoint)
        with zipfile.ZipFile(checkpoint) as z:
            steps = json.loads(z.read("data")).get("num_timesteps")
    return None if steps is None else int(steps)


def latest_checkpoint(run_dir: Path) -> Path:
    """The checkpoint to resume from: the one saved at the most steps, periodic (``step_<n>``) or final
    (``final.zip`` / ``final.pt``), the final one on a tie. By step count, not file time: copies and
    ``touch`` change times, and a resume must never go back to older weights and then save over newer ones."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"train.resume: run folder {run_dir} does not exist")
    candidates = step_checkpoints(run_dir) + [run_dir / CHECKPOINT_DIR / f"final{x}" for x in SUFFIXES]
    existing = [p for p in candidates if p.exists()]
    if not existing:
        raise CheckpointError(
            parent_of_runs("train.resume", run_dir)
            or f"{run_dir}: no checkpoint in {run_dir / CHECKPOINT_DIR} (expected step_*.zip/.pt or final.zip/.pt)"
        )
    return max(existing, key=lambda p: (-1 if (n := saved_step(p)) is None else n, p.name.startswith("final")))


def resolve_checkpoint(run_dir: Path, which: str | Path, algo: str, key: str = "checkpoint") -> Path:
    """The checkpoint ``which`` names in a run of ``algo``: ``final``, ``best`` (the final one when the run was too
    short for a periodic evaluation), ``latest`` (:func:`latest_checkpoint`) or a path. A run without the final or
    best one (interrupted, still training) is refused naming the checkpoints it holds and the ``key=`` value that
    picks one."""
    if which is None or which == "":
        raise CheckpointError(f"{key}: final | best | latest | a path to a checkpoint, got {which!r}")
    if which == "latest":
        return latest_checkpoint(run_dir)
    if which in ("best", "final"):
        suffix = suffix_of(algo)
        folder = Path(run_dir) / CHECKPOINT_DIR
        path = folder / f"{which}{suffix}"
        if which == "best" and not path.exists():  # a run too short for a periodic evaluation
            path = folder / f"final{suffix}"
        if not path.exists() and Path(run_dir).is_dir():
            raise CheckpointError(_missing(key, which, path, folder, suffix))
        return path
    return Path(which)


def _missing(key: str, which: str, path: Path, folder: Path, suffix: str) -> str:
    """Why ``key=which`` names no file, with what the run holds and the option that picks it."""
    held = [p for p in (*step_checkpoints(folder.parent), *(folder / f"{n}{suffix}" for n in ("best", "final")))
            if p.exists()]  # fmt: skip
    said = f"{key}={which}: {path} does not exist"
    if not held:
        return f"{said}, nor does any other checkpoint in {folder} (the run saved none yet)"
    steps = [p for p in held if p.name.startswith("step_")]
    picks = [f"{key}=latest ({steps[-1].name if steps else 'the most steps'})"]
    if which == "final" and (folder / f"best{suffix}").exists():
        picks.append(f"{key}=best")
    picks.append(f"{key}=<one of them>")
    return (f"{said} (an interrupted or unfinished run); {folder} holds {', '.join(p.name for p in held)}: pick one "
            f"with {' or '.join(picks)}")  # fmt: skip


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


def load_vecnormalize(checkpoint: Path, expected: bool) -> VecNormalize | None:
    """The observation statistics saved with an SB3 checkpoint, checked to belong to it; None without them.

    ``expected``: the run normalises observations (its ``train.normalize_obs``), so missing statistics are
    refused rather than read as "no normalisation" (the policy would see raw observations). Statistics saved
    before dexwheel tied them to their zip (a bare ``VecNormalize``) are used as they are."""
    path = stats_path(checkpoint)
    if not path.exists():
        if expected:
            raise CheckpointError(f"{path} is missing: the run normalises observations (train.normalize_obs=true), "
                                  f"and {Path(checkpoint).name} is not usable without its statistics")  # fmt: skip
        return None
    try:
        with open(path, "rb") as f:
            saved = pickle.load(f)
    except Exception as e:  # noqa: BLE001 - any unpickling failure means the same thing to a user
        raise CheckpointError(f"normalisation statistics {path} are corrupted ({e})") from e
    from stable_baselines3.common.vec_env import VecNormalize

    stats, digest = (saved.get("vecnormalize"), saved.get("model_sha256")) if isinstance(saved, dict) else (saved, None)
    if not isinstance(stats, VecNormalize):
        raise CheckpointError(f"{path} does not hold VecNormalize statistics")
    if digest is not None and digest != hashlib.sha256(Path(checkpoint).read_bytes()).hexdigest():
        raise CheckpointError(f"{path} was saved with another {Path(checkpoint).name} (its SHA-256 differs): a save "
                              "interrupted between the two files, or files mixed from two saves; use another "
                              "checkpoint")  # fmt: skip
    return stats


# -- rsl_rl checkpoints: the SHA-256 in the zip comment ----------------------------------------------------
_EOCD = b"PK\x05\x06"  # the zip end-of-central-directory record: 22 bytes, the last 2 the comment's length
_EOCD_SIZE = 22
_SHA_TAG = b"dexwheel-sha256:"
_SHA_COMMENT = len(_SHA_TAG) + 64
#: legacy checkpoints (no SHA-256) already warned about in this process: one warning per file
_warned: set[Path] = set()


def seal(archive: bytes) -> bytes:
    """``archive`` (a zip without a comment, as ``torch.save`` writes) with its SHA-256 as the zip comment."""
    if archive[-_EOCD_SIZE : -_EOCD_SIZE + 4] != _EOCD or archive[-2:] != b"\0\0":
        raise ValueError("seal: not a zip archive without a comment (torch.save's format)")
    comment = _SHA_TAG + hashlib.sha256(archive).hexdigest().encode("ascii")
    return archive[:-2] + len(comment).to_bytes(2, "little") + comment


def verify_rsl_bytes(path: Path, data: bytes) -> bool:
    """Check an rsl_rl checkpoint's bytes: True when its SHA-256 matches, False for a legacy file (no SHA-256)
    whose zip CRC32s match; :class:`CheckpointError` naming the file otherwise."""
    end = len(data) - _SHA_COMMENT
    sealed = (
        end >= _EOCD_SIZE
        and data[end - _EOCD_SIZE : end - _EOCD_SIZE + 4] == _EOCD
        and data[end - 2 : end] == _SHA_COMMENT.to_bytes(2, "little")
        and data[end:].startswith(_SHA_TAG)
    )
    if sealed:
        recorded = data[end + len(_SHA_TAG) :]
        actual = hashlib.sha256(data[: end - 2] + b"\0\0").hexdigest().encode("ascii")
        if recorded != actual:
            raise CheckpointError(
                f"checkpoint {path} does not match the SHA-256 it was saved with: its bytes changed after it was "
                f"written; restore it from a copy or use another checkpoint"
            )
        return True
    if len(data) < _EOCD_SIZE or data[-_EOCD_SIZE : -_EOCD_SIZE + 4] != _EOCD or data[-2:] != b"\0\0":
        raise CheckpointError(
            f"checkpoint {path} is corrupted or not an rsl_rl checkpoint (its zip end record is missing or damaged)"
        )
    try:  # legacy: torch writes each entry's CRC32 but does not check them when loading
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            bad = z.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path} is corrupted or not an rsl_rl checkpoint ({e})") from e
    if bad is not None:
        raise CheckpointError(f"checkpoint {path} is corrupted: its entry {bad} does not match its CRC32")
    return False


def save_rsl(saved: dict[str, Any], path: Path) -> Path:
    """Write an rsl_rl runner's state dict (``OnPolicyRunner.save``'s content) atomically, its SHA-256 inside."""
    buffer = io.BytesIO()
    torch.save(saved, buffer)
    path = Path(path).with_suffix(".pt")
    with atomic_open(path) as f:
        f.write(seal(buffer.getvalue()))
    return path


def load_rsl(path: Path) -> dict[str, Any]:
    """An rsl_rl checkpoint's dict (tensors and plain values only), its bytes checked first (:func:`verify_rsl_bytes`),
    or :class:`CheckpointError` naming the file."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise CheckpointError(f"checkpoint {path} cannot be read ({e.strerror or e})") from e
    if not verify_rsl_bytes(path, data) and Path(path).resolve() not in _warned:
        _warned.add(Path(path).resolve())
        print(
            f"warning: checkpoint {path} has no SHA-256 (saved before dexwheel wrote them, or by another program); "
            f"its zip CRC32s match, so it is used",
            file=sys.stderr,
        )
    try:
        saved = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - a truncated file and a foreign one mean the same to a user
        raise CheckpointError(f"checkpoint {path} is corrupted or not an rsl_rl checkpoint ({e})") from e
    missing = [k for k in RSL_KEYS if not isinstance(saved, dict) or k not in saved]
    if missing:
        raise CheckpointError(f"checkpoint {path} is not an rsl_rl runner checkpoint (missing {missing})")
    return saved
