"""The Isaac Lab wheel-leg task (gym id) is the MuJoCo task's configuration, and it stands and drives."""

import gymnasium as gym
import pytest
import torch

import dexwheel.isaaclab.tasks as tasks
from dexwheel.isaaclab.episodes import open_task
from dexwheel.robots import get_robot
from dexwheel.robots.wheel_leg import KNEE_JOINTS, POLICY_JOINT_ORDER, START_DROP_M, WHEEL_JOINTS
from dexwheel.tasks.velocity.config import REWARD_TERMS, WheelLegEnvCfg
from dexwheel.tasks.velocity.settled import settled_stance

TASK = "Dexwheel-Velocity-Flat-Solenopsis-v0"
NUM_ENVS = 4


@pytest.fixture(scope="module")
def env(isaac_device):
    env = open_task(TASK, NUM_ENVS, isaac_device, 0)
    env.reset(seed=0)
    yield env
    env.close()


def _run(env, action, steps):
    terminated = torch.zeros(NUM_ENVS, dtype=torch.bool)
    for _ in range(steps):
        obs, reward, term, _, _ = env.step(action)
        terminated |= term.cpu()
    return obs, reward, terminated


def test_every_wheel_leg_robot_has_a_registered_task():
    assert all(task_id in gym.registry for task_id in tasks.TASKS)
    from dexwheel.isaaclab.tasks import VelocityFlatM20LegacyEnvCfg

    assert VelocityFlatM20LegacyEnvCfg().scene.robot.spawn.usd_path.endswith("m20_legacy.usda")


def test_terms_weights_and_sizes_come_from_the_mujoco_task_config(env):
    u, task = env.unwrapped, WheelLegEnvCfg(robot="solenopsis")
    assert tuple(u.reward_manager.active_terms) == REWARD_TERMS
    for name in REWARD_TERMS:
        assert u.reward_manager.get_term_cfg(name).weight == task.rewards[name].weight, name
    # the tracking widths come from the terms' parameters, the observation scales from their entries
    assert (
        u.reward_manager.get_term_cfg("track_lin_vel_x_exp").params["std"]
        == task.rewards["track_lin_vel_x_exp"].params["std"]
    )
    assert u.observation_manager.cfg.policy.base_ang_vel.scale == task.observations["base_ang_vel"].scale
    assert u.cfg.decimation == task.decimation and u.cfg.episode_length_s == task.episode_length_s
    assert u.physics_dt == pytest.approx(get_robot("solenopsis").timestep)
    # the MuJoCo task's policy observation: ang vel, gravity, (vx, wz), knee pos, joint vel, last action
    obs_dim = 3 + 3 + 2 + len(KNEE_JOINTS) + len(POLICY_JOINT_ORDER) + len(POLICY_JOINT_ORDER)
    assert u.observation_manager.group_obs_dim["policy"] == (obs_dim,)
    assert u.action_manager.total_action_dim == len(POLICY_JOINT_ORDER)
    robot = u.scene["robot"]
    knees, height = settled_stance(task)  # the MuJoCo task's settled stance: the start pose
    for j, q in zip(KNEE_JOINTS, knees, strict=True):
        assert robot.data.default_joint_pos.torch[0, robot.joint_names.index(j)] == pytest.approx(q)
    assert robot.cfg.init_state.pos[2] == pytest.approx(height + START_DROP_M)


def test_episodes_start_at_the_settled_stance_with_the_start_noise(env):
    from dexwheel.robots.wheel_leg import PARAMS

    u = env.unwrapped
    env.reset(seed=3)
    robot, task = u.scene["robot"], WheelLegEnvCfg(robot="solenopsis")
    knees, height = settled_stance(task)
    cols = [robot.joint_names.index(j) for j in KNEE_JOINTS]
    q = robot.data.joint_pos.torch[:, cols]
    noise = task.reset_noise_scale
    assert torch.all((q - torch.tensor(knees)).abs() <= noise + 1e-6), q  # settled, not commanded (0.5 rad)
    assert len({tuple(r) for r in q.tolist()}) == NUM_ENVS  # the noise differs per env
    # the base height follows the drawn knees: the lowest wheel 0.5 mm above the ground, as on MuJoCo
    offset = height - float(PARAMS["solenopsis"].leg_heights(torch.tensor(knees, dtype=torch.float64)).max())
    z = PARAMS["solenopsis"].leg_heights(q.double()).max(dim=1).values + offset + START_DROP_M
    assert torch.allclose(robot.data.root_link_pos_w.torch[:, 2].double(), z, atol=1e-6)


def test_it_holds_its_stance_on_its_wheels(env):
    u = env.unwrapped
    env.reset(seed=1)
    _, reward, terminated = _run(env, torch.zeros(NUM_ENVS, 8), 50)  # 1 s
    robot, sensor = u.scene["robot"], u.scene["contact_forces"]
    z = robot.data.root_link_pos_w.torch[:, 2]
    assert not terminated.any()
    assert torch.all((z - 0.276).abs() < 0.004), z  # the spec's settled A stance (MuJoCo: 0.27615 m)
    knees = robot.data.joint_pos.torch[:, [robot.joint_names.index(j) for j in KNEE_JOINTS]]
    assert torch.all((knees.abs() - 0.6).abs() < 0.02), knees
    wheels = [sensor.sensor_names.index(j.replace("_joint", "")) for j in WHEEL_JOINTS]
    load = sensor.data.net_forces_w.torch[:, wheels, 2].sum(dim=1)
    weight = get_robot("solenopsis").total_mass * 9.81
    assert torch.allclose(load, torch.full_like(load, weight), rtol=0.03), load  # the wheels carry the robot
    assert torch.all(u.reward_manager._episode_sums["undesired_contacts"] == 0)


def test_it_drives_forward(env):
    u = env.unwrapped
    robot = u.scene["robot"]
    x0 = robot.data.root_link_pos_w.torch[:, 0].clone()
    action = torch.zeros(NUM_ENVS, 8)
    action[:, len(KNEE_JOINTS) :] = -5.0 / WheelLegEnvCfg().actions.wheel_velocity_scale  # wheels at -5 rad/s
    _, _, terminated = _run(env, action, 100)  # 2 s
    dx = robot.data.root_link_pos_w.torch[:, 0] - x0
    assert not terminated.any()
    assert torch.all(dx > 0.85), dx  # MuJoCo and the cross-backend replay: 0.927 m from rest


def test_mid_episode_resamples_reverse_as_commands_rel_reversal_says(env):
    term = env.unwrapped.command_manager.get_term("base_velocity")
    assert term.cfg.rel_reversal == WheelLegEnvCfg().commands.rel_reversal
    saved = (term.cfg.rel_reversal, term.cfg.ranges.lin_vel_x, term.vel_command_b.clone(), term.command_counter.clone())
    try:
        term.cfg.rel_reversal, term.cfg.ranges.lin_vel_x = 1.0, (0.8, 1.0)
        ids = torch.arange(NUM_ENVS)
        term.vel_command_b[:, 0] = 0.9
        term.command_counter[:] = torch.tensor([0, 1, 1, 3])  # env 0: the reset's draw
        term._resample_command(ids)
        x = term.vel_command_b[:, 0]
        assert x[0] >= 0.8 and torch.all((x[1:] <= -0.8) & (x[1:] >= -1.0)), x
        term.vel_command_b[:, 0] = torch.tensor([0.0, -0.9, -0.9, -0.9])  # env 0 stood still: it never reverses
        term._resample_command(ids)
        assert torch.all(term.vel_command_b[:, 0] >= 0.8), term.vel_command_b
    finally:
        term.cfg.rel_reversal, term.cfg.ranges.lin_vel_x = saved[0], saved[1]
        term.vel_command_b[:], term.command_counter[:] = saved[2], saved[3]


def test_a_term_without_an_isaac_lab_counterpart_is_refused_by_name():
    from dexwheel.isaaclab.tasks.velocity.config import VelocityEnvCfg as VelocityFlatEnvCfg

    # a user's own term (importable: the MuJoCo config checks its function's parameters first)
    overrides = {"rewards": {"lateral_vel_l2": {"func": "user_terms:lateral_vel_l2", "weight": -0.5}}}
    with pytest.raises(
        ValueError, match=r"no counterpart of \{'rewards\.lateral_vel_l2': 'user_terms:lateral_vel_l2'\}"
    ):
        VelocityFlatEnvCfg(task_overrides=overrides)
    # reweighting a built-in term reaches Isaac Lab's term
    cfg = VelocityFlatEnvCfg(task_overrides={"rewards": {"action_rate_l2": -0.05}})
    assert cfg.rewards.action_rate_l2.weight == -0.05


def test_a_terrain_replaces_the_plane():
    from dexwheel.isaaclab.tasks.velocity.config import VelocityEnvCfg as VelocityFlatEnvCfg
    from dexwheel.terrain import TerrainCfg

    cfg = VelocityFlatEnvCfg(
        task_overrides={"terrain": True}
    )  # the rough task's own: tests/isaaclab/test_rough_task.py
    assert cfg.scene.ground is None and cfg.scene.terrain.terrain.cfg == TerrainCfg()


def test_the_events_table_drives_isaac_lab_events():
    from dexwheel.isaaclab.tasks.velocity.config import VelocityEnvCfg as VelocityFlatEnvCfg

    events = VelocityFlatEnvCfg().events  # the start pose with the reset_joints_and_base noise; no pushes
    noise = WheelLegEnvCfg().reset_noise_scale
    assert events.reset_start.params["noise"] == noise and not hasattr(events, "push")
    assert not hasattr(events, "randomize_model")  # domain randomisation is off by default, as on MuJoCo
    quiet = VelocityFlatEnvCfg(task_overrides={"events": {"reset_joints_and_base": None}}).events
    assert quiet.reset_start.params["noise"] == 0.0  # still reset to the start pose
    dr = VelocityFlatEnvCfg(task_overrides={"domain_rand": {"friction": (0.4, 1.2), "push_interval_s": (2.0, 3.0),
                                                            "push_velocity": 0.4}})  # fmt: skip
    p = dr.events.randomize_model.params
    assert p["friction"] == (0.4, 1.2) and p["base_mass_add"] == WheelLegEnvCfg().domain_rand.base_mass_add
    assert dr.scene.ground.spawn.physics_material.static_friction == 0.4  # the shared ground: the range's low end
    assert dr.events.push.mode == "interval" and dr.events.push.interval_range_s == (2.0, 3.0)
    assert dr.events.push.params["velocity_range"] == {"x": (-0.4, 0.4), "y": (-0.4, 0.4)}


def test_what_isaac_lab_cannot_do_is_refused_by_name():
    from dexwheel.isaaclab.tasks.velocity.config import VelocityEnvCfg as VelocityFlatEnvCfg

    with pytest.raises(ValueError, match=r"does not support \['scale_rewards_by_dt'\]: Isaac Lab's reward manager"):
        VelocityFlatEnvCfg(task_overrides={"scale_rewards_by_dt": False})
