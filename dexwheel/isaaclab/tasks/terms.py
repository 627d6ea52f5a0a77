"""What the Isaac Lab terms of both tasks are made of: the robot entity, its joints in the MuJoCo task's order,
the env index of a term's ``env_ids`` and the observation group as the MuJoCo tasks build theirs."""

from __future__ import annotations

import torch
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils import configclass

ROBOT = SceneEntityCfg("robot")


def robot_joints(names) -> SceneEntityCfg:
    """The robot's joints ``names``, in that order (the MuJoCo task's column order)."""
    return SceneEntityCfg("robot", joint_names=list(names), preserve_order=True)


@configclass
class ExactObsGroup(ObsGroup):
    """An observation group as the MuJoCo tasks build theirs: one concatenated vector; noise only where a term asks
    for it (the task sets ``enable_corruption`` from its table: :func:`~dexwheel.isaaclab.tasks.term_map.corrupted`)."""

    def __post_init__(self):
        self.enable_corruption = False
        self.concatenate_terms = True


def env_index(env_ids, num_envs: int, device) -> torch.Tensor:
    """``env_ids`` (None, a slice, a sequence or a tensor) as a long tensor of env indices."""
    if env_ids is None:
        return torch.arange(num_envs, device=device)
    if isinstance(env_ids, slice):
        return torch.arange(num_envs, device=device)[env_ids]
    return torch.as_tensor(env_ids, device=device).long()
