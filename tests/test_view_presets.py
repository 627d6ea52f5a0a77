"""The action sources scripts/view.py plays: preset sequences drive the envs as documented."""

import itertools

import gymnasium as gym
import numpy as np

import dexwheel  # noqa: F401
from dexwheel.rl.presets import g20_sdk_sequence, wheel_leg_sequence
from dexwheel.robots import g20


def test_g20_preset_sequence_reaches_each_preset_pose():
    env = gym.make("G20Hand-v0", actions="sdk255", drive={"track_test": True})
    env.reset(seed=0)
    seq = g20_sdk_sequence(hold_steps=3)
    sdk = env.unwrapped.task.actions.reference  # the dexwheel.control SDK mapping
    for cmd in (g20.G20_OPEN_CMD, g20.G20_HALF_FIST_CMD, g20.G20_FULL_FIST_CMD):
        for action in itertools.islice(seq, 3):
            np.testing.assert_array_equal(action, cmd)
            env.step(action)
        q = env.unwrapped.data.qpos
        np.testing.assert_allclose(q, sdk.to_joint_positions(np.asarray(cmd)), atol=1e-9)


def test_wheel_leg_preset_drives_forward_then_turns_left():
    env = gym.make("Solenopsis-v0")
    env.reset(seed=0)
    seq = wheel_leg_sequence(env.action_space.shape[0], hold_steps=100)
    vx, wz = [], []
    for _ in range(400):
        _, _, terminated, _, info = env.step(next(seq))
        assert not terminated
        vx.append(info["lin_vel_x"])
        wz.append(info["ang_vel_z"])
    assert np.mean(vx[150:200]) > 0.5  # wheels at -0.5 x 20 rad/s roll forward (~1 m/s)
    assert np.mean(wz[250:300]) > 0.3  # right wheels forward, left backward: turn left
