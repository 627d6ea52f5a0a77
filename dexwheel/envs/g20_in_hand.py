"""G20Rotate-v0 and G20Reorient-v0, the Gymnasium faces of the in-hand tasks (:mod:`dexwheel.tasks.in_hand`).

:class:`G20InHandEnv` is the task's ``N = 1`` case (:class:`~dexwheel.tasks.in_hand.task.InHandTask`);
:class:`G20InHandVectorEnv` its ``N``-env case (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``),
bit-identical for the same seeds and actions. The task's step, terms and observation are documented there and in
``docs/reference/tasks.md``.

Observation (float32, one slice per term, ``obs_slices``): the actor's proprioception first (``policy_obs_dim``
columns: the hand's 21 joint positions over the last 3 steps, the last action), then, with ``privileged_obs`` (the
default), the critic's columns (the object's position from its start, orientation, velocities, the fingertips'
contacts, the command). ``info``: ``reward_<term>``, ``rotation_rate`` (rad/s about the axis), ``rotation_angle`` (rad turned this episode), ``object_drift``
(m), ``orientation_error`` (rad to the goal), ``successes`` (goals reached this episode), ``action_clipped``,
``diverged``, ``terminated_<term>``.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from dexwheel.envs.base import TaskEnv
from dexwheel.envs.vector_env import NativeVectorEnv
from dexwheel.sim.rendering import check_render_mode, free_camera, render_each
from dexwheel.tasks.in_hand.config import InHandCfg, make_cfg
from dexwheel.tasks.in_hand.task import InHandTask

RENDER_MODES = ("human", "rgb_array")
#: A camera above and beside the palm, looking down at the object.
CAMERA = {"distance": 0.42, "azimuth": 150.0, "elevation": -40.0, "lookat": np.array([-0.09, 0.0, 0.03])}


class G20InHandEnv(TaskEnv):
    """The G20 turning an object in its palm; keyword arguments: ``cfg`` (an :class:`InHandCfg` to start from)
    and the changes :func:`~dexwheel.tasks.in_hand.config.make_cfg` takes (``task="rotate"`` or ``"reorient"``,
    sections as dicts, term tables by term name). ``copy.deepcopy`` and pickling give an independent env that
    continues the same trajectory."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 20}

    def __init__(self, cfg: InHandCfg | None = None, **kwargs: Any) -> None:
        self.config = cfg = make_cfg(cfg, **kwargs)
        if cfg.render_mode not in (None, *RENDER_MODES):
            raise ValueError(f"render_mode: {cfg.render_mode!r}; choose one of {list(RENDER_MODES)} or None")
        self.task = task = InHandTask(cfg, num_envs=1)
        self.model = task.model
        self.data = task.datas[0]
        self.dt = task.dt
        self.frame_skip = task.nsub
        self.metadata = {**type(self).metadata, "render_fps": int(round(cfg.control_hz))}
        self.render_mode = cfg.render_mode
        self.action_space = task.actions.space
        self.observation_space = task.observation_space
        self.obs_slices = dict(task.obs_slices)
        self.policy_obs_dim = task.policy_obs_dim
        self._start_env("G20InHand")
        self._obs = task.obs[0]

    def _init_kwargs(self) -> dict[str, Any]:
        return {"cfg": self.config}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        self._check_open()
        options = self.task.checked_options(options)  # bad options raise before anything changes
        super().reset(seed=seed)
        self.task.reset_env(0, self.np_random, options)
        self._needs_reset = False
        info = {k: v.item(0) for k, v in self.task.reset_info(slice(0, 1)).items()}
        if self.render_mode == "human":
            self.render()
        return self.task.observation()[0], info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._check_ready()
        task = self.task
        task.step(np.asarray(action)[None])
        if self.render_mode == "human":
            self.render()
        info = task.step_info_of(0)
        return self._obs.copy(), task.reward.item(0), task.terminated.item(0), task.truncated.item(0), info

    def _renderer_kwargs(self) -> dict[str, Any]:
        return {"default_cam_config": dict(CAMERA), "width": self.config.width, "height": self.config.height}


class G20InHandVectorEnv(NativeVectorEnv):
    """``num_envs`` in-hand envs in one process (one batched :class:`InHandTask`); keyword arguments as
    :class:`G20InHandEnv`'s. ``reset(seed=s)`` seeds env ``i`` with ``s + i``: ``N`` single envs, bit for bit."""

    metadata = {**NativeVectorEnv.metadata, "render_fps": 20}
    reset_option_names = ()
    name = "G20InHandVectorEnv"

    def __init__(self, num_envs: int = 1, cfg: InHandCfg | None = None, **kwargs: Any) -> None:
        if int(num_envs) != num_envs or num_envs < 1:
            raise ValueError(f"G20InHandVectorEnv: num_envs must be an integer >= 1, got {num_envs!r}")
        self.config = cfg = make_cfg(cfg, **kwargs)
        if cfg.render_mode not in (None, "rgb_array"):
            raise ValueError(f"G20InHandVectorEnv: render_mode={cfg.render_mode!r} is not supported; use 'rgb_array'")
        self.task = task = InHandTask(cfg, num_envs=int(num_envs))
        self._setup_spaces(num_envs, task.observation_space, task.actions.space)
        self.model = task.model
        self.dt = task.dt
        self.metadata = {**type(self).metadata, "render_fps": int(round(cfg.control_hz))}
        self.render_mode = cfg.render_mode
        self.obs_slices = dict(task.obs_slices)
        self.policy_obs_dim = task.policy_obs_dim
        self._renderer: mujoco.Renderer | None = None
        self._camera: mujoco.MjvCamera | None = None

    def _init_kwargs(self) -> dict[str, Any]:
        return {"num_envs": self.num_envs, "cfg": self.config}

    def _checked_options(self, options: dict[str, Any]) -> dict[str, Any]:
        return self.task.checked_options(options)

    def _reset_env(self, i: int, rng: np.random.Generator, options: dict[str, Any], fresh: bool) -> None:
        self.task.reset_env(i, rng, options)

    def _reset_info(self, idx: np.ndarray) -> dict[str, np.ndarray]:
        return self.task.reset_info(idx)

    def _observation(self, idx: np.ndarray) -> np.ndarray:
        return self.task.observation(idx)

    def _step_envs(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, reward, terminated, truncated, _ = self.task.step(actions)
        return obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), self.task.step_info()

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per env (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return None
        if self._renderer is None:
            check_render_mode(self.render_mode, type(self).__name__)
            self._renderer = mujoco.Renderer(self.model, self.config.height, self.config.width)
            self._camera = free_camera(self.model, CAMERA)
        datas = (self.task.drive.sync_data(i) for i in range(self.num_envs))
        return render_each(self._renderer, datas, self._camera)


__all__ = ["G20InHandEnv", "G20InHandVectorEnv"]
