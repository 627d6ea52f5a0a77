"""The array library the action path runs on: numpy (the MuJoCo envs) or torch (the Isaac Lab tasks).

The composer, the resolver, their buffers and frames are one implementation over either library (array-API
style: the namespace ``xp`` is a module, taken from an array or passed in). Each object keeps its float32
``(5, dof)`` blocks in one namespace and, for torch, on one device; the copies the composer and the resolver
compile are slice copies or one gather plus one scatter in that library. On numpy every call is the one the
numpy-only code made, so the MuJoCo envs' numbers do not change.

torch is never imported here unless a torch tensor is passed (the core code needs only numpy).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np


def namespace(x: Any) -> ModuleType:
    """``numpy`` for a numpy array, ``torch`` for a torch tensor; TypeError for anything else."""
    if isinstance(x, np.ndarray):
        return np
    if type(x).__module__.split(".", 1)[0] == "torch":
        import torch

        if isinstance(x, torch.Tensor):
            return torch
    raise TypeError(f"expected a numpy array or a torch tensor, got {type(x).__name__}")


def resolve(xp: ModuleType | None) -> ModuleType:
    """``xp`` or numpy for None; only numpy and torch are supported."""
    if xp is None or xp is np:
        return np
    if getattr(xp, "__name__", None) != "torch":
        raise TypeError(f"xp: the action path runs on numpy or torch, got {xp!r}")
    return xp


def name(xp: ModuleType) -> str:
    return "numpy" if xp is np else "torch"


def device_of(a: Any) -> Any:
    """A torch tensor's device; None for numpy (always the CPU)."""
    return None if isinstance(a, np.ndarray) else a.device


def where(a: Any) -> str:
    """The array's library and device, for messages."""
    return "numpy" if isinstance(a, np.ndarray) else f"torch on {a.device}"


def same_place(a: Any, xp: ModuleType, device: Any) -> bool:
    """Whether ``a`` is an array of ``xp`` on ``device`` (numpy: any numpy array)."""
    if xp is np:
        return isinstance(a, np.ndarray)
    return isinstance(a, xp.Tensor) and a.device == device


def zeros(xp: ModuleType, shape: tuple[int, ...], device: Any = None) -> Any:
    """A float32 zero array of ``xp`` (on ``device`` for torch)."""
    if xp is np:
        return np.zeros(shape, dtype=np.float32)
    return xp.zeros(shape, dtype=xp.float32, device=device)


def device(xp: ModuleType, device: Any) -> Any:
    """The canonical device (None for numpy; torch's ``torch.device``, the CPU unless given)."""
    if xp is np:
        if device not in (None, "cpu"):
            raise ValueError(f"device: numpy arrays live on the CPU, got {device!r}")
        return None
    return xp.device("cpu" if device is None else device)


def is_float32(a: Any) -> bool:
    return a.dtype == (np.float32 if isinstance(a, np.ndarray) else namespace(a).float32)


def is_contiguous(a: Any) -> bool:
    return a.flags.c_contiguous if isinstance(a, np.ndarray) else a.is_contiguous()


def fill(row: Any, value: Any) -> None:
    """``row[:] = value`` (a scalar or a row of values, rounded once to the row's float32)."""
    if isinstance(row, np.ndarray):
        row[:] = value
    else:
        import torch

        row.copy_(torch.as_tensor(value, dtype=torch.float64, device=row.device).to(row.dtype).expand_as(row))


def as_float64(xp: ModuleType, value: Any, device: Any = None) -> Any:
    """``value`` as a float64 array of ``xp`` (numpy: ``np.asarray``)."""
    if xp is np:
        return np.asarray(value, dtype=np.float64)
    return xp.as_tensor(value, dtype=xp.float64, device=device)


def copy(a: Any) -> Any:
    return a.copy() if isinstance(a, np.ndarray) else a.clone()


def index(xp: ModuleType, idx: np.ndarray, device: Any) -> Any:
    """An index array of ``xp`` (intp numpy, int64 torch on ``device``)."""
    if xp is np:
        return np.asarray(idx, dtype=np.intp)
    return xp.as_tensor(np.asarray(idx, dtype=np.int64), device=device)
