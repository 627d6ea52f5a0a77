"""Compile ``dst[:, dst_idx] = src[:, src_idx]`` into precomputed, allocation-free calls.

Name lookups, index arithmetic and view creation happen once, here; the control loop only calls
the returned zero-argument callables. A map made of a few contiguous runs (the usual case: a whole
layer, a layer with a hole punched by an override) becomes one slice copy per run (the identity map
is a single copy of the whole block); a scattered map becomes one ``take`` into a scratch buffer plus
one fancy-index store, both on flat views. The blocks are numpy arrays or torch tensors (:mod:`._xp`), the
copies those of their library: numpy's ``__setitem__``/``take``, torch's ``copy_``/``index_select``/``index_copy_``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from dexwheel.control import _xp

#: Above this many contiguous runs the two-call fancy-index path is cheaper than slice copies.
MAX_RUNS = 3

Op = Callable[[], object]


def runs(src_idx: np.ndarray, dst_idx: np.ndarray) -> list[tuple[int, int, int]]:
    """Maximal ``(src_start, dst_start, length)`` runs where both indices advance by one."""
    out: list[tuple[int, int, int]] = []
    for s, d in zip(src_idx.tolist(), dst_idx.tolist(), strict=True):
        if out and out[-1][0] + out[-1][2] == s and out[-1][1] + out[-1][2] == d:
            s0, d0, n = out[-1]
            out[-1] = (s0, d0, n + 1)
        else:
            out.append((s, d, 1))
    return out


def _flat(block: np.ndarray) -> np.ndarray:
    if not _xp.is_contiguous(block):
        raise ValueError("copy plan needs C-contiguous blocks")
    if not isinstance(block, np.ndarray):
        return block.view(-1)  # torch: a view or an error, never a copy
    flat = block.reshape(-1)
    assert np.shares_memory(flat, block)
    return flat


def compile_copy(dst: np.ndarray, dst_idx: np.ndarray, src: np.ndarray, src_idx: np.ndarray) -> list[Op]:
    """Calls that copy columns ``src_idx`` of the 2-D ``src`` into columns ``dst_idx`` of ``dst`` (both numpy
    or both torch on one device; the indices are numpy)."""
    if isinstance(src, np.ndarray) != isinstance(dst, np.ndarray) or _xp.device_of(src) != _xp.device_of(dst):
        raise TypeError(f"copy plan: source ({_xp.where(src)}) and destination ({_xp.where(dst)}) differ")
    src_idx = np.asarray(src_idx, dtype=np.intp)
    dst_idx = np.asarray(dst_idx, dtype=np.intp)
    if src_idx.size == 0:
        return []
    order = np.argsort(dst_idx, kind="stable")
    src_idx, dst_idx = src_idx[order], dst_idx[order]
    pieces = runs(src_idx, dst_idx)
    numpy = isinstance(dst, np.ndarray)
    if len(pieces) <= MAX_RUNS:
        ops: list[Op] = []
        for s0, d0, n in pieces:
            dst_view = dst[:, d0 : d0 + n]
            src_view = src[:, s0 : s0 + n]
            ops.append(
                partial(dst_view.__setitem__, Ellipsis, src_view) if numpy else partial(dst_view.copy_, src_view)
            )
        return ops
    rows = np.arange(dst.shape[0], dtype=np.intp)[:, None]
    flat_src = (rows * src.shape[1] + src_idx[None, :]).reshape(-1)
    flat_dst = (rows * dst.shape[1] + dst_idx[None, :]).reshape(-1)
    if not numpy:
        torch = _xp.namespace(dst)
        device = dst.device
        take, put = _xp.index(torch, flat_src, device), _xp.index(torch, flat_dst, device)
        buf = torch.empty(flat_src.size, dtype=dst.dtype, device=device)
        return [partial(torch.index_select, _flat(src), 0, take, out=buf), partial(_flat(dst).index_copy_, 0, put, buf)]
    scratch = np.empty(flat_src.size, dtype=dst.dtype)
    # mode="clip" keeps take() unbuffered; the indices are valid by construction.
    return [
        partial(_flat(src).take, flat_src, None, scratch, "clip"),
        partial(_flat(dst).__setitem__, flat_dst, scratch),
    ]


def run_ops(ops: tuple[Op, ...]) -> None:
    for op in ops:
        op()
