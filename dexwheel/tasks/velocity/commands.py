"""The velocity task's command: a forward speed and a yaw rate per env, drawn uniformly and resampled.

Each env draws its command from its own generator (four uniforms per draw, in a fixed order, so a vector env
reproduces single envs bit for bit): ``u[2] < rel_standing_envs`` makes it a zero (stand still) command,
otherwise ``lin_vel_x`` and ``ang_vel_z`` are uniform in their ranges; ``u[3]`` places the next resample in
``resampling_time_s``. A mid-episode resample may reverse the forward command (``rel_reversal``: the drawn
magnitude, the sign opposite the current one), which uniform draws alone made rare (docs/reference/tasks.md).
"""

from __future__ import annotations

import math

import numpy as np

from dexwheel.tasks.velocity.config import CommandCfg


def draw_command(cfg: CommandCfg, rng: np.random.Generator, current_lin_vel_x: float,
                 reverse: bool) -> tuple[float, float, float]:  # fmt: skip
    """One env's new ``(lin_vel_x, ang_vel_z)`` and the seconds until its next resample; ``reverse``
    (mid-episode) lets ``rel_reversal`` flip the forward command's sign against ``current_lin_vel_x``."""
    u = rng.random(4)
    if u[2] < cfg.rel_standing_envs:
        x, wz = 0.0, 0.0
    else:
        x = cfg.lin_vel_x[0] + (cfg.lin_vel_x[1] - cfg.lin_vel_x[0]) * u[0]
        if reverse and cfg.rel_reversal > 0.0 and rng.random() < cfg.rel_reversal and current_lin_vel_x != 0.0:
            x = -math.copysign(abs(x), current_lin_vel_x)
        wz = cfg.ang_vel_z[0] + (cfg.ang_vel_z[1] - cfg.ang_vel_z[0]) * u[1]
    lo, hi = cfg.resampling_time_s
    return x, wz, lo + (hi - lo) * u[3]
