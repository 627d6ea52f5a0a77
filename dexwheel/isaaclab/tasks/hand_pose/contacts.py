"""The deepest contact per env, as the MuJoCo G20 models' sensor reads it."""

from __future__ import annotations

import torch
import warp as wp
from isaaclab_newton.physics import NewtonManager


def contact_depth(num_envs: int, device) -> torch.Tensor:
    """Per env, the deepest contact of the last physics step (m, >= 0; 0 without one): the MuJoCo models'
    deepest-contact sensor (``-min(dist, 0)`` over every contact), read from MuJoCo-Warp's contact list.
    Newton's worlds are the envs, in order."""
    data = NewtonManager._solver.mjw_data
    dist = wp.to_torch(data.contact.dist)
    world = wp.to_torch(data.contact.worldid).long().clamp(0, num_envs - 1)
    live = torch.arange(dist.shape[0], device=dist.device) < wp.to_torch(data.nacon)
    depth = torch.where(live, torch.clamp(-dist, min=0.0), torch.zeros_like(dist))
    out = torch.zeros(num_envs, device=dist.device, dtype=dist.dtype)
    return out.scatter_reduce_(0, world, depth, reduce="amax").to(device)
