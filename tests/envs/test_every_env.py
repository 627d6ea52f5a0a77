"""What every registered dexwheel id promises, single and vector: the reward is the sum of its ``info["reward_<term>"]``
entries (each term's weighted contribution), and a NaN or inf action is refused in one line, changing nothing."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from dexwheel.control import ActionError
from dexwheel.envs import register_envs

register_envs()
IDS = sorted(i for i, spec in gym.registry.items() if str(spec.entry_point).startswith("dexwheel."))
VEC = {"vectorization_mode": "vector_entry_point"}
N = 2


def make(env_id: str, vector: bool):
    return gym.make_vec(env_id, num_envs=N, **VEC) if vector else gym.make(env_id)


def test_every_family_is_covered():
    assert {"G20Hand-v0", "G20Rotate-v0", "G20Reorient-v0", "Solenopsis-v0", "Solenopsis-Rough-v0"} <= set(IDS)


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
@pytest.mark.parametrize("env_id", IDS)
def test_the_reward_is_the_sum_of_its_reward_entries(env_id, vector):
    env = make(env_id, vector)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(4):
        _, reward, _, _, info = env.step(env.action_space.sample())
        terms = [k for k in info if k.startswith("reward_")]
        assert terms, f"{env_id}: no reward_<term> entries in info"
        total = sum(np.asarray(info[k], dtype=np.float64) for k in terms)
        np.testing.assert_allclose(total, reward, rtol=1e-12, atol=1e-12, err_msg=f"{env_id}: {terms}")
    env.close()


@pytest.mark.parametrize("vector", [False, True], ids=["single", "vector"])
@pytest.mark.parametrize("env_id", IDS)
def test_a_non_finite_action_is_refused_in_one_line_and_changes_nothing(env_id, vector):
    refused, twin = make(env_id, vector), make(env_id, vector)
    for env in (refused, twin):
        env.reset(seed=0)
    refused.action_space.seed(1)
    good = refused.action_space.sample()
    for value in (np.nan, np.inf, -np.inf):
        bad = np.array(good, dtype=np.float64)
        bad[(N - 1, 2) if vector else 2] = value
        with pytest.raises(ActionError, match="is not finite") as err:
            refused.step(bad)
        assert "\n" not in str(err.value)
        assert ("env 1: " in str(err.value)) == vector
    obs_a, reward_a, *_ = refused.step(good)
    obs_b, reward_b, *_ = twin.step(good)
    np.testing.assert_array_equal(obs_a, obs_b)
    np.testing.assert_array_equal(reward_a, reward_b)
    for env in (refused, twin):
        env.close()
