"""Compiled kernels: numba's ``njit`` with its on-disk cache, or without it where nothing is writable.

numba keeps compiled kernels next to their module, else in the user cache directory, else in
``NUMBA_CACHE_DIR``; with none of them writable (a read-only install and home), ``njit(cache=True)``
raises at import. Then the kernels are compiled without a cache, once per process (a few seconds).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TypeVar

from numba import njit

F = TypeVar("F", bound=Callable[..., object])


def kernel(fn: F) -> F:
    """``njit(cache=True)(fn)``, or ``njit(fn)`` with one warning when numba has nowhere to cache."""
    try:
        return njit(cache=True)(fn)
    except RuntimeError as exc:
        if "cannot cache" not in str(exc):
            raise
        warnings.warn(
            "numba found no writable cache directory; dexwheel's kernels are compiled in every process. "
            "Set NUMBA_CACHE_DIR to a writable directory to keep them.",
            RuntimeWarning,
            stacklevel=1,  # one location and one text: shown once, not once per kernel
        )
        return njit(fn)
