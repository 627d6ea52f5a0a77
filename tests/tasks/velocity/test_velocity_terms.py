"""Each velocity-task term alone, on a mock state of three envs, against its formula written out here."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dexwheel.robots.wheel_leg import KNEE_JOINTS, NON_WHEEL_BODIES
from dexwheel.tasks import mdp
from dexwheel.tasks.terms import resolve
from dexwheel.tasks.velocity import observations as obs
from dexwheel.tasks.velocity import rewards as rew
from dexwheel.tasks.velocity import terminations as term
from dexwheel.tasks.velocity.config import OBSERVATIONS, REWARDS, TERMINATIONS


@pytest.fixture
def state():
    rng = np.random.default_rng(0)
    n = 3
    contact = np.zeros((n, len(NON_WHEEL_BODIES)))
    contact[1, 0] = 2.0  # env 1: the base touches the floor twice
    contact[2, -1] = 1.0  # env 2: the last arm once
    return SimpleNamespace(
        num_envs=n,
        commands=np.array([[0.5, -0.2], [0.0, 0.0], [-1.0, 1.0]]),
        base_lin_vel=rng.normal(size=(n, 3)),
        base_ang_vel=rng.normal(size=(n, 3)),
        world_z_in_base=np.array([[0.0, 0.0, 1.0], [0.6, 0.0, 0.8], [0.0, -math.sin(1.2), math.cos(1.2)]]),
        knee_pos=rng.normal(size=(n, 4)),
        stance=np.array([0.5, 0.5, -0.5, -0.5]),
        joint_vel=rng.normal(size=(n, 8)),
        actuator_force=rng.normal(size=(n, 8)),
        floor_contact=contact,
        body_columns=lambda bodies: np.array([NON_WHEEL_BODIES.index(b) for b in bodies]),
        action=rng.uniform(-1, 1, (n, 8)).astype(np.float32),
        last_action=rng.uniform(-1, 1, (n, 8)).astype(np.float32),
        terminated=np.array([False, True, False]),
        model_params=np.arange(n * 13, dtype=float).reshape(n, 13),
    )


def test_tracking_terms_are_gaussian_kernels_of_the_error(state):
    s = state
    np.testing.assert_allclose(rew.track_lin_vel_x_exp(s, std=0.25),
                               np.exp(-((s.commands[:, 0] - s.base_lin_vel[:, 0]) ** 2) / 0.25**2), rtol=1e-15)  # fmt: skip
    np.testing.assert_allclose(rew.track_ang_vel_z_exp(s, std=0.5),
                               np.exp(-((s.commands[:, 1] - s.base_ang_vel[:, 2]) ** 2) / 0.5**2), rtol=1e-15)  # fmt: skip
    s.base_lin_vel[0, 0] = s.commands[0, 0]
    assert rew.track_lin_vel_x_exp(s, std=0.25)[0] == 1.0  # exact tracking scores 1


def test_penalty_terms(state):
    s = state
    np.testing.assert_array_equal(rew.lin_vel_z_l2(s), s.base_lin_vel[:, 2] ** 2)
    np.testing.assert_allclose(rew.ang_vel_xy_l2(s), s.base_ang_vel[:, 0] ** 2 + s.base_ang_vel[:, 1] ** 2, rtol=1e-15)
    np.testing.assert_allclose(rew.flat_orientation_l2(s), [0.0, 0.36, math.sin(1.2) ** 2], rtol=1e-12)
    np.testing.assert_allclose(mdp.joint_torques_l2(s), (s.actuator_force**2).sum(axis=1), rtol=1e-14)
    diff = s.action.astype(np.float64) - s.last_action.astype(np.float64)
    np.testing.assert_allclose(mdp.action_rate_l2(s), (diff**2).sum(axis=1), rtol=1e-14)
    np.testing.assert_array_equal(rew.undesired_contacts(s, bodies=NON_WHEEL_BODIES), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(rew.undesired_contacts(s, bodies=NON_WHEEL_BODIES[:1]), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(mdp.is_terminated(s), [0.0, 1.0, 0.0])


def test_terminations(state):
    s = state
    np.testing.assert_array_equal(term.illegal_contact(s, bodies=NON_WHEEL_BODIES), [False, True, True])
    np.testing.assert_array_equal(term.illegal_contact(s, bodies=NON_WHEEL_BODIES[1:-1]), [False, False, False])
    # env 1 tilts acos(0.8) = 0.64 rad, env 2 1.2 rad
    np.testing.assert_array_equal(term.bad_orientation(s, limit_angle=1.0), [False, False, True])
    np.testing.assert_array_equal(term.bad_orientation(s, limit_angle=0.5), [False, True, True])


def test_observation_terms(state):
    s = state
    np.testing.assert_array_equal(obs.projected_gravity(s)[0], [0.0, 0.0, -1.0])
    np.testing.assert_array_equal(obs.joint_pos_rel(s), s.knee_pos - s.stance)
    assert obs.joint_pos_rel(s).shape == (3, len(KNEE_JOINTS))
    for f in (obs.base_ang_vel, obs.velocity_commands, obs.joint_vel_rel, mdp.last_action, obs.base_lin_vel):
        assert f(s).shape[0] == 3
    np.testing.assert_array_equal(obs.friction(s)[:, 0], s.model_params[:, 0])
    np.testing.assert_array_equal(obs.base_mass_add(s)[:, 0], s.model_params[:, 1])
    np.testing.assert_array_equal(obs.base_com_offset(s), s.model_params[:, 2:5])
    np.testing.assert_array_equal(obs.link_mass_scale(s), s.model_params[:, 5:13])


def test_every_table_entry_names_a_function_of_this_folder():
    for section, table in (("rewards", REWARDS), ("observations", OBSERVATIONS), ("terminations", TERMINATIONS)):
        for name, entry in table.items():
            func = resolve(entry.func, f"{section}.{name}")
            # its own folder's, or a generic term's (dexwheel.tasks.mdp)
            assert func.__module__.startswith(("dexwheel.tasks.velocity.", "dexwheel.tasks.mdp")) and func.__doc__, name
