"""The step benchmark (:mod:`dexwheel.benchmarks.steps`) on MuJoCo: each scene through the velocity task.

Each scene is the env of the policy's own config (its robot, task, observations: blind or with the height
scan, whatever the policy reads) with the scene as its terrain (a fixed
:class:`~dexwheel.terrain.TerrainDescription`: no curriculum), nominal physics (domain randomisation and
pushes off) and episodes a second longer than the trial's time limit. A trial resets the env with the trial's
seed and start pose and holds its command (``reset(options={"base_pose": ..., "command": ...})``), steps the
policy until :class:`~dexwheel.benchmarks.steps.TrialJudge` decides, and the table counts the outcomes.
With a video path, the first ``up`` trial of each scene (one climb per height) is rendered into one MP4.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from dexwheel.benchmarks import steps
from dexwheel.rl.evaluation import Policy, video_writer
from dexwheel.terrain import TerrainDescription


def benchmark_env_kwargs(bench: steps.StepBenchmarkCfg) -> dict[str, Any]:
    """The env settings the protocol fixes on top of the policy's config."""
    return {"domain_rand": {"enabled": False}, "episode_length_s": bench.time_limit_s + 1.0}


def run_step_benchmark(make_env: Callable[[TerrainDescription], gym.Env], policy_for: Callable[[gym.Env], Policy],
                       bench: steps.StepBenchmarkCfg, video_path: Path | None = None, progress: bool = False,
                       fps: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Run every trial of ``bench``: ``make_env(description)`` builds a scene's env (with
    :func:`benchmark_env_kwargs` applied; ``render_mode="rgb_array"`` for a video), ``policy_for(env)`` the
    policy acting in it. Returns ``{"rows": table rows, "outcomes": {row label: "SFT..." per trial}}``."""
    scenes = steps.scenes(bench)
    total = len(scenes) * len(bench.directions) * bench.trials
    tty = sys.stderr.isatty()
    bar = tqdm(total=total, desc="step benchmark", unit="trial", disable=not (progress and tty))
    outcomes: dict[tuple[str, float, str], list[tuple[str, float]]] = {}
    letters: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        add_frame = None
        for scene in scenes:
            env = make_env(scene.description)
            try:
                if video_path is not None and add_frame is None:
                    rate = fps or int(round(env.metadata.get("render_fps", 30)))
                    add_frame = stack.enter_context(video_writer(video_path, rate))
                policy = policy_for(env)
                dt = float(env.unwrapped.dt)
                for direction in bench.directions:
                    key = (scene.name, scene.height, direction)
                    results = outcomes.setdefault(key, [])
                    for spec in steps.trials(scene, direction, bench):
                        record = (
                            add_frame if (add_frame is not None and direction == "up" and spec.index == 0) else None
                        )
                        results.append(run_trial(env, policy, spec, bench, dt, record))
                        bar.update(1)
                    label = f"{scene.name} {scene.height:.3f} {direction}"
                    letters[label] = "".join(o[0].upper() for o, _ in results)
                    if progress and not tty:
                        print(f"step benchmark: {label}: {letters[label]}", flush=True)
            finally:
                env.close()
    bar.close()
    return {"rows": steps.summarize(outcomes), "outcomes": letters}


def run_trial(env: gym.Env, policy: Policy, spec: steps.TrialSpec, bench: steps.StepBenchmarkCfg, dt: float,
              add_frame: Callable[[np.ndarray], None] | None = None) -> tuple[str, float]:  # fmt: skip
    """One trial: ``(outcome, time s)``."""
    obs, _ = env.reset(seed=spec.reset_seed, options={"base_pose": (spec.x, spec.y, spec.yaw),
                                                       "command": spec.command})  # fmt: skip
    judge = steps.TrialJudge(spec, bench, dt)
    physics = env.unwrapped.task.physics
    while True:
        obs, _, terminated, truncated, _ = env.step(policy(obs))
        if add_frame is not None:
            add_frame(env.render())
        outcome = judge.step(float(physics.qpos[0, 0]), bool(terminated))
        if outcome is None and truncated:  # the physics blew up, or the episode ran out: undecided
            outcome = judge.outcome = "timeout"
        if outcome is not None:
            return outcome, judge.time_s
