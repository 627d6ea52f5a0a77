"""Isaac Lab tasks of dexwheel, one folder each as :mod:`dexwheel.tasks`, registered as gym ids on import
(``import dexwheel.isaaclab.tasks``).

* :mod:`.velocity`: ``Dexwheel-Velocity-Flat-Solenopsis-v0`` and ``Dexwheel-Velocity-Flat-M20Legacy-v0``, the MuJoCo
  ``Solenopsis-v0`` / ``M20Legacy-v0`` velocity-tracking task on Newton + MuJoCo-Warp;
  ``Dexwheel-Velocity-Rough-Solenopsis-v0`` and ``Dexwheel-Velocity-Rough-M20Legacy-v0``, ``Solenopsis-Rough-v0`` /
  ``M20Legacy-Rough-v0`` on the terrain built from the same description (:mod:`dexwheel.isaaclab.terrain`);
* :mod:`.hand_pose`: ``Dexwheel-HandPose-G20Left-v0`` and ``Dexwheel-HandPose-G20Right-v0``, the MuJoCo
  ``G20Hand-v0`` pose-tracking task with the PD drive;
* :mod:`.in_hand`: ``Dexwheel-InHand-Rotate-G20Left-v0`` / ``-G20Right-v0`` and ``Dexwheel-InHand-Reorient-G20Left-v0``
  / ``-G20Right-v0``, the MuJoCo ``G20Rotate-v0`` / ``G20Reorient-v0`` object tasks;
* what the tasks' terms share: :mod:`.term_map` (a MuJoCo term table as Isaac Lab terms), :mod:`.terms` (the robot
  entity, its joints, env indices, the observation group), :mod:`.action_delay` (the action latency);
* :mod:`.agents`: the rsl_rl runners of every task, from the one config both backends train with.

Build one as Isaac Lab's own tasks are built::

    env = gym.make(TASK, cfg=parse_env_cfg(TASK, device="cpu", num_envs=64))
"""

from __future__ import annotations

import gymnasium as gym

#: gym id -> (module, env config class, rsl_rl runner config class of :mod:`.agents`)
TASKS = {
    "Dexwheel-Velocity-Flat-Solenopsis-v0": ("velocity.config", "VelocityFlatSolenopsisEnvCfg",
                                             "VelocityFlatSolenopsisPPORunnerCfg"),
    "Dexwheel-Velocity-Flat-M20Legacy-v0": ("velocity.config", "VelocityFlatM20LegacyEnvCfg",
                                            "VelocityFlatM20LegacyPPORunnerCfg"),
    "Dexwheel-Velocity-Rough-Solenopsis-v0": ("velocity.config", "VelocityRoughSolenopsisEnvCfg",
                                              "VelocityRoughSolenopsisPPORunnerCfg"),
    "Dexwheel-Velocity-Rough-M20Legacy-v0": ("velocity.config", "VelocityRoughM20LegacyEnvCfg",
                                             "VelocityRoughM20LegacyPPORunnerCfg"),
    "Dexwheel-HandPose-G20Left-v0": ("hand_pose.config", "HandPoseG20LeftEnvCfg", "HandPoseG20LeftPPORunnerCfg"),
    "Dexwheel-HandPose-G20Right-v0": ("hand_pose.config", "HandPoseG20RightEnvCfg", "HandPoseG20RightPPORunnerCfg"),
    "Dexwheel-InHand-Rotate-G20Left-v0": ("in_hand.config", "InHandRotateG20LeftEnvCfg",
                                          "InHandRotateG20LeftPPORunnerCfg"),
    "Dexwheel-InHand-Rotate-G20Right-v0": ("in_hand.config", "InHandRotateG20RightEnvCfg",
                                           "InHandRotateG20RightPPORunnerCfg"),
    "Dexwheel-InHand-Reorient-G20Left-v0": ("in_hand.config", "InHandReorientG20LeftEnvCfg",
                                            "InHandReorientG20LeftPPORunnerCfg"),
    "Dexwheel-InHand-Reorient-G20Right-v0": ("in_hand.config", "InHandReorientG20RightEnvCfg",
                                             "InHandReorientG20RightPPORunnerCfg"),
}  # fmt: skip

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
