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

from collections.abc import Mapping
from typing import Any

import numpy as np

from dexwheel.control import ActionError
from dexwheel.envs.base import TaskEnv
from dexwheel.robots.g20 import ALL_JOINTS, GOAL_PRESETS
from dexwheel.tasks.hand.action import G20ActionMap
from dexwheel.tasks.hand.config import ACTIONS, DRIVES, OUT_OF_RANGE  # noqa: F401  re-exported: the choices
from dexwheel.tasks.hand_pose.config import (  # re-exported: the env's config and choices
    GOAL_MODES,  # noqa: F401
    HANDS,  # noqa: F401
    REWARD_TERMS,
    G20HandConfig,
    make_cfg,
)
from dexwheel.tasks.hand_pose.task import RESET_OPTIONS, G20HandTask  # noqa: F401


def nominal_row(task: G20HandTask, action: Any, i: int) -> np.ndarray:
    """A ``{joint: radians}`` action (``action="nominal"``): the joints not named keep env ``i``'s command."""
    if task.actions.kind != "nominal":
        raise ActionError(
            f"a {{joint: radians}} action needs action='nominal'; this env uses action={task.actions.kind!r}"
        )
    return task.actions.nominal_dict(action, task.command[i])


class G20HandEnv(TaskEnv):
    """Gymnasium env of the G20 hand tracking a goal pose; the ``N = 1`` case of :class:`G20HandTask`.

    Keyword arguments: ``cfg`` (a :class:`G20HandConfig` to start from) and the changes
    :func:`~dexwheel.tasks.hand_pose.config.make_cfg` takes (fields, term tables by term name); how it is shown
    (:class:`~dexwheel.envs.base.TaskEnv`). ``reset(options=...)`` accepts ``goal`` (preset name, ``{joint: rad}`` or
    16 radians) and ``init_qpos`` (same forms); a value out of its joint's range raises. With ``action="nominal"``,
    :meth:`step` also accepts ``{joint: radians}``: joints not named keep their previous command, an unknown name
    raises :class:`~dexwheel.control.UnknownJointError`, a mimic joint (it follows its source) ActionError.
    After :meth:`close` (idempotent), ``step`` and ``reset`` raise ``ClosedEnvironmentError``.

    ``info``: ``reward_<term>`` for each reward term of the config's table (reward == their sum),
    ``tracking_error`` (max |q - goal| over the active joints, rad), ``mean_joint_error`` (mean |q - goal|),
    ``command_error`` (max |q - command|, rad: the vendor bridge's track-test error), ``max_penetration`` (m),
    ``projection_checks``/``_limited``/``_fallback`` (what collision projection did), ``action_clipped``,
    ``goal_switched``, ``diverged``.

    ``copy.deepcopy`` and pickling give an independent env that continues the same trajectory
    (:class:`~dexwheel.sim.snapshot.Reconstructible`); the renderer is not copied.
    """

    task_class = G20HandTask
    make_config = staticmethod(make_cfg)

    def __init__(self, cfg: G20HandConfig | None = None, **kwargs: Any) -> None:
        super().__init__(cfg, **kwargs)
        self.frame_skip = self.task.nsub

    def _as_batch(self, action: Any) -> np.ndarray:
        """A ``{joint: radians}`` dict (nominal actions) or any array-like as a batch of one."""
        if isinstance(action, Mapping):
            return nominal_row(self.task, action, 0)[None]
        try:
            return np.asarray(action)[None]  # its dtype is checked with its shape (G20ActionMap.as_batch)
        except (TypeError, ValueError) as exc:
            raise ActionError(f"action ({self.task.actions.kind}) must be numeric with shape "
                              f"{self.action_space.shape}: {exc}") from None  # fmt: skip

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


__all__ = ["ACTIONS", "DRIVES", "GOAL_PRESETS", "REWARD_TERMS", "G20ActionMap", "G20HandConfig", "G20HandEnv",
           "G20HandTask"]  # fmt: skip
