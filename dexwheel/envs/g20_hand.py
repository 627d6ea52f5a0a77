"""G20Hand-v0, the Gymnasium face of the hand-pose task (:mod:`dexwheel.tasks.hand_pose`).

:class:`G20HandEnv` is the task's ``N = 1`` case (:class:`~dexwheel.tasks.hand_pose.task.G20HandTask`);
:class:`dexwheel.envs.g20_vector.G20HandVectorEnv` its ``N``-env case, so both produce bit-identical
trajectories for the same seeds and actions. The task's step, terms and observation are documented there
and in ``docs/reference/tasks.md``.

Observation (float32, see ``obs_slices``, one slice per observation term): ``qpos`` (21, ALL_JOINTS order),
``qvel`` (21; for hard-write the joint motion of the last step divided by ``dt``, since the written ``qvel``
is 0), ``goal`` (16, ACTIVE_JOINTS order), ``last_action`` (the previous action scaled to [-1, 1]: 16
values, 20 for ``sdk255``).

Reward terms (mjlab names; :data:`~dexwheel.tasks.hand_pose.config.REWARDS`): ``joint_pos_tracking =
1 * exp(-mean((q - goal)^2) / 0.3^2)`` over the active joints and ``joint_pos_tracking_fine``, the same
with width 0.1; ``penetration = -100 * max_penetration`` (m; PD: the deepest contact over the control
step's physics steps); ``action_rate_l2 = -0.01 * sum((a - a_prev)^2)`` on the [-1, 1]-scaled actions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from dexwheel.control import ActionError
from dexwheel.envs.base import TaskEnv
from dexwheel.robots.g20 import ALL_JOINTS, GOAL_PRESETS
from dexwheel.tasks.hand_pose.action import G20ActionMap
from dexwheel.tasks.hand_pose.config import (  # re-exported: the env's config and choices
    ACTIONS,
    DRIVES,
    GOAL_MODES,  # noqa: F401
    HANDS,  # noqa: F401
    OUT_OF_RANGE,  # noqa: F401
    RENDER_MODES,
    REWARD_TERMS,
    G20HandConfig,
    make_cfg,
)
from dexwheel.tasks.hand_pose.task import RESET_OPTIONS, G20HandTask  # noqa: F401


def camera_config(task: G20HandTask, override: Mapping[str, Any] | None) -> dict[str, Any]:
    """The free camera of the vendor bridge's compare view (mirrored for the right hand), or ``override``."""
    view = task.description.camera
    cam = (dataclasses.asdict(view) if view is not None else {}) if override is None else dict(override)
    if "lookat" in cam:
        cam["lookat"] = np.asarray(cam["lookat"], dtype=np.float64)
    return cam


class G20HandEnv(TaskEnv):
    """Gymnasium env of the G20 hand tracking a goal pose; the ``N = 1`` case of :class:`G20HandTask`.

    Keyword arguments: ``cfg`` (a :class:`G20HandConfig` to start from) and the changes
    :func:`~dexwheel.tasks.hand_pose.config.make_cfg` takes (fields, term tables by term name). ``reset(options=...)`` accepts ``goal``
    (preset name, ``{joint: rad}`` or 16 radians) and ``init_qpos`` (same forms); a value out of its
    joint's range raises. With ``action="nominal"``, :meth:`step` also accepts ``{joint: radians}``:
    joints not named keep their previous command, an unknown name raises
    :class:`~dexwheel.control.UnknownJointError`, a mimic joint (it follows its source) ActionError.
    After :meth:`close` (idempotent), ``step`` and ``reset`` raise ``ClosedEnvironmentError``.

    ``info``: ``reward_<term>`` for each reward term of the config's table (reward == their sum),
    ``tracking_error`` (max |q - goal| over the active joints, rad), ``mean_joint_error`` (mean |q - goal|), ``command_error`` (max |q - command|,
    rad: the vendor bridge's track-test error), ``max_penetration`` (m), ``projection_checks``/``_limited``/
    ``_fallback`` (what collision projection did), ``action_clipped``, ``goal_switched``.

    ``copy.deepcopy`` and pickling give an independent env that continues the same trajectory
    (:class:`~dexwheel.sim.snapshot.Reconstructible`); the renderer is not copied.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 50}

    def __init__(self, cfg: G20HandConfig | None = None, **kwargs: Any) -> None:
        self.config = cfg = make_cfg(cfg, **kwargs)
        self.task = task = G20HandTask(cfg, num_envs=1)
        self.model = task.model
        self.data = task.datas[0]
        self.dt = task.dt
        self.frame_skip = task.nsub
        self.metadata = {**type(self).metadata, "render_fps": int(round(cfg.control_hz))}
        self.render_mode = cfg.render_mode
        self.action_space = task.actions.space
        self.observation_space = task.observation_space
        self.obs_slices = dict(task.obs_slices)
        self._start_env("G20Hand")
        self._obs = task.obs[0]  # env 0's row of the task's buffer (a view, made once: step() reads it)

    def _init_kwargs(self) -> dict[str, Any]:
        return {"cfg": self.config}

    # -- gymnasium API -------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
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
        if not isinstance(action, np.ndarray):
            action = self._as_array(action)
        task.step(action[None])
        if self.render_mode == "human":
            self.render()
        info = task.step_info_of(0)
        return self._obs.copy(), task.reward.item(0), task.terminated.item(0), task.truncated.item(0), info

    def _as_array(self, action: Any) -> np.ndarray:
        """A ``{joint: radians}`` dict (nominal actions) or any array-like as an array."""
        task = self.task
        if isinstance(action, Mapping):
            if task.actions.kind != "nominal":
                raise ActionError(
                    f"a {{joint: radians}} action needs action='nominal'; this env uses action={task.actions.kind!r}"
                )
            return task.actions.nominal_dict(action, task.command[0])
        try:
            return np.asarray(action)  # its dtype is checked with its shape (HandActions.as_batch)
        except (TypeError, ValueError) as exc:
            raise ActionError(
                f"action ({task.actions.kind}) must be numeric with shape {self.action_space.shape}: {exc}"
            ) from None

    def _renderer_kwargs(self) -> dict[str, Any]:
        cam = camera_config(self.task, self.config.default_camera_config)
        return {"default_cam_config": cam, "width": self.config.width, "height": self.config.height}

    # -- conveniences ------------------------------------------------------------------------------
    def set_goal(self, goal: Any) -> None:
        """Replace the current goal (preset name, ``{joint: rad}`` or 16 radians)."""
        self.task.set_goal(0, goal)

    @property
    def goal(self) -> np.ndarray:
        return self.task.goal[0].copy()

    @property
    def command(self) -> np.ndarray:
        """The commanded active-joint positions (ACTIVE_JOINTS order) after the last action."""
        return self.task.command[0].copy()

    @property
    def joint_positions(self) -> dict[str, float]:
        """All 21 joint positions by name (the vendor bridge's state message)."""
        return {n: float(v) for n, v in zip(ALL_JOINTS, self.task.qpos[0], strict=True)}


__all__ = [
    "ACTIONS",
    "DRIVES",
    "GOAL_PRESETS",
    "REWARD_TERMS",
    "G20ActionMap",
    "G20HandConfig",
    "G20HandEnv",
    "G20HandTask",
    "camera_config",
]
