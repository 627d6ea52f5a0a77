"""The step benchmark (:mod:`dexwheel.protocols.steps`) on Isaac Lab: every trial of a scene at once, one env each.

The protocol, the scenes, the trials, the judge and the table are the MuJoCo runner's (:func:`dexwheel.rl.step_benchmark.run_protocol`
drives both). Per scene, the policy's own task (its robot, task and observations: blind, or with the height scan)
with the scene's :class:`~dexwheel.terrain.TerrainDescription` as its terrain
(:class:`~dexwheel.isaaclab.terrain.DescriptionTerrainImporter`) and the protocol's env settings
(:func:`~dexwheel.rl.step_benchmark.benchmark_env_kwargs`: domain randomisation and pushes off, episodes a second
longer than the protocol's longest time limit), with one env per trial of the scene (every direction: ``trials * len(directions)``
envs; Isaac Lab envs do not collide with each other, so they share the scene). One reset, then each env is moved to
its trial's start pose as the MuJoCo task's ``place_base`` does it (the reset's knees and velocities, the base
level, turned to the trial's heading, standing on the ground under the robot's footprint there:
:func:`~dexwheel.tasks.velocity.terrain.ground_under`) and its command is held (no resampling, no standing envs).
Each env is judged every control step by its own :class:`~dexwheel.protocols.steps.TrialJudge` on its base origin
after the physics and before Isaac Lab's resets (:func:`~dexwheel.isaaclab.tasks.velocity.terminations.record_base_position`): an env
whose episode terminates is a fall, and its auto-reset is never judged.

Not the same as MuJoCo: the start-pose noise (``reset_noise_scale``) comes from torch's generator seeded with the
evaluation seed, not from each trial's ``reset_seed``: the same distribution, not the same numbers.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator

import torch
from isaaclab.managers import TerminationTermCfg
from omegaconf import DictConfig

from dexwheel.isaaclab.episodes import BatchPolicy, make_task_venv
from dexwheel.isaaclab.tasks.velocity.config import COMMAND
from dexwheel.isaaclab.tasks.velocity.terminations import record_base_position
from dexwheel.protocols import steps
from dexwheel.rl.step_benchmark import SceneRunner, benchmark_env_kwargs, run_protocol
from dexwheel.tasks.velocity.terrain import ground_under

#: The termination term (never terminating) that records the bases before the resets.
RECORD_TERM = "benchmark_base_position"


def _record_positions(env_cfg) -> None:
    setattr(env_cfg.terminations, RECORD_TERM, TerminationTermCfg(func=record_base_position))


def scene_venv(cfg: DictConfig, scene: steps.Scene, bench: steps.StepBenchmarkCfg, num_envs: int, device: str,
               seed: int, overrides: dict | None = None):  # fmt: skip
    """``cfg``'s Isaac Lab task on ``scene`` (its description as the terrain, the protocol's env settings on top of
    ``overrides``) with ``num_envs`` envs, recording the bases before the resets; rsl_rl's env
    (:func:`~dexwheel.isaaclab.episodes.make_task_venv`, as every Isaac Lab evaluation)."""
    fixed = benchmark_env_kwargs(bench)
    clash = sorted(set(fixed) & set(overrides or {}))
    if clash:
        raise ValueError(f"env_overrides: {clash} are fixed by the step benchmark's protocol")
    kwargs = {**(overrides or {}), **fixed, "terrain": scene.description}
    return make_task_venv(cfg, num_envs, device, seed, kwargs, configure=_record_positions)


def start_trials(venv, specs: list[steps.TrialSpec]):
    """Reset every env and put env ``i`` at ``specs[i]``'s start pose with its command held; the observations
    after it. The MuJoCo task's ``reset(options={"base_pose": ..., "command": ...})``: the reset's own draws (knees,
    velocities), the base level at ``(x, y)`` facing ``yaw``, its height over the ground there the reset's over the
    env origin (the lowest wheel 0.5 mm above it)."""
    u = venv.unwrapped
    if len(specs) != u.num_envs:
        raise ValueError(f"{len(specs)} trials need as many Isaac Lab envs, the task has {u.num_envs}")
    venv.reset()
    robot, device = u.scene["robot"], u.device
    desc = u.scene.terrain.description
    ground = torch.tensor([ground_under(desc, s.x, s.y) for s in specs], device=device)
    yaw = torch.tensor([s.yaw for s in specs], device=device, dtype=torch.float64)
    pose = torch.zeros(len(specs), 7, device=device)
    pose[:, 0] = torch.tensor([s.x for s in specs], device=device)
    pose[:, 1] = torch.tensor([s.y for s in specs], device=device)
    pose[:, 2] = robot.data.root_link_pos_w.torch[:, 2] - u.scene.env_origins[:, 2] + ground
    pose[:, 5], pose[:, 6] = torch.sin(yaw / 2).float(), torch.cos(yaw / 2).float()  # x, y, z, w: level, turned
    robot.write_root_link_pose_to_sim_index(root_pose=pose, env_ids=torch.arange(len(specs), device=device).int())
    command = u.command_manager.get_term(COMMAND)
    command.vel_command_b[:, 0] = torch.tensor([s.command[0] for s in specs], device=device)
    command.vel_command_b[:, 1] = 0.0
    command.vel_command_b[:, 2] = torch.tensor([s.command[1] for s in specs], device=device)
    command.is_standing_env[:] = False
    command.time_left[:] = math.inf  # held: never resampled
    u.scene.write_data_to_sim()  # as Isaac Lab's reset ends: kinematics, then the observations
    u.sim.forward()
    u.obs_buf = u.observation_manager.compute(update_history=True)
    return venv.get_observations()


def run_trials(venv, policy: BatchPolicy, specs: list[steps.TrialSpec]) -> list[tuple[str, float]]:
    """Every trial of ``specs`` at once, env ``i`` running ``specs[i]``, until each is decided: ``(outcome, time
    s)`` per trial, in order. An env whose episode ran out undecided (the physics, or the episode length) is a
    timeout, as on MuJoCo."""
    u = venv.unwrapped
    obs = start_trials(venv, specs)
    judges = [steps.TrialJudge(spec, u.step_dt) for spec in specs]
    terms = u.termination_manager
    while any(j.outcome is None for j in judges):
        with torch.inference_mode():
            actions = policy(obs)
        obs, _, _, _ = venv.step(actions)
        x = u.dexwheel_base_pos_w[:, 0].cpu().numpy()
        fell, out = terms.terminated.cpu().numpy(), terms.time_outs.cpu().numpy()
        for i, judge in enumerate(judges):
            if judge.outcome is None and judge.step(float(x[i]), bool(fell[i])) is None and out[i]:
                judge.outcome = "timeout"
    return [(j.outcome, j.time_s) for j in judges]  # type: ignore[misc]


def run_step_benchmark(cfg: DictConfig, policy_for: Callable[[object], BatchPolicy], bench: steps.StepBenchmarkCfg,
                       device: str = "cpu", overrides: dict | None = None, seed: int | None = None,
                       progress: bool = False) -> dict:  # fmt: skip
    """Every trial of ``bench`` on ``cfg``'s Isaac Lab task (:func:`~dexwheel.rl.step_benchmark.run_protocol`):
    one env per scene with all its trials at once; ``policy_for(venv)`` the policy acting in it; ``seed`` (default
    ``bench.reset_seed``) seeds each scene's env. Returns ``{"rows": table rows, "outcomes": {row label: "SFT..."
    per trial}}``, as the MuJoCo runner."""
    n = bench.trials * len(bench.directions)

    @contextlib.contextmanager
    def open_scene(scene: steps.Scene) -> Iterator[SceneRunner]:
        venv = scene_venv(cfg, scene, bench, n, device, bench.reset_seed if seed is None else seed, overrides)
        try:
            policy = policy_for(venv)
            yield lambda specs: run_trials(venv, policy, specs)
        finally:
            venv.close()

    return run_protocol(bench, open_scene, progress)
