"""Warp's kernel cache: where dexwheel keeps it, and filling it for a CUDA GPU ahead of time, without one.

Warp compiles a module's kernels on first use (NVRTC for a GPU: about 2 minutes for what the Isaac Lab tasks load,
one core) and keeps the binaries under ``WARP_CACHE_PATH``, in a folder named by the module's content hash, which
does not depend on the device. So a run on the CPU knows every module the tasks load, and NVRTC, which needs no
driver, can compile them for a GPU's architecture here: a machine lent for minutes then finds them compiled.

The standard library only at import (``benchmarks/gpu_bundle.py`` loads this file on a bare Python); warp is
imported by :func:`compile_loaded` alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from pathlib import Path

VARIABLE = "WARP_CACHE_PATH"
#: What dexwheel sets when ``WARP_CACHE_PATH`` is unset (the Makefile too): one cache for every venv and process.
DEFAULT = Path.home() / ".cache" / "dexwheel" / "warp"
#: A compiled CUDA module's binary forms; a machine also needs the module's ``<module>.meta`` (not its .cu source).
CUDA_BINARIES = (".ptx", ".cubin")
#: The compute capabilities a target may name (sm_50 ... sm_120).
ARCHS = range(50, 121)


def prefer_cubin() -> None:
    """Ask warp for CUBIN on a GPU, unless the process chose a format already.

    Left to itself, warp loads PTX wherever the driver is at least as new as its NVRTC, and the driver then
    compiles that PTX to the GPU's own code before the first launch, once per machine (its cache is
    ``~/.nv/ComputeCache``): about the 36 s that CUBIN's compile takes over PTX's for the Isaac Lab tasks'
    modules on one core (``benchmarks/warp_cuda_cache.py`` times both). A CUBIN for the GPU's arch
    (:func:`compile_loaded`, carried by ``gpu_bundle.py``) loads as it is, on any driver of its CUDA major
    version. ``warp.config.cuda_output`` is not part of a module's hash, so the cache's folders stay the same;
    it changes nothing on the CPU."""
    import warp as wp

    if wp.config.cuda_output is None:
        wp.config.cuda_output = "cubin"


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """The cache a process started with ``environ`` uses: ``WARP_CACHE_PATH``, else :data:`DEFAULT`."""
    return Path(environ.get(VARIABLE) or DEFAULT)


def with_cache(environ: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """``environ`` with ``WARP_CACHE_PATH`` set to :func:`cache_dir` unless it names one already."""
    environ.setdefault(VARIABLE, str(cache_dir(environ)))
    return environ


def cuda_binaries(root: Path) -> set[str]:
    """The compiled CUDA modules under a cache ``root`` (``<warp version>/<module>/<module>.sm<arch>.<ptx|cubin>``,
    relative to ``root``)."""
    return {str(p.relative_to(root)) for p in root.glob("*/*/*.sm*") if p.suffix in CUDA_BINARIES}


def cpu_objects(root: Path) -> set[str]:
    """The compiled CPU modules under a cache ``root`` (``<warp version>/<module>/<module>[.cpu<target>].o``). Built
    for this host's CPU (warp's default ``-march=native``), so not carried to another machine."""
    return {str(p.relative_to(root)) for p in root.glob("*/*/*.o")}


def arch_error(option: str, arch: int) -> str | None:
    """Why ``arch``, given as ``option``, cannot be a compile target; None when it can."""
    if arch in ARCHS:
        return None
    return f"{option}: {arch} is not a CUDA compute capability ({ARCHS.start} ... {ARCHS.stop - 1}, e.g. 90 for sm_90)"


def compile_loaded(
    targets: Iterable[tuple[int, bool]], root: Path | None = None, progress: Callable[[int, int], None] | None = None
) -> dict[str, int]:
    """Compile every warp module this process has loaded (on any device) for each ``(arch, ptx)`` target into
    warp's kernel cache (``root``: warp's cache folder, default the one warp opened). A target already in the
    cache is skipped; ``progress(done, total)`` after each module. Counts of ``modules``, ``compiled`` and
    ``cached`` (target binaries found in place).

    Warp chooses PTX for the lowest arch it targets (``warp.config.ptx_target_arch``, default 75) where the
    driver is at least as new as its NVRTC, CUBIN for the device's own arch otherwise or under
    :func:`prefer_cubin`, which dexwheel's Isaac Lab processes call: give both, for any module a process loads
    on a GPU before that call."""
    import warp as wp
    from warp._src.context import user_modules  # warp keeps no public list of its modules

    root = Path(root or wp.config.kernel_cache_dir)
    loaded = [m for m in list(user_modules.values()) if m.execs]
    targets = list(targets)
    counts = {"modules": len(loaded), "compiled": 0, "cached": 0}
    for done, module in enumerate(loaded, 1):
        name = module.get_module_identifier()
        for arch, ptx in targets:
            if (root / name / f"{name}.sm{arch}.{'ptx' if ptx else 'cubin'}").exists():
                counts["cached"] += 1
                continue
            wp.compile_aot_module(module, arch=arch, use_ptx=ptx, module_dir=root / name)
            counts["compiled"] += 1
        if progress is not None:
            progress(done, len(loaded))
    return counts
