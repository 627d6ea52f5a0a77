"""A user's own terms, from their own module, by gym.make keywords and by Hydra: in info, in the reward's
sum, in the observation, in the vector env and in training; bad ones refused in one line naming the term."""

import copy
import inspect
import os
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import user_terms
from cfgutil import ROOT, compose_cfg, short
from vecutil import assert_same

import dexwheel  # noqa: F401
from dexwheel.fields import ConfigFieldError
from dexwheel.rl.env_factory import make_vector_env
from dexwheel.rl.training import train

LATERAL = {"func": "user_terms:lateral_vel_l2", "weight": -0.5, "params": {"scale": 2.0}}


def steps(env, n=20, seed=0):
    env.reset(seed=seed)
    rng = np.random.default_rng(1)
    return [env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)) for _ in range(n)]


def test_a_user_reward_term_is_in_info_and_in_the_sum():
    env = gym.make("Solenopsis-v0", rewards={"lateral_vel_l2": LATERAL})
    env.reset(seed=0)
    for _ in range(20):
        _, reward, _, _, info = env.step(env.action_space.sample())
        vy = env.unwrapped.task.base_lin_vel[0, 1]
        assert info["reward_lateral_vel_l2"] == pytest.approx(-0.5 * 2.0 * vy**2 * env.unwrapped.dt, rel=1e-12)
        assert reward == sum(v for k, v in info.items() if k.startswith("reward_"))  # in table order, left to right
    assert list(env.unwrapped.cfg.rewards)[-1] == "lateral_vel_l2"  # new terms come last


def test_weight_zero_disables_a_term_without_calling_it():
    env = gym.make("Solenopsis-v0", rewards={"action_rate_l2": 0, "bug": {"func": "user_terms:raises", "weight": 0}})
    for _, reward, _, _, info in steps(env, 5):
        assert info["reward_action_rate_l2"] == 0.0 and info["reward_bug"] == 0.0
        assert reward == sum(v for k, v in info.items() if k.startswith("reward_"))


def test_user_observation_and_termination_terms():
    env = gym.make("Solenopsis-v0", observations={"base_height": {"func": "user_terms:base_height", "scale": 10.0}},
                   terminations={"stopped": {"func": "user_terms:too_slow", "params": {"min_speed": 1e-9}}})  # fmt: skip
    slices = env.unwrapped.obs_slices
    assert slices["base_height"] == slice(28, 29) and env.observation_space.shape == (29,)
    assert env.unwrapped.policy_obs_dim == 29  # a "policy" group term: the actor reads it
    obs, _ = env.reset(seed=0)
    assert obs[28] == np.float32(10.0 * env.unwrapped.data.qpos[2])
    _, _, terminated, _, info = env.step(np.zeros(8, np.float32))
    assert "terminated_stopped" in info and terminated == (info["terminated_stopped"] or info["terminated_tilt"]
                                                           or info["terminated_contact"])  # fmt: skip


def test_removing_an_observation_term_shrinks_the_layout():
    env = gym.make("Solenopsis-v0", observations={"last_action": None})
    assert env.observation_space.shape == (20,) and "last_action" not in env.unwrapped.obs_slices


@pytest.mark.parametrize(
    ("section", "entry", "message"),
    [
        ("rewards", {"func": "user_terms:missing", "weight": 1.0}, r"rewards\.x\.func: module 'user_terms' has no 'missing'"),
        ("rewards", {"func": "no_such_module:f"}, r"rewards\.x\.func: cannot import module 'no_such_module'"),
        ("rewards", {"func": "user_terms.lateral_vel_l2"}, r"rewards\.x\.func: .* is not a 'package\.module:function' path"),
        ("rewards", {"func": "user_terms:NOT_CALLABLE"}, r"rewards\.x\.func: .* is not callable"),
        ("rewards", {"func": "user_terms:wrong_shape"}, r"rewards\.x: 'user_terms:wrong_shape' returned shape \(1, 2\)"),
        ("rewards", {"func": "user_terms:raises"}, r"rewards\.x: calling 'user_terms:raises' .* RuntimeError: a bug"),
        ("rewards", {"weight": 1.0}, r"rewards\.x: a new term needs 'func'"),
        ("rewards", {"func": "user_terms:lateral_vel_l2", "wieght": 1.0}, r"rewards\.x: unknown field\(s\) \['wieght'\]"),
        ("terminations", {"func": "user_terms:wrong_shape"}, r"terminations\.x: .* returned shape \(1, 2\)"),
        ("observations", {"func": "user_terms:base_height", "group": "actor"}, r"observations\.x\.group: 'actor'"),
    ],
)  # fmt: skip
def test_a_bad_term_is_one_clear_error_naming_it(section, entry, message):
    with pytest.raises(ConfigFieldError, match=message) as e:
        gym.make("Solenopsis-v0", **{section: {"x": entry}})
    assert "\n" not in str(e.value)


def test_bad_parameters_of_built_in_terms_name_the_parameter():
    with pytest.raises(
        ConfigFieldError, match=r"rewards\.track_lin_vel_x_exp\.params\.std: must be a finite number > 0, got 0"
    ):
        gym.make("Solenopsis-v0", rewards={"track_lin_vel_x_exp": {"params": {"std": 0}}})
    with pytest.raises(
        ConfigFieldError,
        match=r"terminations\.tilt\.params\.limit_angle: must be a finite number > 0 and <= 3.14159 \(rad\)",
    ):
        gym.make("Solenopsis-v0", max_tilt=4.0)  # the flat alias reaches the term's parameter


def test_the_earlier_section_keys_still_work():
    cfg = gym.make("Solenopsis-v0", rewards={"lin_vel_std": 0.3, "track_lin_vel_x_exp": 4.0, "scale_by_step_dt": False},
                   observations={"privileged": True, "joint_vel_scale": 0.1},
                   terminations={"max_tilt_rad": 0.8, "contact_bodies": ["base_link"]}).unwrapped.cfg  # fmt: skip
    assert (
        cfg.rewards["track_lin_vel_x_exp"].params == {"std": 0.3} and cfg.rewards["track_lin_vel_x_exp"].weight == 4.0
    )
    assert not cfg.scale_rewards_by_dt and cfg.privileged_obs and cfg.observations["joint_vel_rel"].scale == 0.1
    assert cfg.terminations["tilt"].params["limit_angle"] == 0.8
    assert cfg.terminations["contact"].params["bodies"] == ("base_link",)


def test_the_vector_env_runs_user_terms_as_single_envs_do():
    kwargs = {"rewards": {"lateral_vel_l2": LATERAL}, "observations": {"h": {"func": "user_terms:base_height"}}}
    vec = gym.make_vec("Solenopsis-v0", num_envs=2, vectorization_mode="vector_entry_point", **kwargs)
    singles = [gym.make("Solenopsis-v0", **kwargs) for _ in range(2)]
    vec.reset(seed=5)
    for i, env in enumerate(singles):
        env.reset(seed=5 + i)
    rng = np.random.default_rng(0)
    for _ in range(10):
        actions = rng.uniform(-1, 1, (2, 8)).astype(np.float32)
        obs, reward, *_, info = vec.step(actions)
        for i, env in enumerate(singles):
            o, r, *_, inf = env.step(actions[i])
            assert_same(obs[i], o)
            assert reward[i] == r and info["reward_lateral_vel_l2"][i] == inf["reward_lateral_vel_l2"]


def test_an_env_with_user_terms_copies_and_pickles():
    env = gym.make("Solenopsis-v0", rewards={"lateral_vel_l2": LATERAL}).unwrapped
    steps(env, 3)
    for make_twin in (copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))):
        twin = make_twin(env)
        a, b = env.step(np.full(8, 0.3, np.float32)), twin.step(np.full(8, 0.3, np.float32))
        assert_same(a[:4], b[:4])
        assert a[4]["reward_lateral_vel_l2"] == b[4]["reward_lateral_vel_l2"]


@pytest.mark.slow
def test_hydra_adds_a_term_and_training_uses_it(tmp_path):
    term = "+task.velocity.rewards.lateral_vel_l2={func: 'user_terms:lateral_vel_l2', weight: -0.5}"
    cfg = compose_cfg("train", *short("solenopsis", "train.total_timesteps=1024", term, algo="rsl_ppo"))
    vec = make_vector_env(cfg, 2)
    _, info = vec.reset(seed=0)
    assert "reward_lateral_vel_l2" in info
    train(cfg, tmp_path)
    saved = (tmp_path / "config.yaml").read_text()
    assert "user_terms:lateral_vel_l2" in saved
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "tb" / "rsl_ppo")).Reload()
    assert "Step/reward_lateral_vel_l2" in events.Tags()["scalars"]


def test_the_documented_hydra_command_imports_the_users_module_from_the_folder_it_runs_in(tmp_path):
    """docs/how-to/write-a-term.md's command, as a user runs it beside their own ``mypkg/terms.py``: Python puts only ``scripts/``
    on the path, so ``mypkg`` was not found (issue 57); the run and an evaluation of it now import it."""
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "terms.py").write_text(inspect.getsource(user_terms))
    term = '+task.velocity.rewards.lateral_vel_l2={func: "mypkg.terms:lateral_vel_l2", weight: -0.5}'
    args = short("solenopsis", "train.total_timesteps=1024", "hydra.run.dir=run", term, algo="rsl_ppo")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}  # not tmp_path
    for script, typed in (("train.py", args), ("evaluate.py", ["run=run", "episodes=1"])):
        done = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *typed], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
    assert "mypkg.terms:lateral_vel_l2" in (tmp_path / "run" / "config.yaml").read_text()
