"""The single-env face of every task (:class:`TaskEnv`); the vector face is
:class:`~dexwheel.envs.vector_env.TaskVectorEnv`.

A single env is the ``N = 1`` case of its task (:class:`~dexwheel.tasks.runtime.TaskRuntime`): the task steps, the
env adds Gymnasium's surface: the reset and closed guards, rendering through Gymnasium's ``MujocoRenderer`` (checked
for a display or an offscreen GL backend first, :func:`~dexwheel.sim.rendering.check_render_mode`), ``close``, and
copying and pickling (:class:`~dexwheel.sim.snapshot.Reconstructible`). A task family's face sets
:attr:`TaskEnv.task_class` and :attr:`TaskEnv.make_config` and adds only its own conveniences.

Keyword arguments: ``cfg`` (the task's config to start from; default: ``task_name``'s config for ``robot``, what a
registered id passes: :mod:`dexwheel.tasks.registry`) and the changes its ``make_config`` takes (fields, sections as
dicts, term tables by term name); and how it is shown, which is no part of the task: ``render_mode``,
``width``, ``height``, ``camera_name`` (a camera of the model) or ``default_camera_config`` (a free camera's
``distance``, ``azimuth``, ``elevation``, ``lookat``), the task's own view by default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from dexwheel.envs.gym_api import closed_error, not_ready
from dexwheel.sim.rendering import check_render_mode
from dexwheel.sim.snapshot import Reconstructible
from dexwheel.tasks.registry import resolve, task_record
from dexwheel.tasks.runtime import TaskRuntime

#: the render modes every single env takes
RENDER_MODES = ("human", "rgb_array")


def start_config(cls: type, cfg: Any, task_name: str | None, robot: str | None,
                 kwargs: dict[str, Any]) -> tuple[Any, type, Callable]:  # fmt: skip
    """The config to start from (``cfg``, else the registered task's for ``robot``, which must be one it runs on),
    the task class and the config builder (the face's own, else the registered task's). Without a task name a
    ``robot`` is a config keyword (``kwargs``, where the config refuses it if it has no such field)."""
    task_class, make_config = cls.task_class, cls.make_config
    if task_name is None and robot is not None:
        kwargs["robot"] = robot
    if task_name is not None:
        record = task_record(task_name)
        if robot is not None and robot not in record.robots:
            raise ValueError(f"robot: {robot!r}; task {task_name} runs on {list(record.robots)}")
        cfg = record.default_config(robot or record.robots[0]) if cfg is None else cfg
        task_class = task_class or resolve(record.task_class)
        make_config = make_config or resolve(record.make_config)
    if task_class is None or make_config is None:
        raise TypeError(f"{cls.__name__}: no task; give task_name=<a registered task> (dexwheel.tasks.registry)")
    return cfg, task_class, make_config


def camera_kwargs(task: TaskRuntime, camera_name: str | None, default_camera_config: Mapping[str, Any] | None,
                  ) -> dict[str, Any]:  # fmt: skip
    """The renderer's camera: a named camera, a free camera's settings, else the task's own view
    (:meth:`~dexwheel.tasks.runtime.TaskRuntime.camera`: a name or a free camera's settings)."""
    view = camera_name or default_camera_config or task.camera()
    if isinstance(view, str):
        return {"camera_name": view}
    cam = dict(view)
    if "lookat" in cam:
        cam["lookat"] = np.asarray(cam["lookat"], dtype=np.float64)
    return {"default_cam_config": cam}


class TaskEnv(Reconstructible, gym.Env):
    """The single env of a task: ``task_class(make_config(cfg, **kwargs), 1)``."""

    #: the task class and its config builder ``make_config(cfg, **changes)``; a generic face takes the registered
    #: task's (``task_name``)
    task_class: ClassVar[type[TaskRuntime] | None] = None
    make_config: ClassVar[Callable[..., Any] | None] = None
    #: frames' default size (width, height)
    RENDER_SIZE: ClassVar[tuple[int, int]] = (480, 480)
    RENDER_MODES: ClassVar[tuple[str, ...]] = RENDER_MODES
    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 50}

    def __init__(self, cfg: Any = None, *, task_name: str | None = None, robot: str | None = None,
                 render_mode: str | None = None, width: int | None = None, height: int | None = None,
                 camera_name: str | None = None, default_camera_config: Mapping[str, Any] | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        cfg, task_class, make_config = start_config(type(self), cfg, task_name, robot, kwargs)
        self.task_name = task_name
        self.cfg = make_config(cfg, **kwargs)
        if render_mode not in (None, *self.RENDER_MODES):
            raise ValueError(f"render_mode: {render_mode!r}; choose one of {list(self.RENDER_MODES)} or None")
        self.width, self.height = int(width or self.RENDER_SIZE[0]), int(height or self.RENDER_SIZE[1])
        if self.width < 1 or self.height < 1:
            raise ValueError(f"width and height must be >= 1, got {self.width}x{self.height}")
        self.render_mode = render_mode
        self._camera = (camera_name, None if default_camera_config is None else dict(default_camera_config))
        self.task = task = task_class(self.cfg, 1)
        self.dt = task.dt
        self.action_space = task.action_space
        self.observation_space = task.observation_space
        self.obs_slices = dict(task.obs_slices)
        self.policy_obs_dim = task.policy_obs_dim
        self.metadata = {**type(self).metadata, "render_fps": int(round(1.0 / task.dt))}
        self._name = task.NAME
        self._renderer: Any = None
        self._needs_reset = True
        self._closed = False

    def _init_kwargs(self) -> dict[str, Any]:
        camera_name, default_camera_config = self._camera
        return {"cfg": self.cfg, "task_name": self.task_name, "render_mode": self.render_mode, "width": self.width,
                "height": self.height, "camera_name": camera_name,
                "default_camera_config": default_camera_config}  # fmt: skip

    @property
    def model(self) -> Any:
        """The env's MuJoCo model (as it runs: randomised where events randomise it)."""
        return self.task.models[0]

    @property
    def data(self) -> Any:
        """The env's MjData at its current state."""
        return self.task.sync_data(0)

    # -- gymnasium API -------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        if self._closed:
            raise closed_error(self._name)
        options = self.task.checked_options(options)  # a bad option raises before anything changes
        super().reset(seed=seed)
        self.task.reset_env(0, self.np_random, options, fresh=seed is not None)
        self._needs_reset = False
        info = {k: v.item(0) for k, v in self.task.reset_info(slice(0, 1)).items()}
        if self.render_mode == "human":
            self.render()
        return self.task.observation()[0], info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            raise not_ready(self._name, self._closed)
        task = self.task
        obs, reward, terminated, truncated, _ = task.step(self._as_batch(action))
        if self.render_mode == "human":
            self.render()
        return obs[0].copy(), reward.item(0), terminated.item(0), truncated.item(0), task.step_info_of(0)

    def _as_batch(self, action: Any) -> np.ndarray:
        """``action`` as a batch of one (a family may take other forms, the hand ``{joint: radians}``)."""
        return np.asarray(action)[None]

    def render(self) -> np.ndarray | None:
        env_id = self.spec.id if self.spec is not None else type(self).__name__
        if self.render_mode is None:
            gym.logger.warn(f"{env_id}: render() without a render_mode; pass render_mode='rgb_array' or 'human' to "
                            "gymnasium.make")  # fmt: skip
            return None
        if self._renderer is None:
            check_render_mode(self.render_mode, env_id)  # no display, no OpenGL: say what to set
            from gymnasium.envs.mujoco.mujoco_rendering import MujocoRenderer

            self._renderer = MujocoRenderer(self.task.render_model, self.data, width=self.width, height=self.height,
                                            **camera_kwargs(self.task, *self._camera))  # fmt: skip
        return self._renderer.render(self.render_mode)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = self._needs_reset = True
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.task.close()
