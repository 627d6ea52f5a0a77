"""Benchmark Solenopsis-v0: env.step over the raw physics it performs, and the native vector env.

Run: ``python benchmarks/bench_wheel_leg_env.py [--quick] [--robot m20_legacy]``. Everything is measured in
the same run and printed as ratios (nothing is asserted; shared machines are noisy):

1. ``env.step`` over raw physics: ``mj_step`` x decimation on a copy of the model, replaying exactly the
   controls the env produced from the same initial state, so both do the same physics work. Cases:
   zero action (standing) and random actions (driving, knees moving). Env and raw passes alternate in
   rounds; the median ratio is printed for the bare env and for the ``gymnasium.make`` stack.
2. Native vector env (``vectorization_mode="vector_entry_point"``) against a Python loop over N single
   envs, at N = 1, 8, 64, random actions, autoreset on both sides: env-steps per second (median rounds)
   and the speed-up: the median over rounds of the ratio of a loop round to the native round just
   before it, with its quartiles (as ``bench_g20_env``).
3. The native vector env over raw ``mujoco.batch`` stepping the same model (its physics alone).
4. The rough task (``<Robot>-Rough-v0``: the terrain, the height scan, the curriculum) against the flat one,
   native vector envs at N = 128, interleaved rounds: the rough env's env-steps/s over the flat env's; and the
   rough vector env over raw ``mujoco.batch`` stepping the same rough scene (part 3 on the rough task: the
   budget is 1.5x).
   ``--rough-types``: the same ratio with every tile one sub-terrain type (``sub_terrains.<name>.proportion``
   1, the rest 0), one type at a time: where the rough env's time goes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from reference import print_reference  # noqa: E402  (benchmarks/, the script's own directory)

from dexwheel.envs import register_envs  # noqa: E402
from dexwheel.terrain.config import ROUGH_SUB_TERRAINS, TerrainCfg  # noqa: E402

register_envs()
IDS = {"solenopsis": "Solenopsis-v0", "m20_legacy": "M20Legacy-v0"}


def bench_single(env_id: str, case: str, steps: int, rounds: int) -> None:
    wrapped = gym.make(env_id)
    env = wrapped.unwrapped
    rng = np.random.default_rng(0)
    dim = env.action_space.shape[0]
    if case == "zero action":
        actions = np.zeros((steps, dim), np.float32)
    else:
        actions = np.clip(np.cumsum(rng.normal(0, 0.2, (steps, dim)), axis=0), -1, 1).astype(np.float32)

    # record the controls the env produces, and its initial state
    env.reset(seed=0)
    model, dec = env.model, env.cfg.decimation
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.zeros(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, env.data, state0, spec)
    ctrls = []
    for a in actions:
        env.step(a)
        ctrls.append(env.data.ctrl.copy())
    raw_model, raw_data = model, mujoco.MjData(model)  # the env's model (its gains), a separate MjData

    def raw_pass() -> float:
        mujoco.mj_setState(raw_model, raw_data, state0, spec)
        t0 = time.perf_counter()
        for c in ctrls:
            raw_data.ctrl[:] = c
            mujoco.mj_step(raw_model, raw_data, dec)
        return time.perf_counter() - t0

    def env_pass(e) -> float:
        e.reset(seed=0)
        t0 = time.perf_counter()
        for a in actions:
            e.step(a)
        return time.perf_counter() - t0

    raw_us, env_us, wrapped_us, r_env, r_wrapped = [], [], [], [], []
    for _ in range(rounds):
        r = raw_pass()
        e = env_pass(env)
        w = env_pass(wrapped)
        raw_us.append(r / steps * 1e6)
        env_us.append(e / steps * 1e6)
        wrapped_us.append(w / steps * 1e6)
        r_env.append(e / r)
        r_wrapped.append(w / r)
    overhead = statistics.median(w - r for w, r in zip(wrapped_us, raw_us, strict=True))
    print(
        f"{case:<16} raw (mj_step x {dec}) {statistics.median(raw_us):6.1f} us | env.step {statistics.median(env_us):6.1f} us "
        f"ratio {statistics.median(r_env):4.2f} (best round {min(r_env):4.2f}) | via make "
        f"{statistics.median(wrapped_us):6.1f} us ratio {statistics.median(r_wrapped):4.2f}, overhead {overhead:5.1f} us"
    )


def bench_vector(env_id: str, n: int, steps: int, rounds: int) -> None:
    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    envs = [gym.make(env_id) for _ in range(n)]
    dim = venv.single_action_space.shape[0]
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, n, dim)).astype(np.float32)

    def vec_pass() -> float:
        venv.reset(seed=0)
        t0 = time.perf_counter()
        for a in actions:
            venv.step(a)
        return time.perf_counter() - t0

    def loop_pass() -> float:
        for i, e in enumerate(envs):
            e.reset(seed=i)
        t0 = time.perf_counter()
        for a in actions:
            for i, e in enumerate(envs):
                _, _, terminated, truncated, _ = e.step(a[i])
                if terminated or truncated:
                    e.reset()
        return time.perf_counter() - t0

    t_vec, t_loop, ratio = [], [], []
    for _ in range(rounds):
        v, lp = vec_pass(), loop_pass()
        t_vec.append(v)
        t_loop.append(lp)
        ratio.append(lp / v)
    sps_vec = n * steps / statistics.median(t_vec)
    sps_loop = n * steps / statistics.median(t_loop)
    threads = venv.unwrapped.task.physics.num_threads
    q1, _, q3 = statistics.quantiles(ratio, n=4)
    print(
        f"N = {n:3d} ({threads} threads): vector {sps_vec:9.0f} env-steps/s | loop {sps_loop:9.0f} env-steps/s | "
        f"speed-up {statistics.median(ratio):5.2f}x (median of {rounds} interleaved rounds; quartiles "
        f"{q1:4.2f}-{q3:4.2f}x)"
    )
    venv.close()


def bench_raw_batch(env_id: str, n: int, steps: int, rounds: int) -> None:
    """The native vector env against ``mujoco.batch`` stepping the same model with the same substeps (its
    physics alone): what the task costs on top of the physics it runs."""
    from mujoco import batch as mj_batch

    venv = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    task = venv.unwrapped.task
    model, dec = task.models[0], task.cfg.decimation
    raw = mj_batch.Batch(model, n, nthread=task.physics.num_threads)
    raw.set_models(task.models)
    raw.state[:] = task.physics._batch.state  # the same states: standing robots
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, n, venv.single_action_space.shape[0]))
    actions = actions.astype(np.float32)
    ctrl = raw.bind("ctrl")

    def vec_pass() -> float:
        t0 = time.perf_counter()
        for a in actions:
            venv.step(a)
        return time.perf_counter() - t0

    def raw_pass() -> float:
        t0 = time.perf_counter()
        for _ in range(steps):
            ctrl[:] = task.physics.ctrl  # the env's last controls: the same physics work
            raw.step(nstep=dec)
        return time.perf_counter() - t0

    ratio = []
    for _ in range(rounds):
        v, r = vec_pass(), raw_pass()
        ratio.append(v / r)
    q1, med, q3 = statistics.quantiles(ratio, n=4)
    sps = n * steps / (statistics.median([vec_pass() for _ in range(3)]))
    print(
        f"N = {n:3d}: native vector env over raw mujoco.batch (x{dec} substeps) {statistics.median(ratio):4.2f}x "
        f"(median of {rounds} interleaved rounds; quartiles {q1:4.2f}-{q3:4.2f}x), {sps:7.0f} env-steps/s"
    )
    venv.close()


def bench_rough(env_id: str, n: int, steps: int, rounds: int, by_type: bool = False) -> None:
    """The rough task's native vector env against the flat one's, side by side (random actions); ``by_type``:
    also the rough env with every tile one sub-terrain type, each type its own env in the same rounds."""
    rough_id = env_id.replace("-v0", "-Rough-v0")
    rough = {"rough": {}}
    if by_type:
        for name in ROUGH_SUB_TERRAINS:
            subs = {k: dataclasses.replace(v, proportion=float(k == name)) for k, v in ROUGH_SUB_TERRAINS.items()}
            rough[f"only {name}"] = {"terrain": TerrainCfg(sub_terrains=subs)}

    def make(env: str, kwargs: dict):
        return gym.make_vec(env, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)

    flat, envs = make(env_id, {}), {k: make(rough_id, kw) for k, kw in rough.items()}
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, n, flat.single_action_space.shape[0]))
    actions = actions.astype(np.float32)
    for e in (flat, *envs.values()):
        e.reset(seed=0)

    def run(e) -> float:
        t0 = time.perf_counter()
        for a in actions:
            e.step(a)
        return time.perf_counter() - t0

    ratio: dict[str, list[float]] = {k: [] for k in envs}
    t_rough: dict[str, list[float]] = {k: [] for k in envs}
    for _ in range(rounds):
        for k, e in envs.items():  # each rough round right after a flat round, so both see the same machine
            f, r = run(flat), run(e)
            ratio[k].append(f / r)
            t_rough[k].append(r)
    width = len(rough_id) + 2 + max(len(k) for k in envs) if by_type else 0
    for k in envs:
        q1, _, q3 = statistics.quantiles(ratio[k], n=4)
        name = rough_id if k == "rough" else f"{rough_id}, {k}"
        print(
            f"N = {n:3d}: {name:<{width}} at {statistics.median(ratio[k]):4.2f}x the flat env's env-steps/s (median of "
            f"{rounds} interleaved rounds; quartiles {q1:4.2f}-{q3:4.2f}x), "
            f"{n * steps / statistics.median(t_rough[k]):7.0f} env-steps/s"
        )
    for e in (flat, *envs.values()):
        e.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds (smoke run)")
    parser.add_argument("--robot", choices=sorted(IDS), default="solenopsis")
    parser.add_argument("--only", choices=("single", "vector"), help="run one of the two parts")
    parser.add_argument(
        "--rough-types",
        action="store_true",
        help="the rough task alone, also one env per sub-terrain type (every tile that type)",
    )
    args = parser.parse_args()
    steps, rounds = (100, 3) if args.quick else (500, 7)
    env_id = IDS[args.robot]
    print(f"{env_id} benchmark: {os.cpu_count()} CPUs, mujoco {mujoco.__version__}, gymnasium {gym.__version__}")
    vsteps, vrounds = (40, 3) if args.quick else (100, 21)
    if args.rough_types:
        print("-- the rough task over the flat one, and by sub-terrain type --")
        bench_rough(env_id, 16 if args.quick else 128, vsteps, max(3, vrounds // 3), by_type=True)
        return
    if args.only != "vector":
        print("-- env.step over raw physics (median of rounds) --")
        for case in ("zero action", "random actions"):
            bench_single(env_id, case, steps, rounds)
        print_reference(steps, rounds)
    if args.only != "single":
        print("-- native vector env vs a loop of N single envs (random actions) --")
        # short rounds, many of them, so that a round and its pair see the same machine
        for n in (1, 8, 64):
            bench_vector(env_id, n, max(10, vsteps * 8 // max(n, 8)), vrounds)
        print("-- native vector env over its own physics --")
        for n in (32, 128):  # 128: the default training's env count
            bench_raw_batch(env_id, n, vsteps, vrounds)
        print("-- the rough task over the flat one (terrain, height scan, curriculum) --")
        bench_rough(env_id, 128, vsteps, vrounds)
        print("-- the rough task over its own physics (the terrain's collisions included on both sides) --")
        bench_raw_batch(env_id.replace("-v0", "-Rough-v0"), 128, vsteps, vrounds)


if __name__ == "__main__":
    main()
