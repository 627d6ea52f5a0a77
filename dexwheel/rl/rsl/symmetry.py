"""Left-right symmetry augmentation for rsl_ppo (rsl_rl's ``Symmetry`` extension, ``algo.params.symmetry``).

Each mini-batch is learnt twice: as collected and mirrored in the robot's xz plane (Mittal et al., ICRA
2024), so a turn to the left teaches the turn to the right. The env says what the mirror image of its
observations and actions is (``mirror_maps``: the wheel-leg robots); this module applies it to rsl_rl's
batches.
"""

from __future__ import annotations

import torch
from tensordict import TensorDict


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
