"""Every selection of the MuJoCo wheel-leg env on Isaac Lab: composer layers (wheels only, the safety stop)
through dexwheel.control's own composer on torch, the privileged "critic" group, and the model randomisation
with the domain_rand ranges, whose draws the critic reads."""

import numpy as np
import pytest
import torch

from dexwheel.control import JointCommandComposer, JointCommandResolver
from dexwheel.isaaclab.episodes import open_task
from dexwheel.robots import get_robot
from dexwheel.robots.wheel_leg import BASE_BODY, KNEE_JOINTS, LINKS, ROBOT_JOINT_ORDER, WHEEL_JOINTS
from dexwheel.tasks.velocity.action_path import WheelLegActionPath
from dexwheel.tasks.velocity.config import make_cfg

TASK = "Dexwheel-Velocity-Flat-Solenopsis-v0"
NUM_ENVS = 4
#: wheels only (the stance layer holds the knees), a safety stop switched off, privileged observations, and
#: every domain-randomisation range at its default
OVERRIDES = {"layers": ("policy", "stance", "override"), "override_active": False, "privileged_obs": True,
             "domain_randomization": True, "domain_rand": {"push_interval_s": None}}  # fmt: skip


@pytest.fixture(scope="module")
def env(isaac_device):
    env = open_task(TASK, NUM_ENVS, isaac_device, 0, OVERRIDES)
    env.reset(seed=0)
    yield env
    env.close()


def _term(env):
    return env.unwrapped.action_manager.get_term("joints")


def _run(env, action, steps):
    terminated = torch.zeros(NUM_ENVS, dtype=torch.bool)
    for _ in range(steps):
        obs, _, term, _, _ = env.step(action)
        terminated |= term.cpu()
    return obs, terminated


def test_the_action_path_is_dexwheel_controls_composer_on_torch_equal_to_numpys(env):
    term = _term(env)
    assert isinstance(term.path.composer, JointCommandComposer) and isinstance(term.path.resolver, JointCommandResolver)
    assert isinstance(term.path.composer.frame.block, torch.Tensor)
    assert term.path.policy_joints == WHEEL_JOINTS and term.action_dim == len(WHEEL_JOINTS)
    owners = term.path.composer.owners
    assert {owners[f"env0/{j}"] for j in KNEE_JOINTS} == {"stance"} and owners["env0/fl_wheel_joint"] == "policy"
    # the same config's path on numpy (the MuJoCo task's) maps the same actions to the same frame, bit for bit
    mj = WheelLegActionPath(make_cfg(robot="solenopsis", **OVERRIDES), NUM_ENVS)
    actions = torch.linspace(-1.3, 1.3, NUM_ENVS * term.action_dim).reshape(NUM_ENVS, -1)
    term.process_actions(actions)
    from dexwheel.tasks.velocity.kernels import map_actions

    a = actions.cpu().numpy().astype(np.float32)
    map_actions(a, True, mj.act_scale, mj.act_offset, np.zeros_like(a), mj.policy_block)
    mj.compose()
    assert np.array_equal(term.path.robot_block.cpu().numpy(), mj.robot_block)
    for flag in (True, False):
        term.set_override(flag)
        mj.set_override(flag)
        mj.compose()
        assert np.array_equal(term.path.robot_block.cpu().numpy(), mj.robot_block)


def test_wheels_only_drives_with_the_knees_held_and_the_safety_stop_stops_it(env):
    u, term = env.unwrapped, _term(env)
    env.reset(seed=1)
    robot = u.scene["robot"]
    knees = [robot.joint_names.index(j) for j in KNEE_JOINTS]
    forward = torch.full((NUM_ENVS, len(WHEEL_JOINTS)), -5.0 / make_cfg().actions.wheel_velocity_scale)
    x0 = robot.data.root_link_pos_w.torch[:, 0].clone()
    _, terminated = _run(env, forward, 50)  # 1 s at -5 rad/s
    assert not terminated.any()
    assert torch.all(robot.data.root_link_pos_w.torch[:, 0] - x0 > 0.3)
    stance = torch.tensor(make_cfg().stance_pose)
    assert torch.all((robot.data.joint_pos.torch[:, knees] - stance).abs() < 0.15)  # held near the stance
    term.set_override(True)  # the stop: wheels to zero velocity (4x damping), knees stiff at the stance
    try:
        _run(env, forward, 50)  # the policy still asks to drive
        v = robot.data.root_link_lin_vel_b.torch[:, 0]
        assert torch.all(v.abs() < 0.05), v
        c = make_cfg().composer
        kd = robot.data.joint_damping.torch[:, [robot.joint_names.index(j) for j in WHEEL_JOINTS]]
        scale = term.kd_scale[:, [ROBOT_JOINT_ORDER.index(j) for j in WHEEL_JOINTS]]
        assert torch.allclose(kd, c.override_wheel_kd * scale)  # the override's gains times this episode's draw
    finally:
        term.set_override(False)


def test_the_critic_group_is_every_column_as_on_mujoco(env):
    from dexwheel.isaaclab.episodes import mirror_maps

    u = env.unwrapped
    obs, _ = env.reset(seed=2)
    om = u.observation_manager
    cfg = make_cfg(robot="solenopsis", **OVERRIDES)
    table = [k for g in ("policy", "critic") for k, t in cfg.observations.items() if t.group == g]
    assert om.active_terms["critic"] == table
    policy_dim = om.group_obs_dim["policy"][0]
    assert om.group_obs_dim["critic"] == (policy_dim + 3 + 1 + 1 + 3 + len(LINKS),)
    assert torch.equal(obs["critic"][:, :policy_dim], obs["policy"])
    lin = u.scene["robot"].data.root_link_lin_vel_b.torch
    assert torch.allclose(obs["critic"][:, policy_dim : policy_dim + 3], lin, atol=1e-6)
    assert torch.equal(obs["critic"][:, policy_dim + 3 :], u._dexwheel_model_params)  # the draws, as recorded
    (index, _), (actions, _) = mirror_maps(env)
    assert len(index) == om.group_obs_dim["critic"][0] and len(actions) == len(WHEEL_JOINTS)


def test_the_model_randomisation_draws_within_the_ranges_per_env_and_the_robot_stands(env):
    u, term = env.unwrapped, _term(env)
    robot = u.scene["robot"]
    d = make_cfg(**OVERRIDES).domain_rand
    desc = get_robot("solenopsis")
    base = robot.body_names.index(BASE_BODY)
    links = [robot.body_names.index(b) for b in LINKS]
    draws, masses, kp = [], [], []
    for seed in range(6):
        env.reset(seed=10 + seed)
        draws.append(u._dexwheel_model_params.clone())
        masses.append(robot.data.body_mass.torch.clone())
        kp.append(term.kp_scale.clone())
    p, m, kp = torch.cat(draws), torch.cat(masses), torch.cat(kp)  # (24, ...): 6 resets of 4 envs
    nominal = float(desc.contact.friction[0])
    friction, add, com, links_scale = p[:, 0] + nominal, p[:, 1], p[:, 2:5], p[:, 5:] + 1.0
    eps = 1e-5
    assert torch.all((friction >= d.friction[0] - eps) & (friction <= d.friction[1] + eps))
    assert torch.all((add >= d.base_mass_add[0] - eps) & (add <= d.base_mass_add[1] + eps))
    assert torch.all(com.abs() <= d.base_com_offset + eps)
    assert torch.all((links_scale >= d.link_mass_scale[0] - eps) & (links_scale <= d.link_mass_scale[1] + eps))
    assert torch.all((kp >= d.kp_scale[0] - eps) & (kp <= d.kp_scale[1] + eps))
    for x in (friction, add, com[:, 0], links_scale[:, 0], kp[:, 0]):
        assert len(torch.unique(x)) == len(x)  # every env and reset draws its own
        assert x.std() > 0.1 * (x.max() - x.min())  # spread over the range, not piled up
    # what the sim holds is what was drawn (the critic reads the record): masses from nominal, friction per shape
    nominal_mass = m[:, base] - add
    assert torch.allclose(nominal_mass, nominal_mass[0].expand_as(nominal_mass), atol=1e-4)
    assert torch.allclose(m[:, links] / links_scale, (m[:, links] / links_scale)[0].expand(len(m), -1), rtol=1e-5)
    import warp as wp

    mu = robot._root_view.get_attribute("shape_material_mu", u.sim.physics_manager.get_model())[:, 0]
    assert torch.allclose(wp.to_torch(mu), (u._dexwheel_model_params[:, :1] + nominal).expand(NUM_ENVS, -1))
    # the randomised robots stand, wheels only, for 1 s
    env.reset(seed=20)
    _, terminated = _run(env, torch.zeros(NUM_ENVS, len(WHEEL_JOINTS)), 50)
    assert not terminated.any()
