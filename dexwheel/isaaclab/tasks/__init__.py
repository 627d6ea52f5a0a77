"""Isaac Lab tasks of dexwheel, one folder per task family as :mod:`dexwheel.tasks`, each registered task's ids made
and registered as gym ids on import (``import dexwheel.isaaclab.tasks``) from the task registry
(:mod:`dexwheel.tasks.registry`: a record's ``isaaclab`` ids and ``isaaclab_cfg`` class).

* :mod:`.velocity`: the wheel-leg velocity tasks (``Dexwheel-Velocity-Flat-*``, and on the terrain built from the same
  description, ``Dexwheel-Velocity-Rough-*``: :mod:`dexwheel.isaaclab.terrain`);
* :mod:`.hand_pose`: the G20 pose task with the PD drive (``Dexwheel-HandPose-G20Left-v0`` / ``-G20Right-v0``);
* :mod:`.in_hand`: the G20 object tasks (``Dexwheel-InHand-Rotate-*``, ``Dexwheel-InHand-Reorient-*``);
* what the tasks' terms share: :mod:`.term_map` (a MuJoCo term table as Isaac Lab terms), :mod:`.terms` (the robot
  entity, its joints, env indices, the observation group), :mod:`.action_delay` (the action latency);
* :mod:`.agents`: the rsl_rl runners of every task, from the one config both backends train with.

Each id is a subclass of its family's env config naming the task and the robot (``<Id>EnvCfg``, attributes of this
module) with a runner config naming the task (``<Id>PPORunnerCfg``). Build one as Isaac Lab's own tasks are built::

    env = gym.make(TASK, cfg=parse_env_cfg(TASK, device="cpu", num_envs=N))
"""

from __future__ import annotations

import re

import gymnasium as gym
from isaaclab.utils import configclass

from dexwheel.isaaclab.tasks.agents import DexwheelPPORunnerCfg
from dexwheel.tasks.registry import TaskRecord, derive_from_each, load_user_tasks, resolve

#: Isaac Lab id -> (registered task, robot)
TASKS: dict[str, tuple[str, str]] = {}


def _class_name(task_id: str, suffix: str) -> str:
    """``Dexwheel-InHand-Rotate-G20Left-v0`` -> ``InHandRotateG20Left<suffix>``."""
    words = re.sub(r"-v\d+$", "", task_id).split("-")
    return "".join(words[1:] if words[0] == "Dexwheel" else words) + suffix


def _subclass(base: type, name: str, fields: dict[str, str]) -> type:
    """A configclass subclass of ``base`` named ``name`` with string ``fields`` set (an attribute of this module, so
    Isaac Lab's ``"module:Class"`` entry points find it)."""
    cls = configclass(type(name, (base,), {"__annotations__": dict.fromkeys(fields, str), **fields,
                                           "__module__": __name__}))  # fmt: skip
    globals()[name] = cls
    return cls


def register_ids(record: TaskRecord) -> None:
    """A registered task's Isaac Lab ids (idempotent): an env config and a runner config class each."""
    for robot, task_id in record.isaaclab.items():
        TASKS[task_id] = (record.name, robot)
        if task_id in gym.registry:
            continue
        env_cfg = _subclass(resolve(record.isaaclab_cfg), _class_name(task_id, "EnvCfg"),
                            {"task": record.name, "robot": robot})  # fmt: skip
        runner = _subclass(DexwheelPPORunnerCfg, _class_name(task_id, "PPORunnerCfg"),
                           {"task": record.name, "experiment_name": f"{record.name}_{robot}"})  # fmt: skip
        gym.register(
            id=task_id,
            entry_point="isaaclab.envs:ManagerBasedRLEnv",
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{__name__}:{env_cfg.__name__}",
                "rsl_rl_cfg_entry_point": f"{__name__}:{runner.__name__}",
                "default_agent": "rsl_rl",
            },
        )


load_user_tasks()  # a user's tasks (DEXWHEEL_TASKS, entry points): the Isaac Lab child imports them too
derive_from_each(register_ids)  # every task's, and a task registered later
