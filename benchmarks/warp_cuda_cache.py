"""Compile the warp kernels of every dexwheel Isaac Lab task for a CUDA GPU ahead of time, on a machine without one.

Run in the Isaac Lab venv (``benchmarks/gpu_bundle.py pack`` runs it and carries the result)::

    .venv-isaaclab/bin/python benchmarks/warp_cuda_cache.py                      # into WARP_CACHE_PATH
    .venv-isaaclab/bin/python benchmarks/warp_cuda_cache.py --cache /tmp/warp --arch 90

Builds each registered task (and the hand's hard-write drive) with 4 envs on the CPU, resets and steps it through
two short episodes, so warp loads the modules the task uses, then compiles each of them with NVRTC for the GPU:
PTX for warp's default PTX arch, then CUBIN for ``--arch``, each timed (:func:`dexwheel.warp_cache.compile_loaded`).
dexwheel's Isaac Lab processes load the CUBIN (:func:`dexwheel.warp_cache.prefer_cubin`); the PTX serves a module
a process loads on the GPU before asking. What the GPU runs and the CPU never loads (CUDA-only kernels) still
compiles there, on first use.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dexwheel import cli, warp_cache  # noqa: E402

#: the hand's other drive, built beside every registered task (the vendor's track test: no projection)
HARD_WRITE = {"drive": "hard_write", "collision": {"projection": False}}
WARM_UP_STEPS = 6  # three episodes of two control steps: partial resets included


def warm_up(task: str, overrides: dict) -> float:
    """Build ``task`` with 4 envs on the CPU, reset it and step it past two time-outs; its seconds."""
    import torch

    from dexwheel.isaaclab.episodes import open_task

    def short_episodes(env_cfg) -> None:
        env_cfg.episode_length_s = 2 * env_cfg.decimation * env_cfg.sim.dt

    t0 = time.perf_counter()
    env = open_task(task, 4, "cpu", 0, overrides, configure=short_episodes)
    env.reset(seed=0)
    dim = env.unwrapped.action_manager.total_action_dim
    generator = torch.Generator().manual_seed(0)
    for _ in range(WARM_UP_STEPS):
        env.step(torch.rand(4, dim, generator=generator) * 2 - 1)
    env.close()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = cli.Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=warp_cache.cache_dir(), help="warp's cache (WARP_CACHE_PATH)")
    parser.add_argument("--arch", type=int, default=90, help="the GPU's compute capability for CUBIN (H200: 90)")
    parser.add_argument("--ptx-arch", type=int, default=75, help="the PTX target (warp's default: 75)")
    args = parser.parse_args(argv)
    for option, arch in (("--arch", args.arch), ("--ptx-arch", args.ptx_arch)):
        if error := warp_cache.arch_error(option, arch):
            cli.refuse(error)
    os.environ[warp_cache.VARIABLE] = str(args.cache)  # before warp starts: it opens its cache once

    import dexwheel.isaaclab.tasks as tasks

    plan = [(task, {}) for task in tasks.TASKS] + [("Dexwheel-HandPose-G20Left-v0", HARD_WRITE)]
    for i, (task, overrides) in enumerate(plan, 1):
        seconds = warm_up(task, overrides)
        print(f"warp_cuda_cache: [{i}/{len(plan)}] {task} {overrides or ''} built and stepped ({seconds:.0f} s)",
              flush=True)  # fmt: skip
    t0 = time.perf_counter()
    compiled = cached = 0
    # one form after the other, each timed: CUBIN's extra time over PTX's is about what a driver spends compiling the
    # PTX before its first launch, where warp would load PTX (warp_cache.prefer_cubin)
    for arch, ptx in ((args.ptx_arch, True), (args.arch, False)):
        form, t1 = f"{'PTX' if ptx else 'CUBIN'} sm{arch}", time.perf_counter()

        def progress(done: int, modules: int, form: str = form) -> None:
            if done % 10 == 0 or done == modules:
                print(
                    f"warp_cuda_cache: {form}: {done}/{modules} modules ({time.perf_counter() - t0:.0f} s)", flush=True
                )

        counts = warp_cache.compile_loaded([(arch, ptx)], progress=progress)
        compiled, cached = compiled + counts["compiled"], cached + counts["cached"]
        print(f"warp_cuda_cache: {form}: {counts['compiled']} compiled in {time.perf_counter() - t1:.1f} s, "
              f"{counts['cached']} already there", flush=True)  # fmt: skip
    print(f"warp_cuda_cache: {counts['modules']} modules, {compiled} binaries compiled, {cached} already there "
          f"({time.perf_counter() - t0:.0f} s) in {args.cache}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
