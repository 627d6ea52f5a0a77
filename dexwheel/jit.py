"""Compiled kernels: numba's ``njit`` with its on-disk cache, or without it where nothing is writable.

numba keeps compiled kernels next to their module, else in the user cache directory, else in
``NUMBA_CACHE_DIR``; with none of them writable (a read-only install and home), ``njit(cache=True)``
raises at import. Then the kernels are compiled without a cache, once per process (a few seconds).

numba invalidates a cached kernel only when the kernel's own source file changes, yet a kernel's
compiled code includes every kernel it calls, from any module: a changed callee (say the hard-write
drive's step, called by the G20 task's step) would keep running its old code. So each kernel's cache
is also stamped with a hash of the sources its module imports, transitively (:func:`sources_digest`),
and flushed when that hash changes; editing a file no kernel depends on keeps every cache.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, overload

import numba
from numba import njit, types
from numba.core import cgutils
from numba.core.caching import FunctionCache
from numba.extending import intrinsic

from dexwheel.atomic import atomic_open

F = TypeVar("F", bound=Callable[..., object])
PACKAGE = Path(__file__).resolve().parent


def _module_file(module: str) -> Path | None:
    """The source file of a module of the package, or None for any other module."""
    parts = module.split(".")
    if parts[0] != PACKAGE.name:
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def _imports(path: Path) -> frozenset[Path]:
    """The package's source files that ``path`` imports (``from a.b import c`` may name module ``a.b.c``)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return frozenset(f for f in map(_module_file, names) if f is not None)


@functools.cache
def sources_digest(module: str) -> str:
    """A hash of the sources a module's kernels may compile in: its own file and every package file it
    imports, transitively (path and content). Editing any other file (training code, say) keeps the cache."""
    start = _module_file(module)
    seen: set[Path] = set()
    todo = [start] if start is not None else []
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += _imports(path) - seen
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(seen):
        h.update(path.relative_to(PACKAGE).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _flush_if_stale(dispatcher: object, fn: Callable[..., object]) -> None:
    """Drop ``fn``'s cached code unless it was compiled from the current sources (see module docstring)."""
    cache = getattr(dispatcher, "_cache", None)
    if not isinstance(cache, FunctionCache):
        return
    stamp = Path(cache.cache_path) / f"{fn.__module__}.{fn.__qualname__}.sources"
    digest = sources_digest(fn.__module__)
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    cache.flush()
    try:
        with atomic_open(stamp) as f:
            f.write(digest.encode())
    except OSError:  # a read-only cache: numba did not cache there either
        pass


@overload
def kernel(fn: F, *, parallel: bool = False) -> F: ...


@overload
def kernel(fn: None = None, *, parallel: bool = False) -> Callable[[F], F]: ...


def kernel(fn: F | None = None, *, parallel: bool = False) -> F | Callable[[F], F]:
    """``njit(cache=True)(fn)``, or ``njit(fn)`` with one warning when numba has nowhere to cache.

    ``@kernel(parallel=True)``: numba's ``parallel`` (``prange`` loops on its worker threads).
    """
    if fn is None:
        return functools.partial(kernel, parallel=parallel)  # type: ignore[return-value]
    try:
        dispatcher = njit(cache=True, parallel=parallel)(fn)
    except RuntimeError as exc:
        if "cannot cache" not in str(exc):
            raise
        warnings.warn(
            "numba found no writable cache directory; dexwheel's kernels are compiled in every process. "
            "Set NUMBA_CACHE_DIR to a writable directory to keep them.",
            RuntimeWarning,
            stacklevel=1,  # one location and one text: shown once, not once per kernel
        )
        return njit(parallel=parallel)(fn)
    _flush_if_stale(dispatcher, fn)
    return dispatcher


def compiled_for(dispatcher: Callable[..., object], *args: object) -> Callable[..., object]:
    """``dispatcher``'s compiled function for arguments of exactly the types of ``args`` (compiled, or
    loaded from the cache, now).

    Calling it skips the dispatcher's typing of each argument on each call, which for a record array
    costs about 0.3 us: for a hot call whose argument types never change. Nothing checks the types of
    later arguments, so the caller keeps one per argument type (``Dispatcher.compile`` returns it).
    """
    return dispatcher.compile(tuple(numba.typeof(a) for a in args))  # type: ignore[attr-defined]


@intrinsic
def fetch_add(typingctx, counters, index):  # noqa: ANN001, ANN202  (numba's intrinsic protocol)
    """Inside a kernel: ``counters[index] += 1`` as one atomic operation; returns the old value.

    numba has no atomics on the CPU; this is LLVM's ``atomicrmw add``. Worker threads of a parallel
    kernel use it to take the next piece of work from a shared counter (dynamic scheduling: numba's
    own ``prange`` splits its range evenly in advance).
    """
    if not (isinstance(counters, types.Array) and counters.dtype == types.int64 and counters.ndim == 1):
        return None
    sig = types.int64(counters, types.intp)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        array_type = signature.args[0]
        array = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, array, [args[1]])
        return builder.atomic_rmw("add", pointer, context.get_constant(types.int64, 1), "monotonic")

    return sig, codegen
