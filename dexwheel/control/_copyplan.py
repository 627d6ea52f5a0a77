"""Compile ``dst[:, dst_idx] = src[:, src_idx]`` into precomputed, allocation-free calls.

Name lookups, index arithmetic and view creation happen once, here; the control loop only calls
the returned zero-argument callables. A map made of a few contiguous runs (the usual case: a whole
layer, a layer with a hole punched by an override) becomes one slice copy per run (the identity map
is a single copy of the whole block); a scattered map becomes one ``take`` into a scratch buffer plus
one fancy-index store, both on flat views.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

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
    if not block.flags.c_contiguous:
        raise ValueError("copy plan needs C-contiguous blocks")
    flat = block.reshape(-1)
    assert np.shares_memory(flat, block)
    return flat


def compile_copy(dst: np.ndarray, dst_idx: np.ndarray, src: np.ndarray, src_idx: np.ndarray) -> list[Op]:
    """Calls that copy columns ``src_idx`` of the 2-D ``src`` into columns ``dst_idx`` of ``dst``."""
    src_idx = np.asarray(src_idx, dtype=np.intp)
    dst_idx = np.asarray(dst_idx, dtype=np.intp)
    if src_idx.size == 0:
        return []
    order = np.argsort(dst_idx, kind="stable")
    src_idx, dst_idx = src_idx[order], dst_idx[order]
    pieces = runs(src_idx, dst_idx)
    if len(pieces) <= MAX_RUNS:
        ops: list[Op] = []
        for s0, d0, n in pieces:
            dst_view = dst[:, d0 : d0 + n]
            src_view = src[:, s0 : s0 + n]
            ops.append(partial(dst_view.__setitem__, Ellipsis, src_view))
        return ops
    rows = np.arange(dst.shape[0], dtype=np.intp)[:, None]
    flat_src = (rows * src.shape[1] + src_idx[None, :]).reshape(-1)
    flat_dst = (rows * dst.shape[1] + dst_idx[None, :]).reshape(-1)
    scratch = np.empty(flat_src.size, dtype=dst.dtype)
    # mode="clip" keeps take() unbuffered; the indices are valid by construction.
    return [
        partial(_flat(src).take, flat_src, None, scratch, "clip"),
        partial(_flat(dst).__setitem__, flat_dst, scratch),
    ]


def run_ops(ops: tuple[Op, ...]) -> None:
    for op in ops:
        op()
