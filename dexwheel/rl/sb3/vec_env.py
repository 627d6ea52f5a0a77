"""Present a Gymnasium ``VectorEnv`` (dexwheel's native vector envs) as a stable-baselines3 ``VecEnv``.

The native vector envs autoreset in SAME_STEP mode, which is SB3's own convention: the observation
returned for a finished env is already the first one of its next episode, and the last one of the
finished episode travels in ``infos["final_obs"]``. Here it becomes ``terminal_observation``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from dexwheel.tasks.spaces import IntegerBox

_MASK_PREFIX = "_"


class GymVectorEnvAdapter(VecEnv):
    def __init__(self, env: gym.vector.VectorEnv, info_keys: tuple[str, ...] = ()):
        mode = env.metadata.get("autoreset_mode")
        if mode is not None and mode != gym.vector.AutoresetMode.SAME_STEP:
            raise ValueError(f"autoreset_mode: SB3 needs SAME_STEP, the vector env uses {mode}")
        self.env = env
        self.info_keys = info_keys  # scalar per-env info entries copied into SB3's per-env dicts
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None
        #: an integer-valued action space (G20 sdk255): the policy's float actions are rounded
        self._integer = isinstance(env.single_action_space, IntegerBox)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, infos = self.env.reset(seed=seed)
        self.reset_infos = self._split_infos(infos)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.rint(actions) if self._integer else actions

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, terminated, truncated, infos = self.env.step(self._actions)
        dones = np.logical_or(terminated, truncated)
        per_env = self._split_infos(infos)
        final_obs = infos.get("final_obs")
        for i in np.flatnonzero(dones):
            per_env[i]["terminal_observation"] = final_obs[i] if final_obs is not None else obs[i]
            per_env[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards.astype(np.float32), dones, per_env

    def _split_infos(self, infos: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for key in self.info_keys:
            if key not in infos:
                continue
            values, mask = infos[key], infos.get(_MASK_PREFIX + key)
            for i in range(self.num_envs):
                if mask is None or mask[i]:
                    out[i][key] = values[i]
        return out

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self):  # pragma: no cover - rendering goes through the single env
        return [None] * self.num_envs
