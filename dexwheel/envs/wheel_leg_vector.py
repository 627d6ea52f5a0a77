"""Native vector env of ``Solenopsis-v0`` / ``M20Legacy-v0``: N envs in one batched task.

``gymnasium.make_vec("Solenopsis-v0", num_envs=N, vectorization_mode="vector_entry_point")``. Physics
runs in ``mujoco.batch.Batch``'s C++ thread pool (no Python loop per env); observations, rewards and
terminations are compiled kernels over the env axis (the single env's). ``reset(seed=s)`` seeds env
``i`` with ``s + i``, and the result is bit-identical to N single envs made with those seeds and driven
with the same actions.

Seeding, reset masks and ``SAME_STEP`` autoreset (``final_obs``, ``final_info``, reset infos for the
envs just reset) are :class:`~dexwheel.envs.vector_env.NativeVectorEnv`'s, shared with the G20 vector env.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from dexwheel.envs.vector_env import NativeVectorEnv
from dexwheel.envs.wheel_leg import action_space, env_name, observation_space
from dexwheel.sim.rendering import check_render_mode, render_each
from dexwheel.tasks.velocity.config import WheelLegEnvCfg, make_cfg
from dexwheel.tasks.velocity.scene import TRACK_CAMERA
from dexwheel.tasks.velocity.task import TaskViews, WheelLegTask


class WheelLegVectorEnv(TaskViews, NativeVectorEnv):
    """``num_envs`` wheel-leg envs; keyword arguments as for the single env plus ``num_threads`` and
    ``max_episode_steps`` (as ``gymnasium.make_vec(..., max_episode_steps=k)`` passes it, and as the G20 vector
    env takes it: an env is truncated after that many steps, or earlier at its own ``episode_length_s``).

    ``copy.deepcopy`` and pickling give an independent vector env that continues the same trajectories.
    """

    def __init__(self, num_envs: int = 1, cfg: WheelLegEnvCfg | None = None, *, num_threads: int | None = None,
                 render_mode: str | None = None, width: int = 640, height: int = 480,
                 camera_name: str | None = TRACK_CAMERA, max_episode_steps: int | None = None,
                 **kwargs: Any) -> None:  # fmt: skip
        if isinstance(num_envs, bool) or int(num_envs) != num_envs or num_envs < 1:
            raise ValueError(f"{type(self).__name__}: num_envs must be an integer >= 1, got {num_envs!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: {render_mode!r}; the vector env renders 'rgb_array' (one frame per env) "
                             "or None; use the single env for 'human'")  # fmt: skip
        if max_episode_steps is not None and (
            isinstance(max_episode_steps, bool) or int(max_episode_steps) != max_episode_steps or max_episode_steps < 1
        ):
            raise ValueError(f"max_episode_steps must be None or an integer >= 1, got {max_episode_steps!r}")
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self.cfg = make_cfg(cfg, **kwargs)
        # one env: plain mj_step (the backends agree bit for bit; the pool only pays off with several envs)
        backend = "serial" if num_envs == 1 else "batch"
        self.task = WheelLegTask(
            self.cfg, num_envs, backend=backend, num_threads=num_threads, max_steps=self.max_episode_steps
        )
        self._setup_spaces(num_envs, observation_space(self.task), action_space(self.task))
        self.render_mode = render_mode
        self._width, self._height, self._camera_name = width, height, camera_name
        self._renderer: mujoco.Renderer | None = None
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.task.dt)}
        self.name = f"{env_name(self.cfg)}VectorEnv"

    def _init_kwargs(self) -> dict[str, Any]:
        return {"num_envs": self.num_envs, "cfg": self.cfg, "num_threads": self.task.physics.num_threads or None,
                "render_mode": self.render_mode, "width": self._width, "height": self._height,
                "camera_name": self._camera_name, "max_episode_steps": self.max_episode_steps}  # fmt: skip

    # -- the task's part of NativeVectorEnv ------------------------------------------------------------
    def _reset_env(self, i: int, rng: np.random.Generator, options: dict[str, Any], fresh: bool) -> None:
        self.task.reset_env(i, rng, fresh=fresh)

    def _reset_info(self, idx: np.ndarray) -> dict[str, np.ndarray]:
        return self.task.reset_info(idx)

    def _observation(self, idx: np.ndarray) -> np.ndarray:
        return self.task.compute_obs()[idx]  # fancy indexing: a copy

    def _step_envs(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, reward, terminated, truncated, _ = self.task.step(np.asarray(actions))
        return obs.copy(), reward.copy(), terminated.copy(), truncated.copy(), self.task.step_info()

    def set_command(self, lin_vel_x: float, ang_vel_z: float, env: int | None = None, hold: bool = True) -> None:
        self.task.set_command(lin_vel_x, ang_vel_z, env=env, hold=hold)

    def set_override(self, active: bool) -> None:
        self.task.set_override(active)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per env from the camera that follows the base (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return None
        if self._renderer is None:
            check_render_mode(self.render_mode, self.name)
            self._renderer = mujoco.Renderer(self.task.render_model, self._height, self._width)
        datas = (self.task.physics.sync_data(i) for i in range(self.num_envs))
        return render_each(self._renderer, datas, self._camera_name or -1)


class WheelLegRoughVectorEnv(WheelLegVectorEnv):
    """The native vector env of ``Solenopsis-Rough-v0`` / ``M20Legacy-Rough-v0`` (all envs on one terrain)."""

    def __init__(self, num_envs: int = 1, cfg: WheelLegEnvCfg | None = None, **kwargs: Any) -> None:
        from dexwheel.tasks.velocity.rough import rough_cfg

        super().__init__(num_envs, rough_cfg() if cfg is None else cfg, **kwargs)
