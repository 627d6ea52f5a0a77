"""The term runner alone, on a mock task state: observation processing (noise, clip, scale, history), stateful
terms, the first call's checks and a later step's value that is not finite (dexwheel.tasks.manager)."""

from types import SimpleNamespace

import gymnasium
import numpy as np
import pytest

import dexwheel  # noqa: F401
from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.manager import TermRunner, TermValueError, counter_uniform
from dexwheel.tasks.terms import NoiseCfg, ObservationTermCfg, RewardTermCfg, TerminationTermCfg

N = 3


def mock_task():
    return SimpleNamespace(num_envs=N, x=np.arange(N * 2, dtype=np.float64).reshape(N, 2), y=np.ones(N))


def x(task):
    return task.x


def y(task):
    return task.y


def runner(observations=None, rewards=None, terminations=None, task=None, scale=1.0):
    task = task or mock_task()
    return task, TermRunner(task, N, observations or {"x": ObservationTermCfg(x)}, rewards or {},
                            terminations or {}, reward_scale=scale)  # fmt: skip


def observe(r, task):
    out = np.zeros((N, r.layout.dim), dtype=np.float32)
    return r.compute_obs(out)


def test_a_plain_term_is_value_times_scale_in_its_columns():
    task, r = runner({"x": ObservationTermCfg(x, scale=0.5), "y": ObservationTermCfg(y)})
    assert r.layout.slices == {"x": slice(0, 2), "y": slice(2, 3)} and r.layout.dim == 3
    np.testing.assert_array_equal(observe(r, task), np.c_[task.x * 0.5, task.y].astype(np.float32))


def test_noise_then_clip_then_scale():
    task, r = runner({"x": ObservationTermCfg(x, noise=NoiseCfg("uniform", 0.4), clip=(0.0, 3.0), scale=2.0)})
    r.reset(range(N), [np.random.default_rng(s) for s in range(N)])
    obs = observe(r, task)
    u = counter_uniform(r.noise_key, r.obs_step, 2, r._obs[0].salt)
    expected = np.clip(task.x + 0.4 * (2.0 * u - 1.0), 0.0, 3.0) * 2.0
    np.testing.assert_array_equal(obs, expected.astype(np.float32))
    assert obs.max() == 6.0 and obs.min() >= 0.0  # env 2's x (4, 5) clipped at 3, times 2


def test_noise_is_fresh_each_step_the_same_within_a_step_and_from_the_generator_state_only():
    task, r = runner({"x": ObservationTermCfg(x, noise=0.1)})
    rngs = [np.random.default_rng(7) for _ in range(N)]
    before = [g.bit_generator.state for g in rngs]
    r.reset(range(N), rngs)
    assert [g.bit_generator.state for g in rngs] == before  # the key is read from the state, nothing drawn
    first = observe(r, task).copy()
    assert np.array_equal(observe(r, task), first)  # observed twice in a step: the same noise
    assert r.noise_key[0] == r.noise_key[1] != 0  # the same generator state: the same key
    r.advance()
    second = observe(r, task)
    assert not np.allclose(second, first) and np.abs(second - task.x).max() <= 0.1 + 1e-6
    r.reset([0], [np.random.default_rng(7)])  # the same state again: the same key, the episode's first frame again
    assert np.array_equal(observe(r, task)[0], first[0])


def test_gaussian_noise_has_its_standard_deviation():
    task = SimpleNamespace(num_envs=N, z=np.zeros((N, 4000)))
    r = TermRunner(task, N, {"z": ObservationTermCfg(lambda t: t.z, noise={"kind": "gaussian", "scale": 0.2})}, {}, {})
    r.reset(range(N), [np.random.default_rng(s) for s in range(N)])
    out = r.compute_obs(np.zeros((N, 4000)))
    assert abs(out.std() - 0.2) < 0.01 and abs(out.mean()) < 0.01


def test_history_frames_are_oldest_first_pushed_once_a_step_and_filled_at_a_reset():
    task, r = runner({"x": ObservationTermCfg(x, history_length=3)})
    assert r.layout.slices["x"] == slice(0, 6)
    r.reset(range(N), [None] * N)
    assert np.array_equal(observe(r, task), np.tile(task.x, 3))  # the first frame fills the history
    for _ in (1, 2):
        task.x = task.x + 10.0
        r.advance()
        observe(r, task)
    task.x = task.x + 1.0  # the same step observed again: only the newest frame changes
    out = observe(r, task).reshape(N, 3, 2)
    x0 = np.arange(N * 2, dtype=np.float64).reshape(N, 2)
    np.testing.assert_array_equal(out, np.stack([x0, x0 + 10, x0 + 21], axis=1))
    r.reset([1], [None])
    out = observe(r, task).reshape(N, 3, 2)
    assert (out[1] == task.x[1]).all() and np.array_equal(out[0], np.stack([x0, x0 + 10, x0 + 21])[:, 0])


class Counter:
    """A stateful term: calls since its env's reset."""

    def __init__(self, task, start: float = 0.0):
        self.start, self.count = start, np.full(task.num_envs, start)

    def __call__(self, task):
        self.count += 1.0
        return self.count.copy()

    def reset(self, env_ids):
        self.count[env_ids] = self.start


def test_a_stateful_term_is_built_once_told_of_resets_and_copied_with_the_runner():
    task, r = runner({"n": ObservationTermCfg(Counter, params={"start": 5.0})},
                     rewards={"n": RewardTermCfg(Counter, 2.0)})  # fmt: skip
    assert observe(r, task)[:, 0].tolist() == [7.0] * N  # built at 5, called at the bind and now
    r.reset([1], [None])
    assert observe(r, task)[:, 0].tolist() == [8.0, 6.0, 8.0]
    values = np.zeros((N, 1))
    r.rewards(values)
    assert values[:, 0].tolist() == [2.0, 1.0, 2.0] and r.reward_coef.tolist() == [2.0]  # its own instance
    other_task, other = runner({"n": ObservationTermCfg(Counter, params={"start": 5.0})},
                               rewards={"n": RewardTermCfg(Counter, 2.0)})  # fmt: skip
    other.load_state(r.state())
    assert observe(other, other_task)[:, 0].tolist() == [9.0, 7.0, 9.0]


def test_bad_terms_are_refused_at_construction_naming_the_term_and_the_field():
    cases = [
        ({"obs": {"x": ObservationTermCfg("user_terms:forgetful")}}, r"observations\.x\.func: .*needs a reset\(env_ids\)"),
        ({"obs": {"x": ObservationTermCfg(x, history_length=0)}}, r"observations\.x\.history_length: expected an integer >= 1"),
        ({"obs": {"x": ObservationTermCfg(x, noise=(0.1, 0.2, 0.3))}}, r"observations\.x\.noise: expected a number"),
        ({"obs": {"x": ObservationTermCfg(x, noise=NoiseCfg("uniform", (0.1, 0.2, 0.3)))}},
         r"observations\.x\.noise\.scale: 3 numbers for a term of 2 column\(s\)"),
        ({"obs": {"x": ObservationTermCfg(x, noise={"kind": "laplace", "scale": 0.1})}}, r"observations\.x\.noise\.kind"),
        ({"obs": {"x": ObservationTermCfg(x, clip=(1.0, -1.0))}}, r"observations\.x\.clip: expected \(low, high\)"),
        ({"rewards": {"r": RewardTermCfg("user_terms:nan_always")}}, r"rewards\.r: .*not finite \(env 0: nan\)"),
    ]  # fmt: skip
    from dexwheel.tasks.terms import validate_terms

    for spec, match in cases:
        with pytest.raises(ConfigFieldError, match=match):
            obs = spec.get("obs", {"x": ObservationTermCfg(x)})
            validate_terms(obs, "observations")
            runner(obs, spec.get("rewards"))


def test_a_later_value_that_is_not_finite_names_the_term_the_env_and_the_step():
    task, r = runner(rewards={"r": RewardTermCfg(y)}, terminations={"t": TerminationTermCfg(lambda t: t.y > 2)})
    values = np.zeros((N, 1))
    task.y = np.array([1.0, np.inf, 1.0])
    r.rewards(values)
    r.check_finite(np.array([True, False, True]), values, observe(r, task), 4)  # env 1 diverged: not the term's
    with pytest.raises(TermValueError, match=r"rewards\.r returned inf at step 4 \(env 1, the physics state finite\)"):
        r.check_finite(np.ones(N, dtype=bool), values, observe(r, task), 4)


@pytest.mark.parametrize("env_id", ["Solenopsis-v0", "G20Hand-v0"])
def test_a_users_term_that_turns_nan_is_named_not_blamed_on_the_physics(env_id):
    """Issue 57: a wheel-leg episode ended after one step as a physics divergence; the G20 crashed in SB3."""
    with pytest.raises(ConfigFieldError, match=r"rewards\.bad: 'user_terms:nan_always' returned a value that is not"):
        gymnasium.make(env_id, rewards={"bad": {"func": "user_terms:nan_always", "weight": 1.0}})
    env = gymnasium.make(env_id, rewards={"bad": {"func": "user_terms:nan_after", "weight": 1.0}})
    env.reset(seed=0)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    with pytest.raises(
        TermValueError, match=r"rewards\.bad returned nan at step (\d) \(the physics state finite\)"
    ) as e:
        steps = 0
        while steps < 5:
            steps += 1
            env.step(zero)
    assert f"at step {steps} " in str(e.value) and steps in (3, 4)  # the term turns NaN when the episode is 3 steps old
    env.close()


def test_a_stateful_user_term_and_history_through_gym_make_match_single_and_vector():
    kwargs = {"observations": {"calls": {"func": "user_terms:steps_since_reset"},
                               "base_ang_vel": {"history_length": 2, "noise": 0.01}}}  # fmt: skip
    single = gymnasium.make("Solenopsis-v0", episode_length_s=0.1, **kwargs)
    vec = gymnasium.make_vec("Solenopsis-v0", num_envs=2, vectorization_mode="vector_entry_point",
                             episode_length_s=0.1, **kwargs)  # fmt: skip
    sl = single.unwrapped.obs_slices
    assert sl["base_ang_vel"] == slice(0, 6) and sl["calls"].stop - sl["calls"].start == 1
    obs, _ = single.reset(seed=4)
    vobs, _ = vec.reset(seed=[4, 5])
    assert np.array_equal(obs, vobs[0])
    calls = []
    for _ in range(8):  # episodes of 5 steps: one autoreset inside
        a = np.zeros(single.action_space.shape, dtype=np.float32)
        obs, *_, term, trunc, _ = single.step(a)
        vobs, _, vterm, vtrunc, infos = vec.step(np.stack([a, a]))
        calls.append(float(obs[sl["calls"]][0]))
        if term or trunc:
            assert np.array_equal(obs, infos["final_obs"][0])
            obs, _ = single.reset()
        assert np.array_equal(obs, vobs[0])
    single.close()
    vec.close()
    assert calls[:5] == [2.0, 3.0, 4.0, 5.0, 6.0] and calls[5] < calls[4]  # counted per episode
