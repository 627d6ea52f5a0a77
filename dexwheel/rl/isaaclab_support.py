"""What the Isaac Lab tasks cannot run, decided from the MuJoCo task's config alone (no Isaac Lab, no MuJoCo: both
venvs import this). Here in ``rl``, below the Isaac Lab backend, because the core venv's checks read it too.

The Isaac Lab tasks refuse it when they are built (:mod:`dexwheel.isaaclab.tasks.velocity.config`,
:mod:`dexwheel.isaaclab.tasks.hand_pose.config`, :mod:`dexwheel.isaaclab.tasks.in_hand.config`);
``scripts/train.py`` and ``scripts/evaluate.py`` refuse it in the core venv first, naming the config key, before Isaac
Lab starts (about 20 s): :func:`dexwheel.rl.env_factory.check_isaaclab_env`.
"""

from __future__ import annotations

from typing import Any

from dexwheel.tasks.hand.config import projection_on
from dexwheel.tasks.hand_pose.config import G20HandConfig
from dexwheel.tasks.in_hand.config import InHandCfg
from dexwheel.tasks.registry import resolve, task_record
from dexwheel.tasks.velocity.config import WheelLegEnvCfg

#: How a MuJoCo env is shown (the envs' keywords, no part of a task config), which the Isaac Lab tasks refuse.
RENDER_KWARGS = ("render_mode", "width", "height", "camera_name", "default_camera_config")
#: What the G20 pose task sets on top of its config's defaults on Isaac Lab: the PD drive and the presets as goals.
TASK_DEFAULTS = {"drive": {"kind": "pd"}, "goal_mode": "presets"}
#: What the wheel-leg task refuses, and why.
WHEEL_LEG_REFUSED = {
    "scale_rewards_by_dt": "Isaac Lab's reward manager always multiplies each term by the control period; use the "
    "MuJoCo env (backend=mujoco) for it",
}
#: What the hand tasks refuse, and why.
HAND_REFUSED = {
    "collision.projection": "the hard-write drive's collision projection is MuJoCo's collision check of each "
    "slewed pose, which Isaac Lab has no counterpart of; set collision.projection=False "
    "(Hydra: collision=off; Isaac Lab then writes the pose as it is and its contacts push for one physics step; "
    "docs/how-to/isaaclab.md) or use the MuJoCo env (backend=mujoco)",
    "collision.contact_excludes": "the USD carries the description's contact excludes (filtered pairs); another set "
    "needs another USD",
    "max_episode_steps": "Isaac Lab ends episodes by time; give a number of steps",
}


def task_config(task: str, robot: str, kwargs: dict[str, Any]) -> WheelLegEnvCfg | G20HandConfig | InHandCfg:
    """The MuJoCo config that the Isaac Lab counterpart of registered task ``task`` runs for ``robot`` and the env
    keywords ``kwargs`` (its ``task_overrides``: what ``gymnasium.make`` of the task's id takes): the task's config
    (its record's factory), the pose task's :data:`TASK_DEFAULTS`, then ``kwargs``."""
    shown = sorted(set(kwargs) & set(RENDER_KWARGS))
    if shown:
        raise ValueError(f"{shown[0]}: Isaac Lab renders with its own viewers; record videos on the MuJoCo env")
    record = task_record(task)
    cfg = record.default_config(robot)
    make = resolve(record.make_config)
    if isinstance(cfg, G20HandConfig):
        cfg = make(cfg, **TASK_DEFAULTS)  # then kwargs, field by field: drive={"slew_rad_s": 0} keeps the PD drive
    return make(cfg, **kwargs)


def unsupported(task: WheelLegEnvCfg | G20HandConfig | InHandCfg) -> dict[str, str]:
    """Each field of ``task`` (a section's by its dotted name) the Isaac Lab task cannot run as set, with why."""
    if isinstance(task, (G20HandConfig, InHandCfg)):
        reasons = HAND_REFUSED
        bad = {
            "collision.projection": projection_on(task),
            "collision.contact_excludes": task.collision.contact_excludes is not None,
            "max_episode_steps": isinstance(task, G20HandConfig) and task.max_episode_steps is None,
        }
    else:
        reasons, bad = WHEEL_LEG_REFUSED, {"scale_rewards_by_dt": not task.scale_rewards_by_dt}
    return {name: reasons[name] for name, is_bad in bad.items() if is_bad}
