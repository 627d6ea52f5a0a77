"""Gymnasium's Ant-v5 measured like the dexwheel envs: a same-run reference for env.step overhead.

The env-overhead targets are set against Ant-v5 (Gymnasium's MuJoCo v5 envs, the model dexwheel
follows). Its ratio depends on how heavy its physics is, so the reference also reports the absolute
overhead (env.step minus the raw physics, in microseconds), which compares across models.
"""

from __future__ import annotations

import statistics
import time

import gymnasium as gym
import mujoco
import numpy as np

_STATE = mujoco.mjtState.mjSTATE_INTEGRATION


def ant_v5_overhead(steps: int, rounds: int) -> tuple[float, float, float]:
    """``(median ratio, raw us, overhead us)`` of Ant-v5's env.step over ``mj_step`` x frame_skip.

    The raw pass replays the same actions as controls from the same initial state on a separate
    MjData; env and raw passes alternate in rounds and the median round is reported.
    """
    env = gym.make("Ant-v5", terminate_when_unhealthy=False)  # no resets inside the timed passes
    ant = env.unwrapped
    model, raw = ant.model, mujoco.MjData(ant.model)
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, model.nu))
    state = np.zeros(mujoco.mj_stateSize(model, _STATE))
    ratios, raw_us, over_us = [], [], []
    for _ in range(rounds):
        env.reset(seed=0)
        mujoco.mj_getState(model, ant.data, state, _STATE)
        t0 = time.perf_counter()
        for a in actions:
            env.step(a)
        t_env = time.perf_counter() - t0
        mujoco.mj_setState(model, raw, state, _STATE)
        t0 = time.perf_counter()
        for a in actions:
            raw.ctrl[:] = a
            mujoco.mj_step(model, raw, ant.frame_skip)
        t_raw = time.perf_counter() - t0
        ratios.append(t_env / t_raw)
        raw_us.append(t_raw / steps * 1e6)
        over_us.append((t_env - t_raw) / steps * 1e6)
    env.close()
    return statistics.median(ratios), statistics.median(raw_us), statistics.median(over_us)


def print_reference(steps: int, rounds: int) -> None:
    ratio, raw, over = ant_v5_overhead(steps, rounds)
    print(
        f"{'reference: Gymnasium Ant-v5':<34} raw (mj_step x 5) {raw:6.1f} us | env.step ratio {ratio:4.2f} "
        f"| overhead {over:5.1f} us per step"
    )
