"""Physics blow-ups end the episode as truncated, flagged in ``info["diverged"]``, with finite outputs.

What a user sees: the step that blew up returns a finite observation, a zero reward and
``truncated=True``; the next reset starts a normal episode; in a vector env only that env resets.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dexwheel  # noqa: F401


def _blow_up(data) -> None:
    data.qvel[:] = 1e300  # MuJoCo's instability check catches this in the next step


@pytest.mark.parametrize(("env_id", "kwargs", "dim"), [("Solenopsis-v0", {}, 8), ("M20Legacy-v0", {}, 8),
                                                        ("G20Hand-v0", {"drive": "pd"}, 16)])  # fmt: skip
def test_single_env_flags_a_blow_up_and_resets(env_id: str, kwargs: dict, dim: int) -> None:
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    *_, info = env.step(np.zeros(dim))
    assert info["diverged"] is False
    _blow_up(env.unwrapped.data)
    obs, reward, terminated, truncated, info = env.step(np.zeros(dim))
    assert info["diverged"] is True and truncated and not terminated
    assert reward == 0.0 and np.isfinite(obs).all()
    assert all(np.isfinite(v) for v in info.values() if isinstance(v, float))
    assert all(v == 0.0 for k, v in info.items() if k.startswith("reward_"))
    obs, _ = env.reset(seed=1)
    obs, reward, _, truncated, info = env.step(np.zeros(dim))
    assert not info["diverged"] and not truncated and reward != 0.0


def test_negative_mass_no_longer_goes_unnoticed() -> None:
    """The defect: a negative base mass blew qpos up while the observation and reward looked normal."""
    env = gym.make("Solenopsis-v0").unwrapped
    env.reset(seed=0)
    env.model.body_mass[env.model.body("base_link").id] = -5.0
    obs, reward, _, truncated, info = env.step(np.zeros(8))
    assert info["diverged"] and truncated and reward == 0.0 and np.isfinite(obs).all()


@pytest.mark.parametrize(("env_id", "kwargs", "dim"), [("Solenopsis-v0", {}, 8), ("G20Hand-v0", {"drive": "pd"}, 16)])
def test_vector_env_resets_only_the_env_that_diverged(env_id: str, kwargs: dict, dim: int) -> None:
    vec = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    vec.reset(seed=0)
    zeros = np.zeros((3, dim))
    vec.step(zeros)
    task = vec.unwrapped.task
    qvel = task.physics.qvel if hasattr(task, "physics") else task.drive.qvel
    qvel[1] = 1e300
    obs, reward, terminated, truncated, infos = vec.step(zeros)
    assert truncated.tolist() == [False, True, False] and not terminated.any()
    final = infos.get("final_info", infos)  # the G20 vector env keeps the final step's info there
    assert final["diverged"].tolist() == [False, True, False]
    assert reward[1] == 0.0 and reward[0] != 0.0 and np.isfinite(obs).all()
    assert infos["_final_obs"].tolist() == [False, True, False]
    obs, reward, terminated, truncated, infos = vec.step(zeros)
    assert not truncated.any() and not infos["diverged"].any() and np.all(reward != 0.0)


def test_hard_write_cannot_diverge() -> None:
    """Hard-write integrates nothing: a written velocity is discarded, the pose stays within its limits."""
    env = gym.make("G20Hand-v0")
    env.reset(seed=0)
    _blow_up(env.unwrapped.data)
    *_, truncated, info = env.step(np.zeros(16))
    assert info["diverged"] is False and not truncated
    assert np.isfinite(env.unwrapped.data.qpos).all()
