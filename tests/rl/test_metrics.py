"""Evaluation metrics: what counts as a fall on the rough task."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from dexwheel.rl.evaluation import run_episodes
from dexwheel.rl.metrics import make_metrics

ERRORS = {"lin_vel_x_error": 0.1, "ang_vel_z_error": 0.2}


@pytest.mark.parametrize(("flags", "terminated", "fall", "out_of_bounds"), [
    ({"out_of_bounds": True}, True, 0.0, 1.0),  # drove off the map upright
    ({"out_of_bounds": True, "contact": True}, True, 1.0, 0.0),  # fell at the edge: a fall
    ({"tilt": True}, True, 1.0, 0.0),
    ({}, False, 0.0, 0.0),  # timed out
])  # fmt: skip
def test_rough_episode_off_the_terrain_is_not_a_fall(flags, terminated, fall, out_of_bounds):
    metrics = make_metrics("velocity_rough")
    names = ("contact", "tilt", "out_of_bounds")
    metrics.step({**ERRORS, **{f"terminated_{k}": False for k in names}})
    metrics.step({**ERRORS, **{f"terminated_{k}": flags.get(k, False) for k in names}})
    row = metrics.episode(terminated)
    assert (row["fall"], row["out_of_bounds"]) == (fall, out_of_bounds)
    assert row["lin_vel_x_error"] == pytest.approx(0.1)
    # the next episode starts clean
    metrics.step({**ERRORS, **{f"terminated_{k}": False for k in names}})
    assert metrics.episode(False)["out_of_bounds"] == 0.0


def test_the_flat_task_reports_falls_only():
    metrics = make_metrics("velocity")
    metrics.step({**ERRORS, "terminated_contact": True})
    assert metrics.episode(True) == {**ERRORS, "fall": 1.0}


def test_a_rough_env_spawned_out_of_bounds_ends_there_without_a_fall():
    """Every spawn is within 50 m of the edge: each episode ends at its first step, off the terrain."""
    terrain = {"size": (3.0, 3.0), "border_width": 1.0, "num_rows": 2}
    env = gymnasium.make("Solenopsis-Rough-v0", terrain=terrain, episode_length_s=0.5,
                         terminations={"out_of_bounds": {"params": {"distance_buffer": 50.0}}})  # fmt: skip
    zero = np.zeros(env.action_space.shape, dtype=env.action_space.dtype)
    result = run_episodes(env, lambda obs: zero, "velocity_rough", 3, seed=0)
    assert [(e["length"], e["fall"], e["out_of_bounds"]) for e in result.episodes] == [(1.0, 0.0, 1.0)] * 3
    env = gymnasium.make("Solenopsis-Rough-v0", terrain=terrain, episode_length_s=0.5)
    result = run_episodes(env, lambda obs: zero, "velocity_rough", 2, seed=0)
    assert [(e["length"], e["fall"], e["out_of_bounds"]) for e in result.episodes] == [(25.0, 0.0, 0.0)] * 2
