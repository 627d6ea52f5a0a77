"""The native vector face of every task (:class:`TaskVectorEnv`): seeding, reset masks, SAME_STEP autoreset, the
info layout, rendering, copies.

Every vector env steps one batched task (:class:`~dexwheel.tasks.runtime.TaskRuntime`) and follows gymnasium's
``SyncVectorEnv`` conventions, written here once:

* ``reset(seed=s)`` seeds env ``i`` with ``s + i`` (a list gives one seed per env), so the vector env
  reproduces single envs made with those seeds; ``options["reset_mask"]`` resets only the masked envs.
  Reset infos hold every step key (reward terms 0), each with its env mask ``_key``.
* Autoreset is ``SAME_STEP``: an env whose episode ended is reset inside ``step``; the returned
  observation is the new episode's first, the last one is in ``infos["final_obs"]``, the last step's
  info in ``infos["final_info"]`` (both masked by ``_final_obs`` / ``_final_info``), and the top-level
  info entries of that env are its reset info.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import mujoco
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dexwheel.envs.base import camera_kwargs, start_config
from dexwheel.envs.gym_api import closed_error, not_ready
from dexwheel.sim.rendering import check_render_mode, free_camera, render_each
from dexwheel.sim.snapshot import Reconstructible
from dexwheel.tasks.runtime import TaskRuntime
from dexwheel.tasks.spaces import reset_options

Info = dict[str, np.ndarray]


class TaskVectorEnv(Reconstructible, VectorEnv):
    """The native vector env of a task: ``task_class(make_config(cfg, **kwargs), num_envs)`` stepped as one batch.

    Keyword arguments as the single env's (:class:`~dexwheel.envs.base.TaskEnv`; ``render_mode`` "rgb_array" only:
    one frame per env), and ``max_episode_steps`` (as ``gymnasium.make_vec(..., max_episode_steps=k)`` passes it: an
    env is truncated after that many steps, or earlier at its task's own episode length) and ``num_threads`` (the
    physics' worker threads; None: one per core)."""

    task_class: ClassVar[type[TaskRuntime] | None] = None
    make_config: ClassVar[Callable[..., Any] | None] = None
    RENDER_SIZE: ClassVar[tuple[int, int]] = (480, 480)
    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(self, num_envs: int = 1, cfg: Any = None, *, task_name: str | None = None, robot: str | None = None,
                 render_mode: str | None = None, width: int | None = None, height: int | None = None,
                 camera_name: str | None = None,
                 default_camera_config: Mapping[str, Any] | None = None, max_episode_steps: int | None = None,
                 num_threads: int | None = None, **kwargs: Any) -> None:  # fmt: skip
        name = type(self).__name__
        if isinstance(num_envs, bool) or int(num_envs) != num_envs or num_envs < 1:
            raise ValueError(f"{name}: num_envs must be an integer >= 1, got {num_envs!r}")
        for key, value in (("max_episode_steps", max_episode_steps), ("num_threads", num_threads)):
            if value is not None and (isinstance(value, bool) or int(value) != value or value < 1):
                raise ValueError(f"{name}: {key} must be None or an integer >= 1, got {value!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"{name}: render_mode={render_mode!r} is not supported; the vector env renders "
                             "'rgb_array' (one frame per env) or None; use the single env for 'human'")  # fmt: skip
        cfg, task_class, make_config = start_config(type(self), cfg, task_name, robot, kwargs)
        self.task_name = task_name
        self.cfg = make_config(cfg, **kwargs)
        self.num_envs = n = int(num_envs)
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self.num_threads = None if num_threads is None else int(num_threads)
        self.task = task = task_class(self.cfg, n, max_steps=self.max_episode_steps, num_threads=self.num_threads)
        self.single_observation_space, self.single_action_space = task.observation_space, task.action_space
        self.observation_space = batch_space(task.observation_space, n)
        self.action_space = batch_space(task.action_space, n)
        self.dt = task.dt
        self.obs_slices = dict(task.obs_slices)
        self.policy_obs_dim = task.policy_obs_dim
        self.name = f"{task.NAME}VectorEnv"
        self.render_mode = render_mode
        self.width, self.height = int(width or self.RENDER_SIZE[0]), int(height or self.RENDER_SIZE[1])
        self._camera = (camera_name, None if default_camera_config is None else dict(default_camera_config))
        self.metadata = {**type(self).metadata, "render_fps": int(round(1.0 / task.dt))}
        self._renderer: mujoco.Renderer | None = None
        self._generators: list[np.random.Generator | None] = [None] * n
        self._needs_reset = True

    def _init_kwargs(self) -> dict[str, Any]:
        camera_name, default_camera_config = self._camera
        return {"num_envs": self.num_envs, "cfg": self.cfg, "task_name": self.task_name,
                "render_mode": self.render_mode, "width": self.width,
                "height": self.height, "camera_name": camera_name, "default_camera_config": default_camera_config,
                "max_episode_steps": self.max_episode_steps, "num_threads": self.num_threads}  # fmt: skip

    @property
    def model(self) -> mujoco.MjModel:
        return self.task.models[0]

    def _step_actions(self, actions: Any) -> Any:
        """``actions`` as the task takes them (a family may take other forms, the hand a list of ``{joint: rad}``)."""
        return actions

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per env (``render_mode="rgb_array"``), from the task's view."""
        if self.render_mode is None:
            return None
        if self._renderer is None:
            check_render_mode(self.render_mode, self.name)
            self._renderer = mujoco.Renderer(self.task.render_model, self.height, self.width)
            cam = camera_kwargs(self.task, *self._camera)
            self._view = cam.get("camera_name") or free_camera(self.task.render_model, cam["default_cam_config"])
        datas = (self.task.sync_data(i) for i in range(self.num_envs))  # one at a time: a scratch MjData may be reused
        return render_each(self._renderer, datas, self._view)

    # -- gymnasium VectorEnv API ------------------------------------------------------------------------
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if self.closed:
            raise closed_error(self.name)
        options = reset_options(self.name, options, ("reset_mask", *self.task.RESET_OPTIONS))
        mask = options.pop("reset_mask", None)
        options = self.task.checked_options(options)  # converted; a bad value named before anything changes
        n = self.num_envs
        # everything is checked before any env changes: a refused reset leaves them all as they were
        seeds = self._checked_seeds(seed)
        todo = np.arange(n) if mask is None else np.flatnonzero(self._checked_mask(mask))
        if isinstance(seed, (int, np.integer)):
            self._np_random, self._np_random_seed = seeding.np_random(int(seed))
        for i in todo.tolist():
            self.task.reset_env(i, self._generator(i, seeds[i]), options, fresh=seeds[i] is not None)
        self._needs_reset = False
        every = np.arange(n)
        return self.task.observation(every), _with_masks(self.task.reset_info(every), np.isin(every, todo))

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._needs_reset:
            raise not_ready(self.name, self.closed)
        task = self.task
        obs, reward, terminated, truncated, _ = task.step(self._step_actions(actions))
        obs, reward, terminated, truncated = obs.copy(), reward.copy(), terminated.copy(), truncated.copy()
        info = task.step_info()
        infos = _with_masks(info, self._every_env)
        done = terminated | truncated
        if done.any():
            idx = np.flatnonzero(done)
            final_obs = np.full(self.num_envs, None, dtype=object)
            final_info: dict[str, Any] = {}
            for key, value in info.items():
                arr = np.zeros_like(value)
                arr[idx] = value[idx]
                final_info[key], final_info[f"_{key}"] = arr, done
            for i in idx.tolist():
                final_obs[i] = obs[i].copy()
                task.reset_env(i, self._generator(i, None), {}, fresh=False)
            obs[idx] = task.observation(idx)
            for key, value in task.reset_info(idx).items():
                infos[key][idx] = value
            infos.update(final_obs=final_obs, _final_obs=done, final_info=final_info, _final_info=done)
        return obs, reward, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        self._needs_reset = True  # step() now raises (VectorEnv.close sets `closed` and runs this once)
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.task.close()

    # -- helpers -----------------------------------------------------------------------------------------
    def _checked_seeds(self, seed: Any) -> list[int | None]:
        """One seed (or None) per env: ``seed + i`` for an int, a list as given; non-negative integers only."""
        n = self.num_envs
        if seed is None:
            return [None] * n
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds: list[Any] = [int(seed) + i for i in range(n)]
        elif isinstance(seed, (Sequence, np.ndarray)) and not isinstance(seed, str):
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"{self.name}.reset: seed: {len(seeds)} seeds for {n} envs; give one per env")
        else:
            raise TypeError(f"{self.name}.reset: seed: {seed!r}; give a non-negative int, one per env, or None")
        for i, s in enumerate(seeds):
            ok = s is None or (isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0)
            if not ok:
                raise ValueError(f"{self.name}.reset: seed of env {i}: {s!r}; give a non-negative int or None")
        return [None if s is None else int(s) for s in seeds]

    def _checked_mask(self, mask: Any) -> np.ndarray:
        """``options["reset_mask"]`` as gymnasium's vector envs take it: ``num_envs`` booleans."""
        arr = np.asarray(mask)
        if arr.dtype != np.bool_ or arr.shape != (self.num_envs,):
            raise ValueError(f"{self.name}.reset: options['reset_mask'] must be {self.num_envs} booleans (one per "
                             f"env), got dtype {arr.dtype} and shape {arr.shape}")  # fmt: skip
        return arr

    @property
    def _every_env(self) -> np.ndarray:
        mask = np.ones(self.num_envs, dtype=bool)
        mask.flags.writeable = False
        return mask

    def _generator(self, i: int, seed: int | None) -> np.random.Generator:
        """Env ``i``'s generator: re-seeded when a seed is given, else kept (created once, randomly)."""
        if seed is not None or self._generators[i] is None:
            self._generators[i], _ = seeding.np_random(seed)
        return self._generators[i]  # type: ignore[return-value]


def _with_masks(info: Info, mask: np.ndarray) -> dict[str, Any]:
    """Gymnasium's vector info layout: ``key`` and its env mask ``_key`` (one shared, read-only mask)."""
    if mask.flags.writeable:
        mask = mask.copy()
        mask.flags.writeable = False
    out: dict[str, Any] = dict(info)
    out.update(dict.fromkeys([f"_{key}" for key in info], mask))
    return out
