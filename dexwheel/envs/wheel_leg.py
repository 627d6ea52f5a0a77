"""``Solenopsis-v0`` / ``M20Legacy-v0``: wheel-leg velocity tracking on flat ground (one implementation).

The robot is a parameter (``robot="solenopsis"`` or ``"m20_legacy"``); both share the observation and
action layout, so a policy trained on one can be evaluated on the other.

Sign conventions (every joint axis is (0, -1, 0)): a positive knee angle swings the arm's lower end
forward (+x); a positive wheel velocity rolls the robot *backward*, so driving forward at v m/s takes
wheel velocity -v / r on all four wheels; the right side faster forward than the left (right wheels
more negative) turns the base left (counter-clockwise seen from above, positive yaw rate).

Action (``[-1, 1]``, the policy layer's joints in task order, knees then wheels, ``fl, fr, hl, hr``):
knee position targets ``stance + knee_scale * a`` and wheel velocity targets ``wheel_velocity_scale * a``.

Observation (float32; slices in ``env.unwrapped.obs_slices``):

====================  ====  ==========================================================
``base_ang_vel``      3     base angular velocity, base frame, x ``ang_vel_scale`` (0.25)
``projected_gravity`` 3     gravity direction in the base frame (upright: (0, 0, -1))
``velocity_commands`` 2     commanded forward velocity (m/s) and yaw rate (rad/s)
``joint_pos_rel``     4     knee angles minus the stance (wheel angles excluded)
``joint_vel_rel``     8     knee and wheel velocities x ``joint_vel_scale`` (0.05)
``last_action``       A     the previous action (A = 8 with the default layers)
====================  ====  ==========================================================

With ``privileged_obs=True`` the asymmetric-critic part follows: ``base_lin_vel`` (3, base frame,
m/s), ``friction`` (1, offset from nominal), ``base_mass_add`` (1, kg), ``base_com_offset`` (3, m),
``link_mass_scale`` (8, knees then wheels, factor - 1).

Reward: the weighted terms of the ``rewards`` table (:data:`~dexwheel.tasks.velocity.config.REWARDS`), each in
``info`` as ``reward_<term>`` (already weighted and multiplied by the control period), summed in that order.
``info`` also has ``lin_vel_x``, ``ang_vel_z`` (measured, base frame), ``command_lin_vel_x``,
``command_ang_vel_z``, the absolute errors ``lin_vel_x_error`` and ``ang_vel_z_error``, and the
termination causes ``terminated_contact`` and ``terminated_tilt``.

Episodes end (terminated) when a non-wheel body touches the floor or the base tilts past
``max_tilt``, and are truncated after ``episode_length_s``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from dexwheel.envs.base import TaskEnv
from dexwheel.tasks.spaces import reset_options
from dexwheel.tasks.velocity.config import WheelLegEnvCfg, make_cfg
from dexwheel.tasks.velocity.scene import TRACK_CAMERA
from dexwheel.tasks.velocity.task import TaskViews, WheelLegTask

RENDER_MODES = ["human", "rgb_array", "depth_array"]


def observation_space(task: WheelLegTask) -> spaces.Box:
    return spaces.Box(-np.inf, np.inf, shape=(task.obs_layout.dim,), dtype=np.float32)


def action_space(task: WheelLegTask) -> spaces.Box:
    return spaces.Box(-1.0, 1.0, shape=(task.action_dim,), dtype=np.float32)


#: ``reset(options=...)``: ``base_pose`` (x, y, yaw): start there (on the ground; the reset's draws as without it,
#: :meth:`WheelLegTask.place_base`); ``command`` (forward m/s, yaw rate rad/s): held for the episode.
RESET_OPTIONS = ("base_pose", "command")


def _pair(env: str, name: str, value: Any, n: int = 2) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        out = ()
    if len(out) != n or not all(np.isfinite(out)):
        raise ValueError(f"{env}.reset: options[{name!r}] must be {n} finite numbers, got {value!r}")
    return out


def _base_pose(env: str, value: Any) -> tuple[float, ...]:
    return _pair(env, "base_pose", value, 3)


def env_name(cfg: WheelLegEnvCfg) -> str:
    """The env's name in its messages (its id without the version)."""
    return {"solenopsis": "Solenopsis", "m20_legacy": "M20Legacy"}.get(cfg.robot, cfg.robot)


class WheelLegEnv(TaskViews, TaskEnv):
    """Velocity tracking for a wheel-leg robot. Keyword arguments: see :func:`make_cfg`.

    Besides the config fields: ``cfg`` (a :class:`WheelLegEnvCfg` to start from), ``render_mode``,
    ``width``, ``height``, ``camera_name`` (default: a camera that follows the base).

    ``copy.deepcopy`` and pickling give an independent env that continues the same trajectory
    (:class:`~dexwheel.sim.snapshot.Reconstructible`); the renderer is not copied.
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 50}

    def __init__(self, cfg: WheelLegEnvCfg | None = None, *, render_mode: str | None = None, width: int = 640,
                 height: int = 480, camera_name: str | None = TRACK_CAMERA, **kwargs: Any) -> None:  # fmt: skip
        self.cfg = make_cfg(cfg, **kwargs)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode: {render_mode!r}; use one of {RENDER_MODES} or None")
        self.task = WheelLegTask(self.cfg, 1, backend="serial")
        self.observation_space = observation_space(self.task)
        self.action_space = action_space(self.task)
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.task.dt)}
        self._width, self._height, self._camera_name = width, height, camera_name
        self._start_env(env_name(self.cfg))

    def _init_kwargs(self) -> dict[str, Any]:
        return {"cfg": self.cfg, "render_mode": self.render_mode, "width": self._width, "height": self._height,
                "camera_name": self._camera_name}  # fmt: skip

    # -- properties users and tests read -------------------------------------------------------------
    @property
    def model(self):
        return self.task.models[0]

    @property
    def data(self):
        return self.task.physics.data[0]

    # -- gymnasium API ------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        self._check_open()
        opts = reset_options(self._name, options, RESET_OPTIONS)  # a typo fails instead of being ignored
        # checked before anything changes: a refused option leaves the env as it was
        pose = _base_pose(self._name, opts["base_pose"]) if "base_pose" in opts else None
        if pose is not None:
            self.task.check_base_xy(*pose[:2], f"{self._name}.reset: options['base_pose']")
        command = _pair(self._name, "command", opts["command"]) if "command" in opts else None
        super().reset(seed=seed)
        self.task.reset_env(0, self.np_random, fresh=seed is not None)
        if pose is not None:
            self.task.place_base(0, *pose)
        if command is not None:
            self.task.set_command(*command, hold=True)
        self._needs_reset = False
        obs = self.task.compute_obs()[0].copy()
        if self.render_mode == "human":
            self.render()
        return obs, {key: value.item() for key, value in self.task.reset_info(slice(0, 1)).items()}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self._check_ready()
        obs, reward, terminated, truncated, _ = self.task.step(np.asarray(action)[None])
        step_info = self.task.step_info_of(0)
        if self.render_mode == "human":
            self.render()
        return obs[0].copy(), float(reward[0]), bool(terminated[0]), bool(truncated[0]), step_info

    def set_command(self, lin_vel_x: float, ang_vel_z: float, hold: bool = True) -> np.ndarray:
        """Command a velocity by hand (``hold``: no resampling this episode); returns the new observation."""
        self.task.set_command(lin_vel_x, ang_vel_z, hold=hold)
        return self.task.obs[0].copy()

    def set_override(self, active: bool) -> None:
        """Engage or release the configured override (safety stop) layer."""
        self.task.set_override(active)

    def _renderer_kwargs(self) -> dict[str, Any]:
        return {"width": self._width, "height": self._height, "camera_name": self._camera_name}


class WheelLegRoughEnv(WheelLegEnv):
    """``Solenopsis-Rough-v0`` / ``M20Legacy-Rough-v0``: the velocity task on the terrain grid, its config
    :func:`~dexwheel.tasks.velocity.rough.rough_cfg` (keywords as :class:`WheelLegEnv`'s)."""

    def __init__(self, cfg: WheelLegEnvCfg | None = None, **kwargs: Any) -> None:
        from dexwheel.tasks.velocity.rough import rough_cfg

        super().__init__(rough_cfg() if cfg is None else cfg, **kwargs)
