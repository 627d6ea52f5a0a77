"""The step benchmark (:mod:`dexwheel.protocols.steps`) on MuJoCo: each scene through the velocity task; and the
loop every backend's runner shares (:func:`run_protocol`; Isaac Lab's is :mod:`dexwheel.isaaclab.step_benchmark`).

Each scene is the env of the policy's own config (its robot, task, observations: blind or with the height
scan, whatever the policy reads) with the scene as its terrain (a fixed
:class:`~dexwheel.terrain.TerrainDescription`: no curriculum), nominal physics (domain randomisation and
pushes off) and episodes a second longer than the protocol's longest time limit. A trial resets the env with the trial's
seed and start pose and holds its command (``reset(options={"base_pose": ..., "command": ...})``), steps the
policy until :class:`~dexwheel.protocols.steps.TrialJudge` decides, and the table counts the outcomes.
With a video path, the first trial of each scene and direction (one climb and one descent per height, up first) is
rendered into one MP4.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from dexwheel.protocols import steps
from dexwheel.rl.evaluation import Policy, video_writer
from dexwheel.terrain import TerrainDescription


def benchmark_env_kwargs(bench: steps.StepBenchmarkCfg) -> dict[str, Any]:
    """The env settings the protocol fixes on top of the policy's config."""
    return {"domain_rand": {"enabled": False}, "episode_length_s": steps.longest_time_limit(bench) + 1.0}


#: Runs a scene's trials (every direction, in table order) in an open scene: each trial's ``(outcome, time s)``, in
#: the same order, yielded as they are decided (one env after the other on MuJoCo, all at once on Isaac Lab).
SceneRunner = Callable[[list[steps.TrialSpec]], Iterable[tuple[str, float]]]


def run_protocol(bench: steps.StepBenchmarkCfg,
                 open_scene: Callable[[steps.Scene], contextlib.AbstractContextManager[SceneRunner]],
                 progress: bool = False) -> dict[str, Any]:  # fmt: skip
    """Every trial of ``bench`` on any backend: the loop over the scenes, the trials of each
    (:func:`~dexwheel.protocols.steps.trials`), the table and the outcome letters, shared by the MuJoCo runner
    (:func:`run_step_benchmark`) and Isaac Lab's (:mod:`dexwheel.isaaclab.step_benchmark`). ``open_scene(scene)``
    builds the backend's env on the scene and yields the :data:`SceneRunner` for it (closing the env after).
    Returns ``{"rows": table rows, "outcomes": {row label: "SFT..." per trial}}``."""
    scenes = steps.scenes(bench)
    total = len(scenes) * len(bench.directions) * bench.trials
    tty = sys.stderr.isatty()
    outcomes: dict[tuple[str, float, str], list[tuple[str, float]]] = {}
    letters: dict[str, str] = {}
    if progress and not tty:  # a log reads the rows' letters without the docs at hand
        print(f"step benchmark: {total} trials; per scene and direction one letter a trial, in order: "
              f"{', '.join(f'{o[0].upper()} {o}' for o in steps.OUTCOMES)}", flush=True)  # fmt: skip
    with tqdm(total=total, desc="step benchmark", unit="trial", disable=not (progress and tty)) as bar:
        for scene in scenes:
            specs = [t for d in bench.directions for t in steps.trials(scene, d, bench)]
            with open_scene(scene) as run_scene:
                results = iter(run_scene(specs))
                for direction in bench.directions:
                    key = (scene.name, scene.height, direction)
                    rows = outcomes.setdefault(key, [])
                    for _ in range(bench.trials):
                        result = next(results, None)
                        if result is None:
                            raise RuntimeError(f"the {scene.label} runner gave {len(rows)} results for {direction}, "
                                               f"expected {bench.trials}")  # fmt: skip
                        rows.append(result)
                        bar.update(1)
                    label = f"{scene.name} {scene.height:.3f} {direction}"
                    letters[label] = "".join(o[0].upper() for o, _ in rows)
                    if progress and not tty:
                        print(f"step benchmark: {label}: {letters[label]}", flush=True)
    return {"rows": steps.summarize(outcomes), "outcomes": letters}


def run_step_benchmark(make_env: Callable[[TerrainDescription], gym.Env], policy_for: Callable[[gym.Env], Policy],
                       bench: steps.StepBenchmarkCfg, video_path: Path | None = None, progress: bool = False,
                       fps: int | None = None) -> dict[str, Any]:  # fmt: skip
    """Every trial of ``bench`` on MuJoCo (:func:`run_protocol`), one after the other in one env per scene:
    ``make_env(description)`` builds a scene's env (with :func:`benchmark_env_kwargs` applied;
    ``render_mode="rgb_array"`` for a video), ``policy_for(env)`` the policy acting in it. Returns
    ``{"rows": table rows, "outcomes": {row label: "SFT..." per trial}}``."""
    with contextlib.ExitStack() as stack:
        video: list[Callable[[np.ndarray], None]] = []  # the writer, opened with the first env (its frame rate)

        @contextlib.contextmanager
        def open_scene(scene: steps.Scene) -> Iterator[SceneRunner]:
            env = make_env(scene.description)
            try:
                if video_path is not None and not video:
                    rate = fps or int(round(env.metadata.get("render_fps", 30)))
                    video.append(stack.enter_context(video_writer(video_path, rate)))
                policy, dt = policy_for(env), float(env.unwrapped.dt)

                def run_scene(specs: list[steps.TrialSpec]) -> Iterator[tuple[str, float]]:
                    for spec in specs:  # on video: each direction's first trial (a climb and a descent)
                        record = video[0] if video and spec.index == 0 else None
                        yield run_trial(env, policy, spec, dt, record)

                yield run_scene
            finally:
                env.close()

        return run_protocol(bench, open_scene, progress)


def run_trial(env: gym.Env, policy: Policy, spec: steps.TrialSpec, dt: float,
              add_frame: Callable[[np.ndarray], None] | None = None) -> tuple[str, float]:  # fmt: skip
    """One trial: ``(outcome, time s)``."""
    obs, _ = env.reset(seed=spec.reset_seed, options={"base_pose": (spec.x, spec.y, spec.yaw),
                                                       "command": spec.command})  # fmt: skip
    judge = steps.TrialJudge(spec, dt)
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
