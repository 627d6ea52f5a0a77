"""Benchmark G20Hand-v0: env.step cost over the raw physics it performs, and the native vector env.

Run: ``python benchmarks/bench_g20_env.py [--quick]``. Everything is measured in the same run and
printed as ratios (no absolute targets are asserted anywhere):

1. ``env.step`` over raw physics: hard-write against one ``mj_forward`` per step, PD against
   ``mj_step`` x steps per control period, replaying exactly the poses/targets the env produced.
   Cases: hard-write without and with collision projection, moving in free space; hard-write with
   projection moving into and out of a pose with active contacts (thumb pressed into the palm);
   PD in free space and in contact. With projection, a second ratio counts the projection's own
   physics too: a step whose candidate penetrates (``projection_checks`` >= 2) also forwards the
   candidate and runs the projection itself (``project_pose``, replayed compiled on the recorded
   start and candidate, its result checked against the env's); a candidate within the tolerance
   costs the one ``mj_forward`` alone. Env and
   raw timings alternate in rounds (shared machines are noisy); each round gives a ratio and the
   median round is printed, for the bare env and for the ``gymnasium.make`` stack. Resets happen
   outside the timed passes.
2. Native vector env (``vectorization_mode="vector_entry_point"``) against a Python loop over N
   single envs, at N = 1, 8, 64, both drives, random actions: env-steps per second (median rounds)
   and the speed-up: the median over rounds of the ratio of a loop round to the native round just
   before it, with its quartiles (the second core of a shared machine comes and goes); also against
   gymnasium's ``SyncVectorEnv`` of the same envs (the loop with its batching). Before them,
   the machine's own headroom in the same run: how much faster 8 ``mj_forward`` calls on separate
   MjData run on two threads than on one (balanced work, no env around it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym  # noqa: E402
import mujoco  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402
from reference import print_reference  # noqa: E402  (benchmarks/, the script's own directory)

from dexwheel.control import G20_MIMIC  # noqa: E402
from dexwheel.control.coupling import complete_into  # noqa: E402
from dexwheel.envs import register_envs  # noqa: E402
from dexwheel.robots.g20 import ACTIVE_JOINTS  # noqa: E402
from dexwheel.sim.mujoco_c import mj_forward  # noqa: E402
from dexwheel.sim.projection import project_pose  # noqa: E402

register_envs()


def _clock(fn: Callable[[], None], n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def _command_cycle(env: gym.Env, names: tuple[str, ...], hold: int) -> list[np.ndarray]:
    """Normalized actions that command each preset in turn for ``hold`` steps."""
    task = env.unwrapped.task
    acts = []
    for name in names:
        q = task.presets[name]
        a = np.clip((q - task.actions.lower) / task.actions.half_span - 1.0, -1, 1).astype(np.float32)
        acts += [a] * hold
    return acts


def bench_single(case: str, drive: str, projection: bool, names: tuple[str, ...], steps: int, rounds: int) -> None:
    kwargs = {"drive": drive, "collision": {"projection": projection}, "goal_mode": "presets", "reset_noise_scale": 0.0}
    wrapped = gym.make("G20Hand-v0", **kwargs)
    env = wrapped.unwrapped
    acts = _command_cycle(env, names, hold=12)
    nacts = len(acts)
    model, task = env.model, env.task
    raw_data = mujoco.MjData(model)

    # One pass records what the physics did, to replay it raw.
    wrapped.reset(seed=0)
    poses, ctrls, checks, projected = [], [], [], []
    state = task.drive.state[0] if drive == "hard_write" else None
    for k in range(steps):
        before = (state["q"].copy(), state["safe"], state["last_safe"].copy()) if state is not None else None
        _, _, _, _, info = wrapped.step(acts[k % nacts])
        poses.append(env.data.qpos.copy())
        if drive == "pd":  # the controls of every physics step (the slew ramps the targets)
            ctrls.append(task.drive.control[0].copy())
        checks.append(info["projection_checks"])
        if info["projection_checks"] >= 2:  # start, candidate, start safe?, last safe, result
            projected.append((before[0], state["candidate"].copy(), before[1], before[2], state["q"].copy()))
    nsub = task.nsub

    def raw_pass() -> None:
        d = raw_data
        if drive == "hard_write":
            for p in poses:
                d.qpos[:] = p
                mujoco.mj_forward(model, d)
        else:
            for rows in ctrls:
                for c in rows:
                    d.ctrl[:] = c
                    mujoco.mj_step(model, d)

    proj = task.projector
    d = mujoco.MjData(model)
    replay_args = (model._address, d._address, d.qpos, d.sensordata, proj.qpos_adr, proj.sensor_adr,
                   task.coupling.arrays, *proj.trial_tables(d), proj.tol, proj.iters, proj.group_free,
                   *(np.array(column) for column in zip(*projected, strict=True)))  # fmt: skip

    def projection_pass() -> None:  # what the projection adds in MuJoCo and its own arithmetic
        if projected:
            projection_replay(*replay_args)

    projection_pass()  # compiled before the timed rounds, and checked: the replay is the env's projection

    def env_pass(e: gym.Env) -> float:
        e.reset(seed=0)
        t = time.perf_counter()
        for k in range(steps):
            e.step(acts[k % nacts])
        return time.perf_counter() - t

    raw, bare, made, check = [], [], [], []
    for _ in range(rounds):  # interleaved, so each round's ratios compare passes under the same load
        mujoco.mj_resetData(model, raw_data)
        raw.append(_clock(raw_pass, 1) / steps)
        bare.append(env_pass(env) / steps)
        made.append(env_pass(wrapped) / steps)
        check.append(_clock(projection_pass, 1) / steps)
    r_bare = statistics.median(b / r for b, r in zip(bare, raw, strict=True))
    r_made = statistics.median(m / r for m, r in zip(made, raw, strict=True))
    raw_what = "1 mj_forward" if drive == "hard_write" else f"{nsub} mj_step"
    overhead = statistics.median(m - r for m, r in zip(made, raw, strict=True))
    line = (
        f"{case:<34} raw ({raw_what:>12}) {statistics.median(raw) * 1e6:6.1f} us | env.step "
        f"{statistics.median(bare) * 1e6:6.1f} us ratio {r_bare:5.2f} | via make {statistics.median(made) * 1e6:6.1f} us "
        f"ratio {r_made:5.2f}, overhead {overhead * 1e6:5.1f} us"
    )
    if projection:
        c = np.asarray(checks)
        rejected = np.mean(c >= 2)
        with_checks = [r + t for r, t in zip(raw, check, strict=True)]
        r_checks = statistics.median(b / w for b, w in zip(bare, with_checks, strict=True))
        line += (
            f" | {c.mean():4.2f} checks/step ({rejected:4.0%} of candidates penetrate), "
            f"ratio over raw incl. projection {r_checks:5.2f}"
        )
    print(line)
    wrapped.close()


@numba.njit
def projection_replay(model: int, data: int, qpos: np.ndarray, sensors: np.ndarray, qpos_adr: np.ndarray,
                      sensor_adr: np.ndarray, completion: tuple, pair_tables: tuple, rigid_tables: tuple, tol: float,
                      iters: int, group_free: bool, starts: np.ndarray, candidates: np.ndarray, safe: np.ndarray,
                      last_safe: np.ndarray, results: np.ndarray) -> None:  # fmt: skip
    """Each recorded projection again: the candidate's ``mj_forward`` (its contact sensors are the
    first check), then ``project_pose``; raises if a result differs from the env's."""
    full, scratch, out = np.empty(qpos_adr.shape[0]), np.empty(qpos_adr.shape[0]), np.empty(starts.shape[1])
    for k in range(starts.shape[0]):
        complete_into(candidates[k], completion, True, full)
        for j in range(full.shape[0]):
            qpos[qpos_adr[j]] = full[j]
        mj_forward(model, data)
        project_pose(model, data, qpos, sensors, qpos_adr, sensor_adr, completion, pair_tables, rigid_tables, tol,
                     iters, group_free, starts[k], candidates[k], safe[k], last_safe[k], out, scratch)  # fmt: skip
        for j in range(out.shape[0]):
            if out[j] != results[k, j]:
                raise AssertionError("projection_replay: the replayed projection differs from the env's")


class _FloorEnv(gym.Env):
    """The least a hard-write env can do: write the action into qpos, one mj_forward, copy qpos out."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self.model, self.data = model, mujoco.MjData(model)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (len(ACTIVE_JOINTS),), np.float32)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (model.nq,), np.float64)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return self.data.qpos.copy(), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.data.qpos[: len(action)] = action
        mujoco.mj_forward(self.model, self.data)
        return self.data.qpos.copy(), 0.0, False, False, {}


def bench_floor(steps: int, rounds: int) -> None:
    """The same ratio for :class:`_FloorEnv` through gymnasium's wrappers: the floor of any hard-write env."""
    model = gym.make("G20Hand-v0").unwrapped.model
    env = gym.wrappers.TimeLimit(gym.wrappers.OrderEnforcing(_FloorEnv(model)), max_episode_steps=10**9)
    raw = mujoco.MjData(model)
    actions = np.random.default_rng(0).uniform(0.0, 0.5, (steps, len(ACTIVE_JOINTS)))
    ratios = []
    for _ in range(rounds):
        env.reset(seed=0)
        t0 = time.perf_counter()
        for a in actions:
            env.step(a)
        t_env = time.perf_counter() - t0
        t0 = time.perf_counter()
        for a in actions:
            raw.qpos[: len(a)] = a
            mujoco.mj_forward(model, raw)
        ratios.append(t_env / (time.perf_counter() - t0))
    print(
        f"{'floor: mj_forward + qpos copy env':<34} via TimeLimit + OrderEnforcing ratio {statistics.median(ratios):5.2f}"
    )


def bench_vector(drive: str, n: int, steps: int, rounds: int) -> None:
    """Env-steps per second, native vs a loop of single envs (the target's baseline) and vs gymnasium's
    ``SyncVectorEnv`` (the same loop with its batching, what ``vectorization_mode="sync"`` gives);
    finished episodes reset in all three (the vector envs autoreset)."""
    kwargs = {"drive": drive}
    vec = gym.make_vec("G20Hand-v0", num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
    sync = gym.make_vec("G20Hand-v0", num_envs=n, vectorization_mode="sync", **kwargs)
    singles = [gym.make("G20Hand-v0", **kwargs) for _ in range(n)]
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (rounds * steps, n, len(ACTIVE_JOINTS))).astype(np.float32)
    vec.reset(seed=0)
    sync.reset(seed=0)
    for i, e in enumerate(singles):
        e.reset(seed=i)

    def vec_pass(r: int, env: gym.vector.VectorEnv) -> Callable[[], None]:
        def run() -> None:
            for k in range(r * steps, (r + 1) * steps):
                env.step(actions[k])

        return run

    def loop_pass(r: int) -> Callable[[], None]:
        def run() -> None:
            for k in range(r * steps, (r + 1) * steps):
                a = actions[k]
                for i, e in enumerate(singles):
                    _, _, terminated, truncated, _ = e.step(a[i])
                    if terminated or truncated:  # as SyncVectorEnv would, and as the vector env does
                        e.reset()

        return run

    t_vec, t_loop, t_sync = [], [], []
    for r in range(rounds):  # all see the same actions and states, round after round
        t_vec.append(_clock(vec_pass(r, vec), 1))
        t_loop.append(_clock(loop_pass(r), 1))
        t_sync.append(_clock(vec_pass(r, sync), 1))
    ratio = [tl / tv for tv, tl in zip(t_vec, t_loop, strict=True)]
    sps_vec = n * steps / statistics.median(t_vec)
    sps_loop = n * steps / statistics.median(t_loop)
    q1, _, q3 = statistics.quantiles(ratio, n=4)
    over_sync = statistics.median(ts / tv for tv, ts in zip(t_vec, t_sync, strict=True))
    print(
        f"vector {drive:<10} N={n:<3} native {sps_vec:9.0f} env-steps/s | loop of singles {sps_loop:9.0f} "
        f"env-steps/s | speed-up {statistics.median(ratio):5.2f}x (median of {rounds} interleaved rounds; "
        f"quartiles {q1:4.2f}-{q3:4.2f}x) | vs SyncVectorEnv {over_sync:5.2f}x"
    )
    vec.close()
    sync.close()
    for e in singles:
        e.close()


@numba.njit
def forward_each(model: int, datas: np.ndarray, reps: int) -> None:
    """``mj_forward`` of every MjData (addresses), ``reps`` times, on this thread."""
    for _ in range(reps):
        for i in range(datas.shape[0]):
            mj_forward(model, datas[i])


@numba.njit(parallel=True)
def forward_each_threaded(model: int, datas: np.ndarray) -> None:
    """``mj_forward`` of every MjData once, spread over numba's threads (one parallel region)."""
    for i in numba.prange(datas.shape[0]):
        mj_forward(model, datas[i])


def bench_two_cores(n: int, reps: int, rounds: int) -> None:
    """The machine's headroom for threads now: ``n`` forwards (random poses) on 2 threads vs 1."""
    env = gym.make("G20Hand-v0").unwrapped
    model, task = env.model, env.task
    rng = np.random.default_rng(0)
    datas = [mujoco.MjData(model) for _ in range(n)]
    for d in datas:
        d.qpos[task.qpos_adr] = G20_MIMIC.complete(
            rng.uniform(G20_MIMIC.active_lower, G20_MIMIC.active_upper), clip_mimic=True
        )
    addresses = np.array([d._address for d in datas], dtype=np.intp)
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(threads)
    forward_each(model._address, addresses, 1)
    forward_each_threaded(model._address, addresses)
    gains = []
    for _ in range(rounds):
        one = _clock(lambda: forward_each(model._address, addresses, reps), 1)
        two = _clock(lambda: [forward_each_threaded(model._address, addresses) for _ in range(reps)], 1)
        gains.append(one / two)
    q1, _, q3 = statistics.quantiles(gains, n=4)
    print(
        f"two cores: {n} mj_forward calls, one parallel region per round of them, run "
        f"{statistics.median(gains):4.2f}x faster on {threads} threads than on 1 (median of {rounds} rounds; "
        f"quartiles {q1:4.2f}-{q3:4.2f}x): the headroom for the threaded speed-ups below"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds (smoke run)")
    parser.add_argument("--only", choices=("single", "vector"), help="run one part only")
    args = parser.parse_args()
    steps, rounds = (60, 3) if args.quick else (240, 15)
    print(f"G20Hand-v0 benchmark: {os.cpu_count()} CPUs, mujoco {mujoco.__version__}, gymnasium {gym.__version__}")
    if args.only != "vector":
        print("-- env.step over raw physics (median of interleaved rounds) --")
        free = ("open", "half_fist")
        contact = ("half_fist", "full_fist")
        bench_single("hard_write, projection off", "hard_write", False, free, steps, rounds)
        bench_single("hard_write, projection on", "hard_write", True, free, steps, rounds)
        bench_single("hard_write, projection on, contact", "hard_write", True, contact, steps, rounds)
        bench_single("pd", "pd", False, free, steps, rounds)
        bench_single("pd, contact", "pd", False, contact, steps, rounds)
        bench_floor(steps, rounds)
        print_reference(steps, rounds)
    if args.only == "single":
        return
    print("-- native vector env vs a loop of N single envs (random actions) --")
    bench_two_cores(8, 128 if not args.quick else 16, 31 if not args.quick else 3)
    # env-steps per env and round (divided by N/8 for large N); short rounds, many of them, so that a
    # round and its pair see the same machine
    vsteps, vrounds = (64, 3) if args.quick else (128, 31)
    for drive in ("hard_write", "pd"):
        for n in (1, 8, 64):
            bench_vector(drive, n, max(8, vsteps * 8 // max(n, 8)), vrounds)


if __name__ == "__main__":
    main()
