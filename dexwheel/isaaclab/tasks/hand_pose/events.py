"""The G20 task's reset event (the MuJoCo task's ``reset_joints_by_offset``)."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import SceneEntityCfg

from dexwheel.isaaclab.tasks.hand_pose.action import HandPoseAction
from dexwheel.isaaclab.tasks.terms import ROBOT, env_index


def reset_hand_pose(env: ManagerBasedRLEnv, env_ids, pose: list[float], noise: float, action_name: str,
                    asset_cfg: SceneEntityCfg = ROBOT) -> None:  # fmt: skip
    """Start an episode at ``pose`` (the active joints) plus uniform noise of ``noise`` rad, within the limits,
    mimic joints completed (:class:`dexwheel.control.MimicCompletion`), at rest, its PD targets there."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    asset = env.scene[asset_cfg.name]
    ids = env_index(env_ids, env.num_envs, env.device)
    q0 = torch.tensor(pose, device=env.device, dtype=torch.float64).repeat(len(ids), 1)
    if noise > 0:
        q0 += torch.empty_like(q0).uniform_(-noise, noise)
    full = term.completion.clip_and_complete(q0).float()
    joints, envs = term._joint_ids, ids.to(torch.int32)
    asset.write_joint_position_to_sim_index(position=full, joint_ids=joints, env_ids=envs)
    asset.write_joint_velocity_to_sim_index(velocity=torch.zeros_like(full), joint_ids=joints, env_ids=envs)
    asset.actuators.target_command.set_position_index(value=full, joint_ids=joints, env_ids=envs)
