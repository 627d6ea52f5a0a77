"""Native vector env of G20Hand-v0: all envs stepped by one batched :class:`G20HandTask`.

``gymnasium.make_vec("G20Hand-v0", num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``.
The task logic (action mapping, slew, rewards, observations) runs over the env axis in compiled
kernels. PD: the physics of all envs is one ``mujoco.batch.Batch`` call; hard-write: the whole step of
all envs is one compiled call spreading them over numba's worker threads (``num_threads``, default
one per core). Never one Python ``env.step`` per env. Each env computes exactly what a single
:class:`~dexwheel.envs.g20_hand.G20HandEnv` computes, so ``reset(seed=s)`` (env ``i`` seeded with
``s + i``) reproduces ``N`` single envs created with seeds ``s + i`` bit for bit.

With ``action="nominal"``, ``step`` also takes a list of ``N`` ``{joint: radians}`` dicts (joints not
named keep their command). Autoreset is ``SAME_STEP``, laid out as gymnasium's ``SyncVectorEnv`` does it: a finished env is reset
inside ``step``; its last observation is in ``infos["final_obs"]`` (mask ``infos["_final_obs"]``), its
last step info in ``infos["final_info"]``, and the top-level info entries of that env are its reset info.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mujoco
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dexwheel.control import ActionError
from dexwheel.envs.g20_hand import RESET_OPTIONS, G20HandConfig, G20HandTask, camera_config
from dexwheel.envs.g20_kernels import INFO_KEYS
from dexwheel.envs.gym_api import closed_error, not_ready, reset_options
from dexwheel.sim.rendering import render_each
from dexwheel.sim.snapshot import Reconstructible, config_kwargs


class G20HandVectorEnv(Reconstructible, VectorEnv):
    """``num_envs`` G20 hands in one process; keyword arguments: the fields of :class:`G20HandConfig`.

    ``copy.deepcopy`` and pickling give an independent vector env that continues the same trajectories.
    """

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP, "render_fps": 50}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        if int(num_envs) != num_envs or num_envs < 1:
            raise ValueError(f"G20HandVectorEnv: num_envs must be an integer >= 1, got {num_envs!r}")
        self.config = cfg = G20HandConfig(**kwargs)
        if cfg.render_mode == "human":
            raise ValueError("G20HandVectorEnv: render_mode='human' is not supported; use 'rgb_array'")
        self.num_envs = int(num_envs)
        self.task = task = G20HandTask(cfg, num_envs=self.num_envs)
        self.model = task.model
        self.dt = task.dt
        self.metadata = {**type(self).metadata, "render_fps": int(round(cfg.control_hz))}
        self.render_mode = cfg.render_mode
        self.single_observation_space = task.observation_space
        self.single_action_space = task.actions.space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.obs_slices = dict(task.obs_slices)
        self._generators: list[np.random.Generator | None] = [None] * self.num_envs
        self._needs_reset = True
        self._every_env = np.ones(self.num_envs, dtype=bool)
        self._every_env.flags.writeable = False  # shared by every step's info masks
        self._step_masks = dict.fromkeys([f"_{key}" for key in INFO_KEYS], self._every_env)
        self._renderer: mujoco.Renderer | None = None
        self._camera: mujoco.MjvCamera | None = None

    def _init_kwargs(self) -> dict[str, Any]:
        return {"num_envs": self.num_envs, **config_kwargs(self.config)}

    # -- gymnasium VectorEnv API -------------------------------------------------------------------
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if self.closed:
            raise closed_error("G20HandVectorEnv")
        options = reset_options("G20HandVectorEnv", options, ("reset_mask", *RESET_OPTIONS))
        mask = options.pop("reset_mask", None)
        options = self.task.checked_options(options)  # bad options raise before anything changes
        n = self.num_envs
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"G20HandVectorEnv.reset: {len(seeds)} seeds for {n} envs")
        todo = np.arange(n) if mask is None else np.flatnonzero(np.asarray(mask, dtype=bool))
        if isinstance(seed, (int, np.integer)):
            self._np_random, self._np_random_seed = seeding.np_random(int(seed))
        for i in todo:
            self.task.reset_env(int(i), self._generator(int(i), seeds[i]), options)
        self._needs_reset = False
        info = self._with_masks(self.task.reset_info(slice(None)), np.isin(np.arange(n), todo))
        return self.task.observation(), info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._needs_reset:
            raise not_ready("G20HandVectorEnv", self.closed)
        task = self.task
        if isinstance(actions, (list, tuple)) and actions and all(isinstance(a, Mapping) for a in actions):
            if task.actions.kind != "nominal":
                raise ActionError(f"{{joint: radians}} actions need action='nominal', not {task.actions.kind!r}")
            if len(actions) != self.num_envs:
                raise ActionError(f"{len(actions)} {{joint: radians}} actions for {self.num_envs} envs")
            actions = np.stack([task.actions.nominal_dict(a, task.command[i]) for i, a in enumerate(actions)])
        obs, reward, terminated, truncated, info, ended = task.step(actions)
        infos = {**info, **self._step_masks}  # gymnasium's layout: each key with its env mask
        if ended:
            done = terminated | truncated
            idx = np.flatnonzero(done)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in idx:
                final_obs[i] = obs[i].copy()
            final_info: dict[str, Any] = {}
            for key, value in info.items():
                arr = np.zeros_like(value)
                arr[idx] = value[idx]
                final_info[key] = arr
                final_info[f"_{key}"] = done.copy()
            for i in idx:
                task.reset_env(int(i), self._generator(int(i), None), None)
            obs[idx] = task.observation(idx)
            reset_info = task.reset_info(idx)
            for key, value in reset_info.items():
                infos[key][idx] = value
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done.copy()
            infos["final_info"] = final_info
            infos["_final_info"] = done.copy()
        return obs, reward, terminated, truncated, infos

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per env from the compare view (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return None
        if self._renderer is None:
            self._renderer = mujoco.Renderer(self.model, self.config.height, self.config.width)
            cam = mujoco.MjvCamera()
            mujoco.mjv_defaultFreeCamera(self.model, cam)
            for key, value in camera_config(self.task, self.config.default_camera_config).items():
                if key == "lookat":
                    cam.lookat[:] = value
                else:
                    setattr(cam, key, value)
            self._camera = cam
        datas = (self.task.drive.sync_data(i) for i in range(self.num_envs))
        return render_each(self._renderer, datas, self._camera)

    def close_extras(self, **kwargs: Any) -> None:
        self._needs_reset = True  # step() now raises (VectorEnv.close sets `closed` and runs this once)
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.task.close()

    # -- helpers -----------------------------------------------------------------------------------
    def _generator(self, i: int, seed: int | None) -> np.random.Generator:
        """Env ``i``'s generator: re-seeded when a seed is given, else kept (created once, randomly)."""
        if seed is not None or self._generators[i] is None:
            self._generators[i], _ = seeding.np_random(seed)
        return self._generators[i]  # type: ignore[return-value]

    @staticmethod
    def _with_masks(info: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, Any]:
        """Gymnasium's vector info layout: ``key`` and its env mask ``_key`` (one shared, read-only mask)."""
        if mask.flags.writeable:
            mask = mask.copy()
            mask.flags.writeable = False
        out: dict[str, Any] = dict(info)
        out.update(dict.fromkeys([f"_{key}" for key in info], mask))
        return out

    @property
    def datas(self) -> list[mujoco.MjData]:
        """Each env's MjData at its current state."""
        return [self.task.drive.sync_data(i) for i in range(self.num_envs)]


__all__ = ["G20HandVectorEnv"]
