"""The generic terms (dexwheel/tasks/mdp.py): each against its definition, on every task that uses it."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

from dexwheel.tasks import mdp


def test_each_generic_term_computes_its_definition():
    rng = np.random.default_rng(0)
    task = SimpleNamespace(action=rng.normal(size=(3, 5)).astype(np.float32), last_action=rng.normal(size=(3, 5)),
                           actuator_force=rng.normal(size=(3, 8)), terminated=np.array([True, False, True]),
                           qpos=rng.normal(size=(3, 21)), qvel=rng.normal(size=(3, 21)))  # fmt: skip
    diff = task.action.astype(np.float64) - task.last_action
    np.testing.assert_allclose(mdp.action_rate_l2(task), (diff**2).sum(axis=1), rtol=1e-13)
    np.testing.assert_allclose(mdp.joint_torques_l2(task), (task.actuator_force**2).sum(axis=1), rtol=1e-13)
    np.testing.assert_array_equal(mdp.is_terminated(task), [1.0, 0.0, 1.0])
    assert mdp.last_action(task) is task.last_action and mdp.joint_pos(task) is task.qpos
    assert mdp.joint_vel(task) is task.qvel


@pytest.mark.parametrize("env_id", ["Solenopsis-v0", "G20Hand-v0", "G20Rotate-v0"])
def test_every_family_uses_the_one_copy(env_id):
    """The default tables name the generic terms by their one path (no family keeps a copy)."""
    env = gym.make(env_id)
    cfg = env.unwrapped.cfg
    env.close()
    paths = {str(t.func) for section in (cfg.rewards, cfg.observations) for t in section.values()}
    assert "dexwheel.tasks.mdp:action_rate_l2" in paths and "dexwheel.tasks.mdp:last_action" in paths
    assert not any(p.rpartition(":")[2] in ("action_rate_l2", "last_action", "is_terminated", "joint_torques_l2")
                   and not p.startswith("dexwheel.tasks.mdp:") for p in paths)  # fmt: skip
