"""Benchmark G20Rotate-v0: the native vector env over raw ``mujoco.batch`` stepping the same scene, and the object
tasks' physics step against the spec's.

Run: ``python benchmarks/bench_in_hand.py [--quick]``. At N = 32 and 128 envs (128: the rotation task's training
count), random delta actions: the vector env's env-steps per second, and its time over ``mujoco.batch`` rolling
out the same model and states with the same actuator targets (the env's last control step's, ``nsub`` physics steps),
measured in interleaved rounds in the same run; the median ratio and its quartiles are printed (the budget is 1.5x:
what the action path, the object's state, the terms and the observation may add to the physics).

Then the physics step (issue 70): the vector env's env-steps/s with today's physics (5 ms x 10, armature 0.025, the
pads contact model) against the object tasks' before issue 70 (2 ms x 25, armature 0.01, the spec's contacts; on
G20RotateZ-v0, the cube task that was G20Rotate-v0) and against the spec's 2 ms step alone (the rolling task, the pads
model), the same task, envs, actions and number of steps, interleaved in the same run. A start state at the other
physics comes from a small grasp cache sampled for it into a temporary folder (the stored caches are today's).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402

import dexwheel  # noqa: E402, F401  (registers the env ids)


def bench_raw_batch(n: int, steps: int, rounds: int) -> float:
    """The median ratio of the vector env's time over raw ``mujoco.batch``'s, printed with the env-steps/s."""
    from mujoco import batch as mj_batch

    venv = gym.make_vec("G20Rotate-v0", num_envs=n, vectorization_mode="vector_entry_point", episode_length_s=1e3)
    venv.reset(seed=0)
    task = venv.unwrapped.task
    drive = task.drive
    raw = mj_batch.Batch(task.model, n, nthread=task.num_threads)
    raw.state[:] = drive.batch._batch.state  # the same states: the grasps the resets drew
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, n, 16)).astype(np.float32) * 0.2
    ctrl = raw.bind("ctrl")

    def vec_pass() -> float:
        t0 = time.perf_counter()
        for a in actions:
            venv.step(a)
        return time.perf_counter() - t0

    def raw_pass() -> float:
        t0 = time.perf_counter()
        for _ in range(steps):
            ctrl[:] = drive.control[:, -1]  # the env's last targets: the same physics work
            raw.step(nstep=task.nsub)
        return time.perf_counter() - t0

    ratio = [vec_pass() / raw_pass() for _ in range(rounds)]
    q1, med, q3 = statistics.quantiles(ratio, n=4)
    sps = n * steps / statistics.median([vec_pass() for _ in range(3)])
    print(f"N = {n:3d}: native vector env over raw mujoco.batch (x{task.nsub} substeps) {statistics.median(ratio):4.2f}x "
          f"(median of {rounds} interleaved rounds; quartiles {q1:4.2f}-{q3:4.2f}x), {sps:7.0f} env-steps/s")  # fmt: skip
    venv.close()
    return statistics.median(ratio)


def _grasps_at(env_id: str, physics, folder: Path) -> str:
    """A small grasp cache of ``env_id``'s object made with ``physics`` (the stored ones are made with today's)."""
    from dexwheel.tasks.in_hand import grasp_cache, grasps

    obj = gym.spec(env_id).make().unwrapped.cfg.object
    path = folder / f"{env_id}.npz"
    grasp_cache.save(grasps.sample("left", obj, 8, seed=0, physics=physics), path)
    return str(path)


def bench_physics_step(env_id: str, other, label: str, n: int, steps: int, rounds: int) -> float:
    """Env-steps/s of ``env_id`` with today's physics and with ``other`` (its own grasps), interleaved rounds in one
    process; returns today's speed-up."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        kinds = {"today": {}, "other": {"physics": other.as_dict(), "grasps": _grasps_at(env_id, other, Path(tmp))}}
        envs = {name: gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", episode_length_s=1e3,
                                   **kw) for name, kw in kinds.items()}  # fmt: skip
        actions = np.random.default_rng(0).uniform(-1, 1, (steps, n, 16)).astype(np.float32) * 0.2
        for venv in envs.values():
            venv.reset(seed=0)

        def timed(venv) -> float:
            t0 = time.perf_counter()
            for a in actions:
                venv.step(a)
            return time.perf_counter() - t0

        times: dict[str, list[float]] = {name: [] for name in envs}
        for _ in range(rounds):
            for name, venv in envs.items():
                times[name].append(timed(venv))
        sps = {name: n * steps / statistics.median(t) for name, t in times.items()}
        task = {name: venv.unwrapped.task for name, venv in envs.items()}
        steps_of = {name: f"{t.timestep * 1000:g} ms x {t.nsub}" for name, t in task.items()}
        for venv in envs.values():
            venv.close()
    speedup = sps["today"] / sps["other"]
    print(f"N = {n:3d} {env_id}: today's physics ({steps_of['today']}) {sps['today']:7.0f} env-steps/s; {label} "
          f"({steps_of['other']}) {sps['other']:7.0f} env-steps/s: {speedup:4.1f}x (median of {rounds} interleaved "
          "rounds)")  # fmt: skip
    return speedup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds (smoke run)")
    args = parser.parse_args()
    steps, rounds = (10, 3) if args.quick else (40, 15)
    print(f"G20Rotate-v0 benchmark: {os.cpu_count()} CPUs, mujoco {mujoco.__version__}, gymnasium {gym.__version__}")
    for n in (8,) if args.quick else (32, 128):
        bench_raw_batch(n, steps, rounds)
    from dexwheel.tasks.in_hand.physics import LEGACY, InHandPhysicsCfg

    for n in (8,) if args.quick else (32, 128):
        r = 3 if args.quick else 5
        bench_physics_step("G20RotateZ-v0", LEGACY, "before issue 70 (the spec's step and contacts)", n, steps, r)
        bench_physics_step("G20Rotate-v0", InHandPhysicsCfg(0.002, 0.01), "the spec's step", n, steps, r)


if __name__ == "__main__":
    main()
