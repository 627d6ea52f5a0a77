"""Composer variants are coherent tasks: a layer set that leaves the policy nothing to control is warned
about (wheel-leg: the stop can be switched off) or refused (the G20's static hold), naming it."""

import copy
import pickle
import warnings

import gymnasium as gym
import pytest
from cfgutil import compose_cfg

import dexwheel  # noqa: F401
from dexwheel.fields import ConfigFieldError
from dexwheel.rl.env_factory import make_env
from dexwheel.robots.g20 import ACTIVE_JOINTS


def test_an_active_stop_over_every_policy_joint_is_warned_about_naming_it():
    with pytest.warns(
        UserWarning, match=r"the active override layer holds every joint of the policy .*override_active=false"
    ):
        env = gym.make("Solenopsis-v0", layers=("policy", "override"))
    env.unwrapped.set_override(False)  # released: the policy drives again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym.make("Solenopsis-v0", layers=("policy", "override"), override_active=False)  # trains; no warning
        gym.make("Solenopsis-v0", layers=("policy", "override"), composer={"override_joints": "wheels"})


def test_a_copy_does_not_repeat_the_warning_and_keeps_the_stop():
    with pytest.warns(UserWarning, match="controls nothing"):
        env = gym.make("Solenopsis-v0", layers=("policy", "override"))
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # shown once, when the original was made
        copies = [copy.deepcopy(env.unwrapped), copy.copy(env.unwrapped), pickle.loads(pickle.dumps(env.unwrapped))]
    for c in copies:  # each still has its stop engaged; the warning is only what is not repeated
        assert c.task.override_active


def test_hydra_safety_stop_warns():
    with pytest.warns(UserWarning, match="controls nothing"):
        make_env(compose_cfg("train", "robot=solenopsis", "composer=safety_stop"))


def test_holding_every_hand_joint_is_refused():
    with pytest.raises(ConfigFieldError, match="hold_joints: .* holds every active joint"):
        gym.make("G20Hand-v0", composer={"layers": ("policy", "hold"), "hold_joints": ACTIVE_JOINTS})
