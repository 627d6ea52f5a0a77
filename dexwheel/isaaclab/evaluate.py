"""Evaluation episodes on Isaac Lab: ``python -m dexwheel.isaaclab.evaluate <job.json>`` in the Isaac Lab venv.

``scripts/evaluate.py ... backend=isaaclab`` writes the job (:func:`dexwheel.rl.isaaclab_launch.evaluate_on_isaaclab`):
the resolved env config, the policy (an rsl_rl checkpoint, an exported ONNX policy, or a zero / random
baseline), the number of episodes and the seed. Each episode runs in its own Isaac Lab env
(:func:`~dexwheel.isaaclab.episodes.isaac_episodes`), with the MuJoCo evaluations' metrics; the summary
comes back as one JSON line. A job with ``steps`` (``benchmark=steps``: the protocol's fields) runs the step
benchmark instead (:mod:`dexwheel.isaaclab.step_benchmark`) and sends its table back; a job with ``in_hand``
(``benchmark=rotation`` or ``reorient``) the in-hand benchmark (:func:`in_hand_benchmark`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from tensordict import TensorDict

from dexwheel.isaaclab.episodes import (
    BatchPolicy,
    action_bounds,
    actor_batch_policy,
    isaac_episodes,
    make_task_venv,
)
from dexwheel.rl.isaaclab_launch import child_main
from dexwheel.rl.rsl.cfg import POLICY_GROUP
from dexwheel.rl.schema import ConfigError


def onnx_policy(session: Any, clip: tuple[list[float], list[float]], device: str) -> BatchPolicy:
    """An exported policy (``scripts/export.py``; ``session``: its onnxruntime session) on the policy observation
    group, its actions clipped to ``clip``."""
    name = session.get_inputs()[0].name
    low, high = (torch.as_tensor(np.asarray(b, dtype=np.float32), device=device) for b in clip)

    def act(obs: TensorDict) -> torch.Tensor:
        x = obs[POLICY_GROUP].detach().cpu().numpy().astype(np.float32)
        out = torch.as_tensor(session.run(None, {name: x})[0], device=device)
        return torch.maximum(torch.minimum(out, high), low)

    return act


def baseline(kind: str, num_actions: int, seed: int, device: str,
             bounds: tuple[torch.Tensor, torch.Tensor] | None = None) -> BatchPolicy:  # fmt: skip
    """``zero`` actions, or ``random`` ones uniform over ``bounds`` (default [-1, 1])."""
    generator = torch.Generator(device=device).manual_seed(seed)
    low, high = bounds if bounds is not None else (-torch.ones(num_actions), torch.ones(num_actions))
    low, high = low.to(device), high.to(device)

    def act(obs: TensorDict) -> torch.Tensor:
        n = obs.batch_size[0]
        if kind == "zero":
            return torch.zeros(n, num_actions, device=device)
        return low + torch.rand(n, num_actions, generator=generator, device=device) * (high - low)

    return act


def job_policy(job: dict, cfg: DictConfig, venv, device: str) -> BatchPolicy:
    """The job's policy acting in ``venv``: its rsl_rl checkpoint's actor, its ONNX export (either refused when
    the task's policy observation has another size) or a baseline."""
    obs_dim = venv.get_observations()[POLICY_GROUP].shape[1]
    if job["policy"] == "trained":
        from dexwheel.rl.rsl import load_actor

        actor = load_actor(Path(job["checkpoint"]), cfg, venv.unwrapped.single_action_space)
        if actor.obs_dim != obs_dim:
            raise ConfigError(
                f"checkpoint: the actor reads {actor.obs_dim} observations, the Isaac Lab task gives {obs_dim}"
            )
        return actor_batch_policy(actor.to(device), action_bounds(venv))
    if job["policy"] == "onnx":
        from dexwheel.rl.export import ExportedPolicy

        # checked again here: the files may have changed since the parent checked them
        exported = ExportedPolicy.load(job["onnx"])
        if exported.metadata != job["metadata"]:
            raise ConfigError(f"onnx: {exported.path.with_suffix('.json')} changed since the evaluation started")
        if exported.obs_size != obs_dim:
            raise ConfigError(
                f"onnx: the policy reads {exported.obs_size} observations, the Isaac Lab task gives {obs_dim}"
            )
        return onnx_policy(exported.model, tuple(exported.metadata["action"]["clip"]), device)
    return baseline(job["policy"], venv.num_actions, int(job["eval_seed"]), device, action_bounds(venv))


def evaluate(job: dict) -> dict:
    """The job's episodes' summary, or with ``steps`` (a step benchmark protocol) the benchmark's table."""
    cfg = OmegaConf.create(job["config"])
    device, seed = job.get("device", "cpu"), int(job["eval_seed"])
    if job.get("steps") is not None:
        from dexwheel.isaaclab.step_benchmark import run_step_benchmark
        from dexwheel.protocols.steps import make_cfg

        bench = make_cfg(job["steps"])
        return run_step_benchmark(cfg, lambda venv: job_policy(job, cfg, venv, device), bench, device,
                                  job.get("overrides"), progress=True)  # fmt: skip
    if job.get("in_hand") is not None:
        return in_hand_benchmark(job, cfg, device)
    n = int(job["episodes"])
    venv = make_task_venv(cfg, n, device, seed, job.get("overrides"))
    try:
        policy = job_policy(job, cfg, venv, device)
        return isaac_episodes(venv, policy, cfg.task.name, n, seed).summary()
    finally:
        venv.close()


def in_hand_benchmark(job: dict, cfg: DictConfig, device: str) -> dict:
    """The in-hand benchmark (:mod:`dexwheel.protocols.in_hand`) on Isaac Lab: per object of the protocol, one
    Isaac Lab env per trial with that object (its grasp cache) and ``seconds`` per episode, all reset with
    ``reset_seed``; the rows as the MuJoCo side makes them. The grasps are drawn from torch's generator: the same
    cache, not the same grasp per trial as MuJoCo's seeds ``reset_seed + k``."""
    from dexwheel.protocols import in_hand as benchmark
    from dexwheel.rl.env_factory import env_kwargs
    from dexwheel.rl.isaaclab_launch import log

    bench = benchmark.make_cfg(job["in_hand"])
    rows = []
    for spec in bench.specs:
        log.info(f"{cfg.task.name}: {benchmark.label(spec)}: {bench.trials} trials on Isaac Lab")
        overrides = job.get("overrides", {})
        fixed = benchmark.trial_env_kwargs(spec, bench.seconds, env_kwargs(cfg, overrides))
        venv = make_task_venv(cfg, bench.trials, device, bench.reset_seed, {**overrides, **fixed})
        try:
            policy = job_policy(job, cfg, venv, device)
            episodes = isaac_episodes(venv, policy, cfg.task.name, bench.trials, bench.reset_seed).episodes
        finally:
            venv.close()
        rows.append(benchmark.row(spec, episodes, bench.seconds))
    return {"rows": rows}


def evaluate_job(path: Path) -> dict[str, float]:
    return evaluate(json.loads(path.read_text()))


if __name__ == "__main__":
    child_main(evaluate_job)
