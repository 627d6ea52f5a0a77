"""Left-right symmetry augmentation for rsl_ppo (rsl_rl's ``Symmetry`` extension, ``algo.params.symmetry``).

Each mini-batch is learnt twice: as collected and mirrored in the robot's xz plane (Mittal et al., ICRA
2024), so a turn to the left teaches the turn to the right. The env says what the mirror image of its
observations and actions is (``mirror_maps``: the wheel-leg robots); this module applies it to rsl_rl's
batches.
"""

from __future__ import annotations

import torch
from rsl_rl.extensions import Symmetry
from rsl_rl.models import MLPModel
from rsl_rl.storage import RolloutStorage
from tensordict import TensorDict
from torch import nn


def _mirror(x: torch.Tensor, index, sign) -> torch.Tensor:
    index = torch.as_tensor(index, device=x.device)
    return x[..., index[: x.shape[-1]]] * torch.as_tensor(sign[: x.shape[-1]], device=x.device, dtype=x.dtype)


def mirrored(env, obs: TensorDict | None = None, actions: torch.Tensor | None = None):
    """rsl_rl's ``data_augmentation_func``: each batch followed by its mirror image (the policy group is the
    leading columns of the full observation, so both groups mirror with the same maps)."""
    if getattr(env, "mirror_maps", None) is None:
        raise ValueError(
            f"algo.params.symmetry: {env.cfg.get('env', 'this env')} has no left-right mirror (the wheel-leg envs have)"
        )
    (obs_index, obs_sign), (act_index, act_sign) = env.mirror_maps
    out_obs = out_actions = None
    if obs is not None:
        groups = {k: torch.cat([v, _mirror(v, obs_index, obs_sign)]) for k, v in obs.items()}
        out_obs = TensorDict(groups, batch_size=[2 * obs.batch_size[0]], device=obs.device)
    if actions is not None:
        out_actions = torch.cat([actions, _mirror(actions, act_index, act_sign)])
    return out_obs, out_actions


class AugmentedSymmetry(Symmetry):
    """rsl_rl's ``Symmetry`` whose logged mirror loss reuses the update's own forward pass.

    With mirrored batches learnt and the mirror loss only logged (dexwheel's setting), rsl_rl evaluates the actor a
    second time over the doubled batch just to log ``Loss/symmetry``: about a seventh of the update's time. The
    update's first forward pass already holds the actor's means on both halves (the Gaussian's mean is the MLP's
    output), so the same loss comes from those, with the same numbers and the same weights.
    """

    def compute_loss(self, actor: MLPModel, batch: RolloutStorage.Batch, original_batch_size: int) -> torch.Tensor:
        if self.use_mirror_loss or not self.use_data_augmentation:
            return super().compute_loss(actor, batch, original_batch_size)
        means = actor.output_mean.detach()
        _, mirrored_means = self.data_augmentation_func(env=self.env, obs=None, actions=means[:original_batch_size])
        return nn.functional.mse_loss(means[original_batch_size:], mirrored_means[original_batch_size:])

    @classmethod
    def like(cls, symmetry: Symmetry) -> AugmentedSymmetry:
        """The same settings as rsl_rl's ``symmetry`` (PPO builds that one from ``symmetry_cfg``)."""
        return cls(symmetry.env, symmetry.data_augmentation_func, symmetry.use_data_augmentation,
                   symmetry.use_mirror_loss, symmetry.mirror_loss_coeff)  # fmt: skip
