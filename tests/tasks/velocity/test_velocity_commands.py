"""The velocity command draw (``tasks/velocity/commands.py``) alone: ranges, standing share, reversals."""

import dataclasses

import numpy as np
import pytest

from dexwheel.tasks.velocity.commands import draw_command
from dexwheel.tasks.velocity.config import CommandCfg


def draws(cfg: CommandCfg, n: int, current: float = 0.0, reverse: bool = False) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.array([draw_command(cfg, rng, current, reverse) for _ in range(n)])


def test_draws_are_uniform_in_their_ranges_with_the_standing_share():
    cfg = CommandCfg()  # +-1 m/s, +-1 rad/s, resample every 5 s, 10 % standing
    out = draws(cfg, 4000)
    standing = (out[:, 0] == 0.0) & (out[:, 1] == 0.0)
    assert standing.mean() == pytest.approx(0.10, abs=0.015)
    moving = out[~standing]
    assert moving[:, 0].min() >= -1.0 and moving[:, 0].max() <= 1.0
    assert moving[:, 0].mean() == pytest.approx(0.0, abs=0.05) and moving[:, 0].std() == pytest.approx(
        2 / 12**0.5, rel=0.05
    )
    assert np.all(out[:, 2] == 5.0)


def test_a_mid_episode_reversal_keeps_the_magnitude_and_flips_the_sign():
    cfg = dataclasses.replace(CommandCfg(), lin_vel_x=(0.8, 1.0), rel_reversal=1.0, rel_standing_envs=0.0)
    out = draws(cfg, 200, current=0.9, reverse=True)
    assert np.all((out[:, 0] <= -0.8) & (out[:, 0] >= -1.0))  # every resample is a hard reversal
    assert np.all(draws(cfg, 200, current=0.9, reverse=False)[:, 0] >= 0.8)  # a reset never reverses


def test_the_draw_order_is_fixed_per_generator():
    cfg = CommandCfg()
    assert np.array_equal(draws(cfg, 50), draws(cfg, 50))
    resample = dataclasses.replace(cfg, resampling_time_s=(2.0, 6.0))
    assert draws(resample, 500)[:, 2].min() >= 2.0 and draws(resample, 500)[:, 2].max() < 6.0
