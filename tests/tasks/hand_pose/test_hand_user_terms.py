"""A user's own hand terms from their own module (gym.make keywords and Hydra): in info, in the reward's
sum, in the observation, in the vector env; bad ones refused naming the term."""

import copy

import gymnasium as gym
import numpy as np
import pytest
from cfgutil import compose_cfg
from vecutil import assert_same

import dexwheel  # noqa: F401
from dexwheel.envs.g20_vector import G20HandVectorEnv
from dexwheel.fields import ConfigFieldError
from dexwheel.rl.env_factory import make_vector_env

SPREAD = {"func": "user_terms:thumb_spread", "weight": -0.5, "params": {"joint": 0}}


def test_a_user_reward_term_is_in_info_and_in_the_sum():
    env = gym.make("G20Hand-v0", rewards={"thumb_spread": SPREAD})
    env.reset(seed=0)
    u = env.unwrapped
    for _ in range(10):
        _, reward, _, _, info = env.step(env.action_space.sample())
        q0 = u.data.qpos[u.task.active_idx[0]]
        assert info["reward_thumb_spread"] == pytest.approx(-0.5 * (q0 - u.task.coupling.active_lower[0]), rel=1e-12)
        assert reward == sum(v for k, v in info.items() if k.startswith("reward_"))  # table order, left to right


def test_weight_zero_disables_a_term_without_calling_it():
    env = gym.make("G20Hand-v0", rewards={"penetration": 0, "bug": {"func": "user_terms:raises", "weight": 0}})
    env.reset(seed=0)
    _, reward, _, _, info = env.step(env.action_space.sample())
    assert info["reward_penetration"] == 0.0 and info["reward_bug"] == 0.0
    assert reward == sum(v for k, v in info.items() if k.startswith("reward_"))


def test_user_observation_termination_and_event_terms():
    env = gym.make("G20Hand-v0", goal_mode="presets", observations={"speed": {"func": "user_terms:fingertip_speed", "scale": 0.1}},
                   terminations={"reached": {"func": "user_terms:goal_reached", "params": {"tol": 0.2}}},
                   events={"reset_joints": None, "closed": {"func": "user_terms:start_closed", "params": {"amount": 0.5}}})  # fmt: skip
    u = env.unwrapped
    assert u.obs_slices["speed"] == slice(74, 75) and env.observation_space.shape == (75,)
    obs, _ = env.reset(seed=0, options={"goal": "half_fist"})
    half = 0.5 * (u.task.presets["open"] + u.task.presets["full_fist"])  # the event's start, no noise event
    np.testing.assert_allclose(u.data.qpos[u.task.active_idx], half, atol=1e-12)
    assert obs[74] == 0.0
    obs, _, terminated, _, info = env.step(u.task.actions.hold_action(u.goal).astype(np.float32))
    assert obs[74] == np.float32(0.1 * np.abs(u.task.qvel[0]).max())
    assert info["terminated_reached"] == terminated


def test_the_vector_env_matches_single_envs_with_user_terms():
    kwargs = {"rewards": {"thumb_spread": SPREAD}, "observations": {"speed": {"func": "user_terms:fingertip_speed"}}}
    vec = G20HandVectorEnv(num_envs=2, **kwargs)
    singles = [gym.make("G20Hand-v0", **kwargs).unwrapped for _ in range(2)]
    obs, _ = vec.reset(seed=[3, 4])
    assert_same(obs, np.stack([s.reset(seed=seed)[0] for s, seed in zip(singles, (3, 4), strict=True)]))
    actions = np.random.default_rng(0).uniform(-1, 1, (15, 2, 16)).astype(np.float32)
    for a in actions:
        obs, reward, _, _, info = vec.step(a)
        outs = [s.step(a[i]) for i, s in enumerate(singles)]
        assert_same(obs, np.stack([o[0] for o in outs]))
        assert_same(reward, np.array([o[1] for o in outs]))
        assert_same(info["reward_thumb_spread"], np.array([o[4]["reward_thumb_spread"] for o in outs]))
    twin = copy.deepcopy(singles[0])  # a copy keeps the term by its path and continues the same trajectory
    assert twin.cfg.rewards["thumb_spread"].func == "user_terms:thumb_spread"
    assert_same(twin.step(actions[0, 0])[0], singles[0].step(actions[0, 0])[0])


def test_hydra_adds_a_hand_term():
    cfg = compose_cfg(
        "train",
        "robot=g20_left",
        "+task.hand_pose.rewards.thumb_spread={func: 'user_terms:thumb_spread', weight: -0.5}",
    )
    env = make_vector_env(cfg, num_envs=2)
    env.reset(seed=0)
    info = env.step(np.zeros((2, 16), np.float32))[4]
    assert info["reward_thumb_spread"].shape == (2,) and (info["reward_thumb_spread"] <= 0).all()


@pytest.mark.parametrize(
    ("rewards", "match"),
    [
        ({"x": {"func": "user_terms:nope", "weight": 1}}, r"rewards\.x\.func: module 'user_terms' has no 'nope'"),
        (
            {"x": {"func": "user_terms:wrong_shape", "weight": 1}},
            r"rewards\.x: 'user_terms:wrong_shape' returned shape \(1, 2\)",
        ),
        ({"x": {"weight": 1}}, r"rewards\.x: a new term needs 'func'"),
    ],
)
def test_bad_user_terms_are_one_error_naming_the_term(rewards, match):
    with pytest.raises(ConfigFieldError, match=match):
        gym.make("G20Hand-v0", rewards=rewards)


def test_an_event_that_cannot_take_its_params_is_refused_naming_it():
    with pytest.raises(
        ConfigFieldError, match=r"events\.reset_joints\.params: .*reset_joints_by_offset' takes \['scale'\]"
    ):
        gym.make("G20Hand-v0", events={"reset_joints": {"params": {"noise": 0.1}}})
