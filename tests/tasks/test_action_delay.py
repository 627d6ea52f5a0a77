"""Action latency (issue 57): with ``delay_steps`` k the applied target lags the policy's action by exactly k
control steps, on both task families; a range draws k per env at each reset (dexwheel.tasks.action_delay)."""

import copy

import gymnasium
import numpy as np
import pytest

import dexwheel  # noqa: F401
from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.action_delay import ActionDelay

CASES = {
    "Solenopsis-v0": ({"actions": {"delay_steps": 3}}, {}),
    "G20Hand-v0": ({"actions": {"delay_steps": 3}}, {"drive": "pd"}),
}


def state(env):
    task = env.unwrapped.task
    return task.physics.qpos.copy() if hasattr(task, "physics") else task.qpos.copy()


@pytest.mark.parametrize("env_id", list(CASES))
def test_the_applied_action_lags_the_policys_by_exactly_k_steps(env_id):
    delay, kwargs = CASES[env_id]
    delayed = gymnasium.make(env_id, **delay, **kwargs)
    plain = gymnasium.make(env_id, **kwargs)
    delayed.reset(seed=1)
    plain.reset(seed=1)
    rng = np.random.default_rng(0)
    actions = [rng.uniform(-1, 1, delayed.action_space.shape).astype(np.float32) for _ in range(12)]
    task = plain.unwrapped.task
    hold = task.actions.hold_action(task.start_pose[0]) if hasattr(task, "start_pose") else np.zeros(8)
    applied = [hold] * 3 + actions[:-3]  # what the delayed env applies: 3 steps late
    for a, b in zip(actions, applied, strict=True):
        delayed_obs = delayed.step(a)[0]
        plain.step(b)
        assert np.array_equal(state(delayed), state(plain))  # the same targets reach the physics, bit for bit
    sl = delayed.unwrapped.obs_slices["last_action"]
    task = delayed.unwrapped.task
    last = task.actions.normalize(actions[-1]) if hasattr(task, "start_pose") else actions[-1]
    assert np.allclose(delayed_obs[sl], last)  # the policy sees its own last action, not the applied one
    delayed.close()
    plain.close()


def test_a_delay_range_draws_k_per_env_and_single_equals_vector_and_copies_continue():
    kwargs = {"actions": {"delay_steps": (0, 4)}, "episode_length_s": 0.2}
    vec = gymnasium.make_vec("Solenopsis-v0", num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    single = gymnasium.make("Solenopsis-v0", **kwargs)
    vec.reset(seed=[5, 6, 7])
    single.reset(seed=6)
    delays = vec.unwrapped.task.action_term.delay.delay.tolist()
    assert all(0 <= d <= 4 for d in delays)
    rng = np.random.default_rng(1)
    seen = set(delays)
    for t in range(25):  # episodes of 10 steps: each reset draws again
        a = rng.uniform(-1, 1, (3, 8)).astype(np.float32)
        if t == 12:
            twin = copy.deepcopy(single)
        vec.step(a)
        *_, term, trunc, _ = single.step(a[1])
        if t >= 12:
            twin.step(a[1])
            assert np.array_equal(state(twin), state(single))
        if term or trunc:
            single.reset()
            if t >= 12:
                twin.reset()
        assert np.array_equal(vec.unwrapped.task.physics.qpos[1], single.unwrapped.task.physics.qpos[0])
        seen |= set(vec.unwrapped.task.action_term.delay.delay.tolist())
    assert len(seen) >= 3  # redrawn at the resets
    vec.close()
    single.close()


@pytest.mark.parametrize("bad", [-1, 21, (3, 1), 1.5, (0, 2, 4)])
def test_a_bad_delay_is_refused_naming_the_key(bad):
    with pytest.raises(ConfigFieldError, match=r"actions\.delay_steps: expected an integer or \(low, high\)"):
        gymnasium.make("Solenopsis-v0", actions={"delay_steps": bad})
    with pytest.raises(ConfigFieldError, match=r"actions.delay_steps: expected an integer or \(low, high\)"):
        gymnasium.make("G20Hand-v0", actions={"delay_steps": bad})


def test_the_ring_on_torch_is_the_numpy_one():
    torch = pytest.importorskip("torch")
    a = np.zeros((2, 3))
    d_np, d_t = ActionDelay((1, 2), a), ActionDelay((1, 2), torch.zeros(2, 3, dtype=torch.float64))
    d_np.reset([0, 1], np.ones(3), np.array([1, 2]))
    d_t.reset(torch.tensor([0, 1]), torch.ones(3, dtype=torch.float64), torch.tensor([1, 2]))
    for k in range(5):
        x = np.full((2, 3), float(k))
        assert np.array_equal(d_np(x), d_t(torch.from_numpy(x)).numpy())
