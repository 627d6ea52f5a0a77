"""Atomic file writes: a temporary file in the same folder, fsync, then rename.

Whatever a user saves (assets, checkpoints, configs, metrics, plots) is either the old file or the
new one, never half-written, even when the process is interrupted.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def _umask_mode() -> int:
    """The mode a plainly created file would get (mkstemp's own is 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file object whose content replaces ``path`` only when the block exits cleanly."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path (same folder, same suffix) for tools that want a file name, renamed on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8)."""
    if not isinstance(data, (str, bytes)):
        raise TypeError(f"write_atomic: data must be str or bytes, got {type(data).__name__}")
    with atomic_open(path) as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def write_new(path: str | os.PathLike, data: str | bytes) -> None:
    """Create ``path`` holding ``data``, complete, only if no file of that name exists: FileExistsError
    otherwise, also when another process creates it at the same moment (the content is written to a
    temporary file first, then hard-linked to ``path``, which never replaces a file)."""
    if not isinstance(data, (str, bytes)):
        raise TypeError(f"write_new: data must be str or bytes, got {type(data).__name__}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _umask_mode())
        os.link(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def move_new(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Rename ``src`` to ``dst`` only if ``dst`` does not exist (FileExistsError otherwise, ``src`` kept)."""
    os.link(src, dst)
    os.unlink(src)
