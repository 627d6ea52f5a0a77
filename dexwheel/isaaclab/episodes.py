"""A run's task on Isaac Lab, and deterministic evaluation episodes there with the MuJoCo side's metrics.

:func:`make_task_env` builds the Isaac Lab task of a run's resolved config: the robot's registered task,
with the same env keyword arguments ``gymnasium.make`` gets on MuJoCo (``env_kwargs``), so a Hydra
override reaches both backends. :func:`isaac_episodes` runs one episode in each of the first ``n`` envs
and feeds each step to the same metrics as MuJoCo evaluations (:mod:`dexwheel.rl.metrics`), computed
from the Isaac Lab state as the MuJoCo env computes its info entries.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from omegaconf import DictConfig
from tensordict import TensorDict

from dexwheel.rl.env_factory import env_kwargs
from dexwheel.rl.evaluation import EvalResult
from dexwheel.rl.metrics import make_metrics
from dexwheel.rl.rsl.cfg import CLIP_ACTIONS
from dexwheel.tasks.registry import task_record

#: a batched policy: the observation groups in, actions out (torch, on the env's device)
BatchPolicy = Callable[[TensorDict], torch.Tensor]


def task_id(cfg: DictConfig) -> str:
    """The Isaac Lab id of the run's task for its robot (the task's registry record)."""
    task, robot = str(cfg.task.name), str(cfg.robot.name)
    ids = task_record(task).isaaclab
    if robot not in ids:
        raise ValueError(f"task={task}: no Isaac Lab task for robot={robot}; it has one for {sorted(ids) or 'none'}")
    return ids[robot]


def open_task(task: str, num_envs: int, device: str, seed: int, overrides: dict | None = None,
              configure: Callable[[Any], None] | None = None) -> gym.Env:  # fmt: skip
    """The registered Isaac Lab task ``task`` (its config class built with ``task_overrides=overrides``: the MuJoCo
    env's keyword arguments) with ``num_envs`` envs on ``device``; ``configure(env_cfg)`` changes the Isaac Lab
    config before the env is built (a term to add)."""
    import dexwheel.isaaclab.tasks  # noqa: F401  (registers the task ids)

    module, _, name = gym.spec(task).kwargs["env_cfg_entry_point"].partition(":")
    env_cfg = getattr(importlib.import_module(module), name)(task_overrides=overrides or {})
    env_cfg.sim.device = device
    env_cfg.scene.num_envs = int(num_envs)
    env_cfg.seed = int(seed)
    if configure is not None:
        configure(env_cfg)
    return gym.make(task, cfg=env_cfg)


def make_task_env(cfg: DictConfig, num_envs: int, device: str, seed: int, overrides: dict | None = None,
                  configure: Callable[[Any], None] | None = None) -> gym.Env:  # fmt: skip
    """The Isaac Lab task of ``cfg`` (its robot and env fields, then ``overrides``): :func:`open_task`."""
    return open_task(task_id(cfg), num_envs, device, seed, env_kwargs(cfg, overrides), configure)


def make_task_venv(cfg: DictConfig, num_envs: int, device: str, seed: int, overrides: dict | None = None,
                   configure: Callable[[Any], None] | None = None):  # fmt: skip
    """:func:`make_task_env` as rsl_rl's env (Isaac Lab's ``RslRlVecEnvWrapper``, actions clipped to
    +-:data:`CLIP_ACTIONS` as on MuJoCo), with the task's mirror for symmetry augmentation."""
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    env = make_task_env(cfg, num_envs, device, seed, overrides, configure)
    # the hand's action term clips to its mapping's own range (0..255 for sdk255, the joint limits for nominal)
    venv = RslRlVecEnvWrapper(env, clip_actions=None if hand_action_term(env) is not None else CLIP_ACTIONS)
    venv.mirror_maps = mirror_maps(env)
    return venv


def mirror_maps(env):
    """The left-right mirror of a wheel-leg task's observations and actions (its terms are the MuJoCo task's,
    in its order: :func:`dexwheel.tasks.velocity.config.mirror_maps`), over the critic group when there is one (its
    leading columns are the policy group's, so both mirror with the same maps) and the policy's joints; None
    for another task. The rough task's height scan mirrors by its grid's columns, as on MuJoCo
    (:func:`~dexwheel.tasks.velocity.observations.height_scan_mirror` of the term's parameters)."""
    from dexwheel.isaaclab.tasks.velocity.observations import height_scan
    from dexwheel.tasks.velocity.config import mirror_maps as maps
    from dexwheel.tasks.velocity.observations import height_scan_mirror

    u = env.unwrapped
    if "base_velocity" not in u.command_manager.active_terms:
        return None
    group = "critic" if "critic" in u.observation_manager.active_terms else "policy"
    names, dims = u.observation_manager.active_terms[group], u.observation_manager.group_obs_term_dim[group]
    starts = np.cumsum([0] + [int(np.prod(d)) for d in dims])
    terms = {n: getattr(getattr(u.cfg.observations, group), n) for n in names}
    scans = {n: height_scan_mirror(**t.params) for n, t in terms.items() if t.func is height_scan}
    return maps({n: slice(int(a), int(b)) for n, a, b in zip(names, starts[:-1], starts[1:], strict=True)},
                u.action_manager.get_term("joints").path.policy_joints, scans)  # fmt: skip


def _velocity_info(env) -> dict[str, np.ndarray]:
    """What the MuJoCo wheel-leg env reports per step for its metrics: |v_x - v_x*| and |w_z - w_z*| in
    the base frame."""
    u = env.unwrapped
    data, command = u.scene["robot"].data, u.command_manager.get_command("base_velocity")
    lin, ang = data.root_lin_vel_b.torch, data.root_ang_vel_b.torch
    return {
        "lin_vel_x_error": (lin[:, 0] - command[:, 0]).abs().cpu().numpy(),
        "ang_vel_z_error": (ang[:, 2] - command[:, 2]).abs().cpu().numpy(),
    }


def _rough_info(env) -> dict[str, np.ndarray]:
    """:func:`_velocity_info` and the step's termination flags (``terminated_<term>``, as the MuJoCo env's
    info has them), so an episode that ended by leaving the terrain is told from a fall."""
    manager = env.unwrapped.termination_manager
    flags = {f"terminated_{name}": manager.get_term(name).cpu().numpy().astype(bool)
             for name in manager.active_terms if not manager.get_term_cfg(name).time_out}  # fmt: skip
    return {**_velocity_info(env), **flags}


def _hand_info(env) -> dict[str, np.ndarray]:
    """What the MuJoCo G20 env reports per step for its metrics, recorded by the task before its resets
    (:func:`dexwheel.isaaclab.tasks.hand_pose.terminations.hand_step_info`): an episode's last step is its own, not the reset's."""
    from dexwheel.isaaclab.tasks.hand_pose.terminations import STEP_INFO_KEYS

    info = getattr(env.unwrapped, "dexwheel_step_info", None)
    if info is None:  # before the first step
        n = env.unwrapped.num_envs
        return {k: np.zeros(n) for k in STEP_INFO_KEYS}
    return {k: v.detach().cpu().numpy().astype(np.float64) for k, v in info.items()}


def hand_action_term(env):
    """The G20 task's action term (:class:`~dexwheel.isaaclab.tasks.hand_pose.action.HandPoseAction`), or None."""
    from dexwheel.isaaclab.tasks.hand_pose.action import HandPoseAction

    manager = env.unwrapped.action_manager
    terms = [manager.get_term(name) for name in manager.active_terms]
    return next((t for t in terms if isinstance(t, HandPoseAction)), None)


def action_bounds(env) -> tuple[torch.Tensor, torch.Tensor]:
    """The actions a policy sends: the hand's mapping's range (:attr:`HandPoseAction.bounds`), else +-1."""
    term = hand_action_term(env)
    if term is not None:
        low, high = term.bounds
        return low.float(), high.float()
    n, device = env.unwrapped.action_manager.total_action_dim, env.unwrapped.device
    return -CLIP_ACTIONS * torch.ones(n, device=device), CLIP_ACTIONS * torch.ones(n, device=device)


def _in_hand_info(env) -> dict[str, np.ndarray]:
    """What the MuJoCo object envs report per step for their metrics, recorded by the task before its resets
    (:func:`dexwheel.isaaclab.tasks.in_hand.terminations.in_hand_step`), and the step's termination flags."""
    from dexwheel.isaaclab.tasks.in_hand.terminations import STEP_INFO_KEYS

    u = env.unwrapped
    info = getattr(u, "dexwheel_step_info", None)
    if info is None:  # before the first step
        return {k: np.zeros(u.num_envs) for k in STEP_INFO_KEYS}
    manager = u.termination_manager
    flags = {f"terminated_{name}": manager.get_term(name).cpu().numpy().astype(bool)
             for name in manager.active_terms if not manager.get_term_cfg(name).time_out and name != "in_hand_step"}  # fmt: skip
    return {**{k: v.detach().cpu().numpy().astype(np.float64) for k, v in info.items()}, **flags}


STEP_INFO = {"velocity": _velocity_info, "velocity_rough": _rough_info, "hand_pose": _hand_info,
             "in_hand_rotate": _in_hand_info, "in_hand_reorient": _in_hand_info}  # fmt: skip
#: Tasks whose step info is recorded before the resets (an ended episode's last step is in ``after``).
PRE_RESET_INFO = {"hand_pose", "in_hand_rotate", "in_hand_reorient"}


def isaac_episodes(venv, policy: BatchPolicy, task: str, n_episodes: int, seed: int) -> EvalResult:
    """One deterministic episode in each of the first ``n_episodes`` envs of ``venv`` (Isaac Lab's
    ``RslRlVecEnvWrapper``), all reset with ``seed``; metrics as :func:`dexwheel.rl.evaluation.run_episodes`."""
    n = venv.num_envs
    if n_episodes > n:
        raise ValueError(f"episodes: {n_episodes} episodes need as many Isaac Lab envs, the task has {n}")
    venv.unwrapped.seed(seed)
    obs, _ = venv.reset()
    metrics = [make_metrics(task) for _ in range(n_episodes)]
    returns, lengths = np.zeros(n_episodes), np.zeros(n_episodes, dtype=int)
    rows: list[dict[str, float] | None] = [None] * n_episodes
    while any(r is None for r in rows):
        with torch.inference_mode():
            actions = policy(obs)
        before = STEP_INFO[task](venv)
        obs, reward, dones, extras = venv.step(actions)
        after = STEP_INFO[task](venv)  # the step's result, as the MuJoCo env reports it
        timeouts = extras.get("time_outs", torch.zeros_like(dones)).cpu().numpy().astype(bool)
        done, rew = dones.cpu().numpy().astype(bool), reward.cpu().numpy()
        for i in range(n_episodes):
            if rows[i] is not None:
                continue
            # an env that finished is already reset: its last step counts with the state before it, and
            # with the termination flags the step computed
            last = before if done[i] and task not in PRE_RESET_INFO else after
            metrics[i].step({k: (after if k.startswith("terminated_") else last)[k][i] for k in after})
            returns[i] += rew[i]
            lengths[i] += 1
            if done[i]:
                rows[i] = {**metrics[i].episode(bool(done[i] and not timeouts[i])), "return": float(returns[i]),
                           "length": float(lengths[i])}  # fmt: skip
    return EvalResult(episodes=[r for r in rows if r is not None])


def actor_batch_policy(actor, bounds: tuple[torch.Tensor, torch.Tensor] | None = None) -> BatchPolicy:
    """An rsl_rl actor's deterministic actions, clipped as the runner clips them before the env (or to
    ``bounds``, :func:`action_bounds`)."""

    def act(obs: TensorDict) -> torch.Tensor:
        if bounds is not None:
            return torch.maximum(torch.minimum(actor(obs), bounds[1]), bounds[0])
        return actor(obs).clamp(-CLIP_ACTIONS, CLIP_ACTIONS)

    return act
