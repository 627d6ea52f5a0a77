"""Native vector env of G20Hand-v0: all envs stepped by one batched :class:`G20HandTask`.

``gymnasium.make_vec("G20Hand-v0", num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``.
The task logic (action mapping, slew, rewards, observations) runs over the env axis in compiled
kernels. PD: the physics of all envs is one ``mujoco.batch.Batch`` call; hard-write: the whole step of
all envs is one compiled call spreading them over numba's worker threads (``num_threads``, default
one per core). Never one Python ``env.step`` per env. Each env computes exactly what a single
:class:`~dexwheel.envs.g20_hand.G20HandEnv` computes, so ``reset(seed=s)`` (env ``i`` seeded with
``s + i``) reproduces ``N`` single envs created with seeds ``s + i`` bit for bit.

With ``action="nominal"``, ``step`` also takes a list of ``N`` ``{joint: radians}`` dicts (joints not
named keep their command). Seeding, reset masks and ``SAME_STEP`` autoreset (``final_obs``,
``final_info``) are :class:`~dexwheel.envs.vector_env.NativeVectorEnv`'s, shared with the wheel-leg
vector env.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mujoco
import numpy as np

from dexwheel.control import ActionError
from dexwheel.envs.g20_hand import RESET_OPTIONS, G20HandConfig, G20HandTask, camera_config, make_cfg
from dexwheel.envs.vector_env import NativeVectorEnv
from dexwheel.sim.rendering import check_render_mode, free_camera, render_each


class G20HandVectorEnv(NativeVectorEnv):
    """``num_envs`` G20 hands in one process; keyword arguments: ``cfg`` and the changes ``make_cfg`` takes (fields, term tables).

    ``copy.deepcopy`` and pickling give an independent vector env that continues the same trajectories.
    """

    metadata = {**NativeVectorEnv.metadata, "render_fps": 50}
    reset_option_names = RESET_OPTIONS
    name = "G20HandVectorEnv"

    def __init__(self, num_envs: int = 1, cfg: G20HandConfig | None = None, **kwargs: Any) -> None:
        if int(num_envs) != num_envs or num_envs < 1:
            raise ValueError(f"G20HandVectorEnv: num_envs must be an integer >= 1, got {num_envs!r}")
        self.config = cfg = make_cfg(cfg, **kwargs)
        if cfg.render_mode == "human":
            raise ValueError("G20HandVectorEnv: render_mode='human' is not supported; use 'rgb_array'")
        self.task = task = G20HandTask(cfg, num_envs=int(num_envs))
        self._setup_spaces(num_envs, task.observation_space, task.actions.space)
        self.model = task.model
        self.dt = task.dt
        self.metadata = {**type(self).metadata, "render_fps": int(round(cfg.control_hz))}
        self.render_mode = cfg.render_mode
        self.obs_slices = dict(task.obs_slices)
        self._renderer: mujoco.Renderer | None = None
        self._camera: mujoco.MjvCamera | None = None

    def _init_kwargs(self) -> dict[str, Any]:
        return {"num_envs": self.num_envs, "cfg": self.config}

    # -- the task's part of NativeVectorEnv ------------------------------------------------------------
    def _checked_options(self, options: dict[str, Any]) -> dict[str, Any]:
        return self.task.checked_options(options)

    def _reset_env(self, i: int, rng: np.random.Generator, options: dict[str, Any], fresh: bool) -> None:
        self.task.reset_env(i, rng, options)  # the hand carries nothing between episodes

    def _reset_info(self, idx: np.ndarray) -> dict[str, np.ndarray]:
        return self.task.reset_info(idx)

    def _observation(self, idx: np.ndarray) -> np.ndarray:
        return self.task.observation(idx)

    def _step_envs(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        task = self.task
        if isinstance(actions, (list, tuple)) and actions and all(isinstance(a, Mapping) for a in actions):
            if task.actions.kind != "nominal":
                raise ActionError(f"{{joint: radians}} actions need action='nominal', not {task.actions.kind!r}")
            if len(actions) != self.num_envs:
                raise ActionError(f"{len(actions)} {{joint: radians}} actions for {self.num_envs} envs")
            actions = np.stack([task.actions.nominal_dict(a, task.command[i]) for i, a in enumerate(actions)])
        obs, reward, terminated, truncated, _ = task.step(actions)
        return obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), task.step_info()

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per env from the compare view (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return None
        if self._renderer is None:
            check_render_mode(self.render_mode, type(self).__name__)
            self._renderer = mujoco.Renderer(self.model, self.config.height, self.config.width)
            self._camera = free_camera(self.model, camera_config(self.task, self.config.default_camera_config))
        datas = (self.task.drive.sync_data(i) for i in range(self.num_envs))
        return render_each(self._renderer, datas, self._camera)

    @property
    def datas(self) -> list[mujoco.MjData]:
        """Each env's MjData at its current state."""
        return [self.task.drive.sync_data(i) for i in range(self.num_envs)]


__all__ = ["G20HandVectorEnv"]
