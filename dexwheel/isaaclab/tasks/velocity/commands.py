"""The velocity command of the wheel-leg task: Isaac Lab's uniform command plus the MuJoCo task's reversals."""

from __future__ import annotations

import isaaclab.envs.mdp as isaac_mdp
import torch
from isaaclab.utils import configclass


class ReversingVelocityCommand(isaac_mdp.UniformVelocityCommand):
    """Isaac Lab's uniform velocity command plus the MuJoCo task's ``commands.rel_reversal``: a mid-episode
    resample (the command counter past the reset's) drives the other way with that probability, keeping its
    drawn speed (:class:`~dexwheel.tasks.velocity.config.CommandCfg`)."""

    cfg: ReversingVelocityCommandCfg

    def _resample_command(self, env_ids) -> None:
        previous = self.vel_command_b[env_ids, 0].clone()  # standing envs hold 0 here: they never reverse
        super()._resample_command(env_ids)
        if self.cfg.rel_reversal <= 0.0:
            return
        mid = self.command_counter[env_ids] > 0
        flip = mid & (previous != 0.0) & (torch.rand_like(previous) < self.cfg.rel_reversal)
        drawn = self.vel_command_b[env_ids, 0]
        self.vel_command_b[env_ids, 0] = torch.where(flip, -torch.sign(previous) * drawn.abs(), drawn)


@configclass
class ReversingVelocityCommandCfg(isaac_mdp.UniformVelocityCommandCfg):
    class_type: type = ReversingVelocityCommand
    rel_reversal: float = 0.0
