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


def namespace_or_none(x: Any) -> ModuleType | None:
    """:func:`namespace`, or None for anything that is neither a numpy array nor a torch tensor."""
    try:
        return namespace(x)
    except TypeError:
        return None


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


def constants(owner: Any, like: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    """``owner``'s numpy attributes ``names`` in the library (and on the device) of the array ``like``.

    numpy: the attributes themselves (the numpy calls stay the ones they were). torch: tensors of the same dtype
    (float64 stays float64, index arrays become int64), made once per device and kept on ``owner``."""
    if isinstance(like, np.ndarray):
        return tuple(getattr(owner, n) for n in names)
    xp = namespace(like)
    cache = owner.__dict__.setdefault("_xp_constants", {})
    key = str(like.device)
    found = cache.get(key)
    if found is None:
        found = cache[key] = {}
    out = []
    for n in names:
        t = found.get(n)
        if t is None:
            value = np.asarray(getattr(owner, n))
            dtype = xp.int64 if value.dtype.kind in "iu" else xp.float64
            t = found[n] = xp.as_tensor(value, dtype=dtype, device=like.device)
        out.append(t)
    return tuple(out)


def empty64(like: Any, shape: tuple[int, ...]) -> Any:
    """An uninitialised float64 array of ``like``'s library and device."""
    if isinstance(like, np.ndarray):
        return np.empty(shape)
    xp = namespace(like)
    return xp.empty(shape, dtype=xp.float64, device=like.device)


def float64(a: Any) -> Any:
    """A float64 copy of ``a`` (numpy: ``np.array(a, dtype=np.float64)``)."""
    if isinstance(a, np.ndarray) or not hasattr(a, "device"):
        return np.array(a, dtype=np.float64)
    return a.to(namespace(a).float64, copy=True)
