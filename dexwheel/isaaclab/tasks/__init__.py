"""Isaac Lab tasks of dexwheel, registered as gym ids on import (``import dexwheel.isaaclab.tasks``).

``Dexwheel-Velocity-Flat-Solenopsis-v0`` and ``Dexwheel-Velocity-Flat-M20Legacy-v0``: the MuJoCo
``Solenopsis-v0`` / ``M20Legacy-v0`` velocity-tracking task on Newton + MuJoCo-Warp
(:mod:`dexwheel.isaaclab.tasks.wheel_leg_flat`). ``Dexwheel-Velocity-Rough-Solenopsis-v0`` and
``Dexwheel-Velocity-Rough-M20Legacy-v0``: ``Solenopsis-Rough-v0`` / ``M20Legacy-Rough-v0`` on the terrain built
from the same description (:mod:`dexwheel.isaaclab.terrain`). ``Dexwheel-Pose-G20Left-v0`` and ``Dexwheel-Pose-G20Right-v0``:
the MuJoCo ``G20Hand-v0`` pose-tracking task with the PD drive (:mod:`dexwheel.isaaclab.tasks.g20_pose`).
Build one as Isaac Lab's own tasks are built::

    env = gym.make(TASK, cfg=parse_env_cfg(TASK, device="cpu", num_envs=64))
"""

from __future__ import annotations

import gymnasium as gym

#: gym id -> (module, env config class, rsl_rl runner config class of :mod:`.agents`)
TASKS = {
    "Dexwheel-Velocity-Flat-Solenopsis-v0": ("wheel_leg_flat", "SolenopsisFlatEnvCfg", "WheelLegFlatPPORunnerCfg"),
    "Dexwheel-Velocity-Flat-M20Legacy-v0": ("wheel_leg_flat", "M20LegacyFlatEnvCfg", "M20LegacyFlatPPORunnerCfg"),
    "Dexwheel-Velocity-Rough-Solenopsis-v0": ("wheel_leg_flat", "SolenopsisRoughEnvCfg", "WheelLegRoughPPORunnerCfg"),
    "Dexwheel-Velocity-Rough-M20Legacy-v0": ("wheel_leg_flat", "M20LegacyRoughEnvCfg", "M20LegacyRoughPPORunnerCfg"),
    "Dexwheel-Pose-G20Left-v0": ("g20_pose", "G20LeftPoseEnvCfg", "G20LeftPosePPORunnerCfg"),
    "Dexwheel-Pose-G20Right-v0": ("g20_pose", "G20RightPoseEnvCfg", "G20RightPosePPORunnerCfg"),
}

for _task, (_module, _env_cfg, _agent_cfg) in TASKS.items():
    if _task not in gym.registry:
        gym.register(
            id=_task,
            entry_point="isaaclab.envs:ManagerBasedRLEnv",
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{__name__}.{_module}:{_env_cfg}",
                "rsl_rl_cfg_entry_point": f"{__name__}.agents:{_agent_cfg}",
                "default_agent": "rsl_rl",
            },
        )
