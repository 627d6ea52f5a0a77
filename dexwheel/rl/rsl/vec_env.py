"""Present a native vector env (Gymnasium ``VectorEnv``, SAME_STEP autoreset) as rsl_rl's ``VecEnv``.

rsl_rl expects what Isaac Lab's ``RslRlVecEnvWrapper`` gives it: observations as a ``TensorDict`` of
groups, rewards and dones as tensors, the observation after a done already the
next episode's first (SAME_STEP autoreset, as the native vector envs do), and ``extras["time_outs"]``
marking episodes cut by the time limit, which PPO bootstraps. Actions are clipped to the action space
(SB3 does the same), and rounded for an integer-valued space (G20 ``sdk255``).

Observation groups: ``policy``, the columns a deployed policy reads (an env's ``policy_obs_dim`` leading
columns; all of them when it has none), and, when the env appends privileged columns (wheel-leg
``privileged_obs``), ``critic``: every column, for an asymmetric actor-critic.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from dexwheel.rl.rsl.cfg import CRITIC_GROUP, POLICY_GROUP
from dexwheel.tasks.spaces import IntegerBox


class RslVecEnv(VecEnv):
    def __init__(self, env: gym.vector.VectorEnv, seed: int, device: str = "cpu"):
        mode = env.metadata.get("autoreset_mode")
        if mode is not None and mode != gym.vector.AutoresetMode.SAME_STEP:
            raise ValueError(f"autoreset_mode: rsl_rl needs SAME_STEP, the vector env uses {mode}")
        space = env.single_action_space
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = int(np.prod(space.shape))
        self.obs_dim = int(env.single_observation_space.shape[0])
        self.policy_dim = int(getattr(env.unwrapped, "policy_obs_dim", self.obs_dim))
        #: the env's left-right mirror of observations and actions, for symmetry augmentation (None: it has none)
        self.mirror_maps = getattr(env.unwrapped, "mirror_maps", None)
        self.device = device
        self.cfg: dict[str, Any] = {"env": type(env.unwrapped).__name__, "num_envs": self.num_envs}
        #: episodes are cut by the env's own time limit; rsl_rl reads these two only for random starts
        self.max_episode_length = getattr(env.unwrapped, "max_episode_steps", 0) or 0
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long, device=device)
        obs, _ = env.reset(seed=seed)
        self._obs = self._wrap(obs)

    def _wrap(self, obs: np.ndarray) -> TensorDict:
        full = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        groups = {POLICY_GROUP: full[:, : self.policy_dim]}
        if self.policy_dim < self.obs_dim:
            groups[CRITIC_GROUP] = full
        return TensorDict(groups, batch_size=[self.num_envs], device=self.device)

    def get_observations(self) -> TensorDict:
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict[str, Any]]:
        a = clip_actions(self.env.single_action_space, actions.detach().cpu().numpy())
        obs, rewards, terminated, truncated, infos = self.env.step(a)
        dones = np.logical_or(terminated, truncated)
        self.episode_length_buf += 1
        self.episode_length_buf[torch.from_numpy(dones)] = 0
        self._obs = self._wrap(obs)
        extras = {
            "time_outs": torch.as_tensor(truncated & ~terminated, device=self.device),
            "log": _step_means(infos),
        }
        reward = torch.as_tensor(rewards, dtype=torch.float32, device=self.device)
        return self._obs, reward, torch.as_tensor(dones, dtype=torch.long, device=self.device), extras

    def close(self) -> None:
        self.env.close()


def clip_actions(space: gym.spaces.Box, actions: np.ndarray) -> np.ndarray:
    """A Gaussian policy's actions as the env takes them: clipped to the bounds (as SB3 does), rounded for
    an integer-valued space."""
    a = np.clip(actions, space.low, space.high)
    return np.rint(a) if isinstance(space, IntegerBox) else a


def _step_means(infos: dict[str, Any]) -> dict[str, float]:
    """This step's mean of each numeric per-env info entry (reward terms, errors, termination causes), as
    TensorBoard scalars ``Step/<key>`` (rsl_rl logs a key with a ``/`` as it is; ``terrain_level`` as
    ``Curriculum/terrain_level``). An env that just reset
    counts with its episode's last step (``final_info``), not the fresh episode's zeros."""
    final, ended = infos.get("final_info", {}), infos.get("_final_info")
    out: dict[str, float] = {}
    for key, values in infos.items():
        if key.startswith("_") or key.startswith("final_") or not isinstance(values, np.ndarray):
            continue
        if values.dtype.kind in "fb" and values.ndim == 1:
            if key in final:
                values = np.where(ended, final[key], values)
            out[_LOG_NAMES.get(key, f"Step/{key}")] = float(values.mean())
    return out


#: Info entries logged under a name of their own rather than ``Step/<key>``: the rough task's mean terrain
#: level (the curriculum's progress), as Isaac Lab logs it.
_LOG_NAMES = {"terrain_level": "Curriculum/terrain_level"}
