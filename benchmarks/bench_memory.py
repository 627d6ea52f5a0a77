"""Benchmark memory per env: the resident memory a native vector env holds, per env, at several N.

Run: ``python benchmarks/bench_memory.py [--quick] [--cases solenopsis ...] [--sizes 1 128 2048]``. Each
measurement is its own process, so the numbers are clean (nothing freed earlier stays in the heap):

* a baseline process imports everything an env process imports (gymnasium, mujoco, dexwheel and every env
  module) and reports its resident set size (RSS, ``/proc/self/statm``);
* a case process does the same imports, then builds the vector env
  (``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``), resets it with a
  seed and steps it with random actions (so lazily made buffers and compiled kernels exist), collects
  garbage and reports its RSS.

MB per env is ``(case RSS - baseline RSS) / N`` (MB = 10^6 bytes). At N = 1 it includes what an env
process holds once (compiled kernels, the model, thread pools; a first unmeasured run of each case puts the
kernels in numba's on-disk cache, as in a user's second run, else N = 1 would count their compilation); the
large-N number is what each further env costs. Also printed: how many distinct ``MjModel`` objects the physics runs on and their bytes per env
(``nbuffer``), and the ratio of the domain-randomised case to the plain one. Nothing is asserted (RSS moves
by a few MB between runs: the allocator, the JIT cache).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

#: case name: (env id, make_vec keyword arguments)
CASES: dict[str, tuple[str, dict]] = {
    "solenopsis": ("Solenopsis-v0", {}),
    "solenopsis_dr": ("Solenopsis-v0", {"domain_rand": True}),
    "solenopsis_rough": ("Solenopsis-Rough-v0", {}),  # the terrain: one model and one height raster for all envs
    "m20_legacy": ("M20Legacy-v0", {}),
    "m20_legacy_dr": ("M20Legacy-v0", {"domain_rand": True}),
    "g20_hard_write": ("G20Hand-v0", {"drive": "hard_write"}),
    "g20_pd": ("G20Hand-v0", {"drive": "pd"}),
}
MB = 1e6


def _import_all() -> None:
    """Everything a case process imports before it builds its env (the baseline imports the same)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import gymnasium  # noqa: F401
    import mujoco  # noqa: F401
    import numpy  # noqa: F401

    import dexwheel.envs.g20_vector  # noqa: F401
    import dexwheel.envs.wheel_leg_vector  # noqa: F401
    from dexwheel.envs import register_envs

    register_envs()


def _rss() -> int:
    """Resident set size of this process in bytes (the peak where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _models(env) -> list:
    """The distinct MjModel objects the env's physics runs on."""
    task = env.task
    models = getattr(task, "models", None) or [task.model]
    return list({id(m): m for m in models}.values())


def child(case: str, n: int, steps: int) -> dict:
    _import_all()
    if case == "baseline":
        gc.collect()
        return {"rss": _rss()}
    import gymnasium as gym
    import numpy as np

    env_id, kwargs = CASES[case]
    env = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        env.step(rng.uniform(-1.0, 1.0, env.action_space.shape).astype(np.float32))
    gc.collect()
    models = _models(env.unwrapped)
    result = {"rss": _rss(), "models": len(models), "model_bytes": sum(int(m.nbuffer) for m in models)}
    env.close()
    return result


def measure(case: str, n: int, steps: int) -> dict:
    cmd = [sys.executable, __file__, "--child", case, str(n), str(steps)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{case} N={n}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 2, 2 steps (smoke run)")
    parser.add_argument("--cases", nargs="+", choices=tuple(CASES), default=list(CASES), help="env families")
    parser.add_argument("--sizes", nargs="+", type=int, help="numbers of envs (default 1 128 2048)")
    parser.add_argument("--steps", type=int, help="steps after the reset (default 10)")
    parser.add_argument("--child", nargs=3, metavar=("CASE", "N", "STEPS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        case, n, steps = args.child
        print(json.dumps(child(case, int(n), int(steps))))
        return 0
    bad = [n for n in args.sizes or () if n < 1]
    if bad or (args.steps is not None and args.steps < 0):  # refused before any measurement
        error = f"--sizes: each must be >= 1, got {bad[0]}" if bad else f"--steps: must be >= 0, got {args.steps}"
        print(f"error: {error}", file=sys.stderr)
        return 2
    sizes = args.sizes or ([2] if args.quick else [1, 128, 2048])
    steps = args.steps if args.steps is not None else (2 if args.quick else 10)
    if not args.quick:  # compiled kernels on disk (numba's cache), so that N = 1 loads them as a user's run does
        for case in args.cases:
            measure(case, 1, 1)
    base = measure("baseline", 0, 0)["rss"]
    print(f"memory per env: RSS after make_vec + reset + {steps} steps, minus a baseline process that imported "
          f"everything ({base / MB:.0f} MB); MB per env = (RSS - baseline) / N")  # fmt: skip
    per_env: dict[tuple[str, int], float] = {}
    for case in args.cases:
        env_id, kwargs = CASES[case]
        for n in sizes:
            r = measure(case, n, steps)
            per_env[case, n] = mb = (r["rss"] - base) / MB / n
            print(f"{case:<15} N = {n:>5}: {mb:8.3f} MB per env ({(r['rss'] - base) / MB:8.1f} MB in all); physics on "
                  f"{r['models']:>5} MjModel(s), {r['model_bytes'] / 1e3 / n:8.2f} kB of model per env")  # fmt: skip
    for case in args.cases:
        if case.endswith("_dr") and case[:-3] in args.cases:
            ratios = ", ".join(f"N = {n}: {per_env[case, n] / per_env[case[:-3], n]:.2f}x" for n in sizes)
            print(f"{case} over {case[:-3]} (MB per env): {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
