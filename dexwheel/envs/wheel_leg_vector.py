"""Native vector env of ``Solenopsis-v0`` / ``M20Legacy-v0``: N envs in one batched task.

``gymnasium.make_vec("Solenopsis-v0", num_envs=N, vectorization_mode="vector_entry_point")``. Physics
runs in ``mujoco.batch.Batch``'s C++ thread pool (no Python loop per env); observations, rewards and
terminations are compiled kernels over the env axis (the single env's). ``reset(seed=s)`` seeds env
``i`` with ``s + i``, and the result is bit-identical to N single envs made with those seeds and driven
with the same actions.

Autoreset is ``SAME_STEP``: an env that terminates or truncates is reset inside ``step``; the returned
observation is the new episode's first, the last one of the old episode is in ``infos["final_obs"]``
(masked by ``infos["_final_obs"]``). The other ``infos`` entries are ``(N,)`` arrays of the step's
values, i.e. the final step's values for an env that was just reset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dexwheel.envs.gym_api import closed_error, not_ready, reset_options
from dexwheel.envs.wheel_leg import action_space, env_name, observation_space
from dexwheel.envs.wheel_leg_cfg import WheelLegEnvCfg, make_cfg
from dexwheel.envs.wheel_leg_task import WheelLegTask
from dexwheel.sim.rendering import render_each
from dexwheel.sim.snapshot import Reconstructible
from dexwheel.sim.wheel_leg_model import TRACK_CAMERA


class WheelLegVectorEnv(Reconstructible, VectorEnv):
    """``num_envs`` wheel-leg envs; keyword arguments as for the single env plus ``num_threads``.

    ``copy.deepcopy`` and pickling give an independent vector env that continues the same trajectories.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["rgb_array"]}

    def __init__(self, num_envs: int = 1, cfg: WheelLegEnvCfg | None = None, *, num_threads: int | None = None,
                 render_mode: str | None = None, width: int = 640, height: int = 480,
                 camera_name: str | None = TRACK_CAMERA, **kwargs: Any) -> None:  # fmt: skip
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: {render_mode!r}; the vector env renders 'rgb_array' (one frame per env) "
                             "or None; use the single env for 'human'")  # fmt: skip
        self.cfg = make_cfg(cfg, **kwargs)
        # one env: plain mj_step (the backends agree bit for bit; the pool only pays off with several envs)
        backend = "serial" if num_envs == 1 else "batch"
        self.task = WheelLegTask(self.cfg, num_envs, backend=backend, num_threads=num_threads)
        self.num_envs = num_envs
        self.render_mode = render_mode
        self._width, self._height, self._camera_name = width, height, camera_name
        self._renderer: mujoco.Renderer | None = None
        self.single_observation_space = observation_space(self.task)
        self.single_action_space = action_space(self.task)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.task.dt)}
        self._keys = self.task.info_keys
        self._name = f"{env_name(self.cfg)}VectorEnv"
        self._needs_reset = True
        mask = np.ones(num_envs, dtype=bool)
        mask.flags.writeable = False
        self._masks = {f"_{key}": mask for key in (*self._keys, "diverged")}  # every value is valid for every env

    def _init_kwargs(self) -> dict[str, Any]:
        return {"num_envs": self.num_envs, "cfg": self.cfg, "num_threads": self.task.physics.num_threads or None,
                "render_mode": self.render_mode, "width": self._width, "height": self._height,
                "camera_name": self._camera_name}  # fmt: skip

    @property
    def dt(self) -> float:
        return self.task.dt

    @property
    def obs_slices(self) -> dict[str, slice]:
        return dict(self.task.obs_layout.slices)

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Reset every env (or those in ``options["reset_mask"]``); ``seed`` s seeds env i with s + i."""
        if self.closed:
            raise closed_error(self._name)
        options = reset_options(self._name, options, ("reset_mask",))
        single = isinstance(seed, (int, np.integer))
        super().reset(seed=int(seed) if single else None)  # type: ignore[arg-type]
        n, task = self.num_envs, self.task
        if seed is not None:
            seeds = [int(seed) + i for i in range(n)] if single else [int(s) for s in seed]  # type: ignore[union-attr,arg-type]
            if len(seeds) != n:
                raise ValueError(f"seed: expected an int or {n} seeds, got {len(seeds)}")
            for i, s in enumerate(seeds):
                task.rngs[i] = seeding.np_random(s)[0]
        for i in range(n):
            if task.rngs[i] is None:
                task.rngs[i] = seeding.np_random()[0]
        mask = np.ones(n, dtype=bool) if not options or "reset_mask" not in options else options["reset_mask"]
        for i in np.flatnonzero(mask).tolist():
            task.reset_env(i)
        self._needs_reset = False
        return task.compute_obs().copy(), {}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._needs_reset:
            raise not_ready(self._name, self.closed)
        task = self.task
        obs, reward, terminated, truncated, values = task.step(np.asarray(actions))
        columns = values.T.copy()  # fresh arrays every step, one row per info key
        infos: dict[str, Any] = dict(zip(self._keys, columns, strict=True))
        infos["terminated_contact"], infos["terminated_tilt"] = columns[-2:] > 0.0
        infos["diverged"] = task.diverged.copy()
        infos.update(self._masks)
        reward, terminated = reward.copy(), terminated.copy()
        done = terminated | truncated
        if np.count_nonzero(done):
            final = np.empty(self.num_envs, dtype=object)
            ids = np.flatnonzero(done).tolist()
            for i in ids:
                final[i] = obs[i].copy()
                task.reset_env(i)
            infos["final_obs"], infos["_final_obs"] = final, done
            task.compute_obs()
        return task.obs.copy(), reward, terminated, truncated, infos

    def set_command(self, lin_vel_x: float, ang_vel_z: float, env: int | None = None, hold: bool = True) -> None:
        self.task.set_command(lin_vel_x, ang_vel_z, env=env, hold=hold)

    def set_override(self, active: bool) -> None:
        self.task.set_override(active)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One RGB frame per env from the camera that follows the base (``render_mode="rgb_array"``)."""
        if self.render_mode is None:
            return None
        if self._renderer is None:
            self._renderer = mujoco.Renderer(self.task.models[0], self._height, self._width)
        datas = (self.task.physics.sync_data(i) for i in range(self.num_envs))
        return render_each(self._renderer, datas, self._camera_name or -1)

    def close_extras(self, **kwargs: Any) -> None:
        self._needs_reset = True  # step() now raises (VectorEnv.close sets `closed` and runs this once)
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.task.close()
