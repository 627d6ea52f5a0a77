"""What the Isaac Lab tasks cannot run, decided from the MuJoCo task's config alone (no Isaac Lab, no MuJoCo: both
venvs import this). Here in ``rl``, below the Isaac Lab backend, because the core venv's checks read it too.

The Isaac Lab tasks refuse it when they are built (:mod:`dexwheel.isaaclab.tasks.velocity.config`,
:mod:`dexwheel.isaaclab.tasks.hand_pose.config`, :mod:`dexwheel.isaaclab.tasks.in_hand.config`);
``scripts/train.py`` and ``scripts/evaluate.py`` refuse it in the core venv first, naming the config key, before Isaac
Lab starts (about 20 s): :func:`dexwheel.rl.env_factory.check_isaaclab_env`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from dexwheel.tasks.hand_pose.config import G20HandConfig
from dexwheel.tasks.hand_pose.config import make_cfg as hand_cfg
from dexwheel.tasks.in_hand.config import InHandCfg
from dexwheel.tasks.in_hand.config import make_cfg as in_hand_cfg
from dexwheel.tasks.velocity.config import WheelLegEnvCfg
from dexwheel.tasks.velocity.config import make_cfg as wheel_leg_cfg

#: The MuJoCo env the G20 task is (its registered episode length is the default here).
HAND_ENV_ID = "G20Hand-v0"
#: What the G20 task sets on top of G20HandConfig's defaults: the PD drive and the presets as goals.
TASK_DEFAULTS = {"drive": "pd", "goal_mode": "presets"}
#: What the wheel-leg task refuses, and why.
WHEEL_LEG_REFUSED = {
    "scale_rewards_by_dt": "Isaac Lab's reward manager always multiplies each term by the control period; use the "
    "MuJoCo env (backend=mujoco) for it",
}
#: What the G20 task refuses, and why.
HAND_REFUSED = {
    "collision_projection": "the hard-write drive's collision projection is MuJoCo's collision check of each "
    "slewed pose, which Isaac Lab has no counterpart of; set collision_projection=False "
    "(Hydra: collision=off; Isaac Lab then writes the pose as it is and its contacts push for one physics step; "
    "docs/how-to/isaaclab.md) or use the MuJoCo env (backend=mujoco)",
    "contact_excludes": "the USD carries the description's contact excludes (filtered pairs); another set needs "
    "another USD",
    "max_episode_steps": "Isaac Lab ends episodes by time; give a number of steps",
    "render_mode": "Isaac Lab renders with its own viewers; record videos on the MuJoCo env",
}

#: The MuJoCo object tasks (their env ids) and the in-hand config's ``task`` each is.
IN_HAND_ENV_IDS = {"G20Rotate-v0": "rotate", "G20Reorient-v0": "reorient"}
#: What the in-hand tasks refuse, and why (the hand's reasons: the same USD, the same viewers).
IN_HAND_REFUSED = {"contact_excludes": HAND_REFUSED["contact_excludes"], "render_mode": HAND_REFUSED["render_mode"]}


def hand_task_cfg(hand: str = "left", **overrides: Any) -> G20HandConfig:
    """The MuJoCo task's config the G20 task runs: :data:`TASK_DEFAULTS`, ``G20Hand-v0``'s registered
    ``max_episode_steps``, then ``overrides`` (what ``gymnasium.make("G20Hand-v0", ...)`` takes)."""
    import dexwheel  # noqa: F401  (registers G20Hand-v0)

    base = {**TASK_DEFAULTS, "max_episode_steps": gym.spec(HAND_ENV_ID).max_episode_steps}
    return hand_cfg(**{**base, "hand": hand, **overrides})


def task_config(env_id: str, robot: str, kwargs: dict[str, Any]) -> WheelLegEnvCfg | G20HandConfig | InHandCfg:
    """The MuJoCo task config that the Isaac Lab task of the MuJoCo env ``env_id`` runs for the env keywords
    ``kwargs`` (its ``task_overrides``)."""
    if env_id in IN_HAND_ENV_IDS:
        return in_hand_cfg(**{**kwargs, "task": IN_HAND_ENV_IDS[env_id]})
    if env_id == HAND_ENV_ID:
        return hand_task_cfg(**kwargs)
    return wheel_leg_cfg(robot=robot, **kwargs)


def unsupported(task: WheelLegEnvCfg | G20HandConfig | InHandCfg) -> dict[str, str]:
    """Each keyword of ``task`` the Isaac Lab task cannot run as set, with why."""
    if isinstance(task, InHandCfg):
        reasons = IN_HAND_REFUSED
        bad = {
            "contact_excludes": task.collision.contact_excludes is not None,
            "render_mode": task.render_mode is not None,
        }
    elif isinstance(task, G20HandConfig):
        reasons = HAND_REFUSED
        bad = {
            "collision_projection": task.projection,
            "contact_excludes": task.contact_excludes is not None,
            "max_episode_steps": task.max_episode_steps is None,
            "render_mode": task.render_mode is not None,
        }
    else:
        reasons, bad = WHEEL_LEG_REFUSED, {"scale_rewards_by_dt": not task.scale_rewards_by_dt}
    return {name: reasons[name] for name, is_bad in bad.items() if is_bad}
