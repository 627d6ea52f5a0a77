"""Solenopsis-v0 / M20Legacy-v0: the single env against the issue's acceptance list."""

import gymnasium
import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from dexwheel.control import ActionError, JointCommandError
from dexwheel.envs import register_envs
from dexwheel.envs.wheel_leg import WheelLegEnv
from dexwheel.robots.wheel_leg import (
    KNEE_EFFORT,
    KNEE_JOINTS,
    M20_LEGACY,
    M20_LEGACY_TOTAL_MASS,
    POLICY_JOINT_ORDER,
    ROBOT_JOINT_ORDER,
    SOLENOPSIS,
    SOLENOPSIS_TOTAL_MASS,
    WHEEL_EFFORT,
)
from dexwheel.tasks.velocity.config import REWARD_TERMS, WheelLegEnvCfg, make_cfg

register_envs()  # explicit: a stale editable install can make ``import dexwheel`` a namespace package
IDS = {"solenopsis": "Solenopsis-v0", "m20_legacy": "M20Legacy-v0"}
ROBOTS = list(IDS)


def make(robot: str = "solenopsis", **kwargs) -> WheelLegEnv:
    return gymnasium.make(IDS[robot], **kwargs).unwrapped


def rollout(env, actions, seed=0):
    """(obs, reward, terminated, truncated, info) per step, after a seeded reset."""
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for a in actions:
        obs, r, te, tr, info = env.step(a)
        out.append((obs, r, te, tr, info))
        if te or tr:
            obs, _ = env.reset()
            out.append(obs)
    return out


def base_velocity(env) -> tuple[float, float]:
    """Forward speed (base-frame x) and yaw rate from the post-step state, independent of the sensors."""
    d = env.data
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, d.qpos[3:7])
    v = rot.reshape(3, 3).T @ d.qvel[0:3]
    return float(v[0]), float(d.qvel[5])  # free-joint angular velocity is already in the body frame


# -- Gymnasium conformance and determinism ---------------------------------------------------
@pytest.mark.filterwarnings("ignore:.*Box observation space:UserWarning")
@pytest.mark.filterwarnings("ignore:.*different from the unwrapped:UserWarning")
@pytest.mark.parametrize("robot", ROBOTS)
def test_check_env_passes(robot):
    env = gymnasium.make(IDS[robot])
    check_env(env.unwrapped, skip_render_check=True)
    check_env(env, skip_render_check=True)
    assert env.observation_space.dtype == np.float32 and env.action_space.shape == (8,)


@pytest.mark.parametrize("domain_randomization", [False, True])
def test_same_seed_and_actions_give_bit_identical_trajectories(domain_randomization):
    kw = dict(domain_randomization=domain_randomization, max_tilt=0.4, episode_length_s=1.0)
    actions = np.random.default_rng(3).uniform(-1, 1, (120, 8)).astype(np.float32)
    a, b = rollout(make(**kw), actions, seed=7), rollout(make(**kw), actions, seed=7)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if isinstance(x, tuple):
            assert np.array_equal(x[0], y[0]) and x[1:4] == y[1:4] and x[4] == y[4]
        else:
            assert np.array_equal(x, y)
    c = rollout(make(**kw), actions, seed=8)
    assert not np.array_equal(a[0], c[0])


# -- standing, driving, turning ----------------------------------------------------------------
@pytest.mark.parametrize("robot", ROBOTS)
def test_zero_action_stands_for_five_seconds(robot):
    env = make(robot)
    env.reset(seed=1)
    steps = round(5.0 / env.dt)
    heights = []
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(np.zeros(8, np.float32))
        assert not terminated and not truncated
        heights.append(env.data.qpos[2])
    after_1s = np.array(heights[round(1.0 / env.dt) :])
    assert np.ptp(after_1s) < 0.01
    assert after_1s.min() > 0.2


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("w", [8.0, -8.0])
def test_equal_wheel_velocities_roll_at_w_times_radius_backward_for_positive_w(robot, w):
    """Axis (0, -1, 0): a positive wheel velocity rolls the robot backward (-x)."""
    env = make(robot, layers=("policy", "stance"))  # wheels only: the stance layer holds the knees
    assert env.policy_joints == tuple(j for j in POLICY_JOINT_ORDER if "wheel" in j)
    env.reset(seed=0)
    scale = env.cfg.actions.wheel_velocity_scale
    for _ in range(round(2.0 / env.dt)):
        _, _, terminated, _, info = env.step(np.full(4, w / scale, np.float32))
        assert not terminated
    vx, wz = base_velocity(env)
    radius = {"solenopsis": SOLENOPSIS, "m20_legacy": M20_LEGACY}[robot].wheel_radius
    assert np.sign(vx) == -np.sign(w)
    assert abs(abs(vx) - abs(w) * radius) < 0.1 * abs(w) * radius
    assert abs(wz) < 0.05
    assert info["lin_vel_x"] == pytest.approx(vx, abs=0.02)  # the sensor reading agrees


@pytest.mark.parametrize("robot", ROBOTS)
def test_opposite_wheel_velocities_turn_the_way_the_convention_predicts(robot):
    """Right wheels forward (negative), left wheels backward (positive): counter-clockwise, +yaw."""
    env = make(robot, layers=("policy", "stance"))
    for side in (1.0, -1.0):
        env.reset(seed=0)
        action = np.array([side, -side, side, -side], np.float32)  # fl, fr, hl, hr
        rates = []
        for _ in range(round(2.0 / env.dt)):
            _, _, terminated, _, _ = env.step(action)
            assert not terminated
            rates.append(base_velocity(env)[1])
        assert side * np.mean(rates[-50:]) > 0.3


# -- composer layers -----------------------------------------------------------------------------
def test_override_layer_wins_over_the_policy():
    env = make(layers=("policy", "override"))
    assert set(env.task.composer.owners.values()) == {"override"}
    env.reset(seed=0)
    push = np.ones(8, np.float32)  # knees +0.25 rad, wheels full speed
    for _ in range(50):
        env.step(push)
    frame = env.task.composer.frame
    knees = [POLICY_JOINT_ORDER.index(j) for j in KNEE_JOINTS]
    wheels = [i for i in range(8) if i not in knees]
    assert np.allclose(frame.vel[wheels], 0.0) and np.allclose(frame.kd[wheels], env.cfg.composer.override_wheel_kd)
    assert np.allclose(frame.qpos[knees], env.cfg.stance_pose)
    assert np.allclose(frame.kp[knees], env.cfg.composer.override_knee_kp)
    assert np.abs(env.data.qvel[6:][1::2]).max() < 0.5  # robot order: wheels at odd places
    assert abs(base_velocity(env)[0]) < 0.05
    env.set_override(False)  # released: the policy drives again
    for _ in range(50):
        env.step(push)
    assert np.abs(env.data.qvel[6:][1::2]).min() > 10.0


def test_override_can_start_released():
    env = make(layers=("policy", "override"), override_active=False)
    assert set(env.task.composer.owners.values()) == {"policy"}


def test_a_layer_set_leaving_a_joint_uncovered_fails_naming_the_joint():
    with pytest.raises(JointCommandError, match="fl_knee_joint"):
        make(layers=("policy",), policy_joints="wheels")
    with pytest.raises(JointCommandError, match="fl_knee_joint"):  # two ordinary owners
        make(layers=("policy", "stance"), policy_joints="all")
    with pytest.raises(ValueError, match="available"):
        make(layers=("policy", "teleop"))


def test_resolver_maps_task_order_to_robot_order():
    env = make()
    env.reset(seed=0)
    action = np.linspace(-0.8, 0.8, 8).astype(np.float32)
    env.step(action)
    task_frame = env.task.composer.frame
    robot_frame = env.task.resolver.bind(task_frame.layout)
    for i, name in enumerate(ROBOT_JOINT_ORDER):
        j = POLICY_JOINT_ORDER.index(name)
        assert robot_frame.block[:, i].tolist() == task_frame.block[:, j].tolist()
    knee = POLICY_JOINT_ORDER.index("hl_knee_joint")
    assert task_frame.qpos[knee] == pytest.approx(env.cfg.stance_pose[2] + 0.25 * action[knee], abs=1e-6)
    wheel = POLICY_JOINT_ORDER.index("fr_wheel_joint")
    assert task_frame.vel[wheel] == pytest.approx(env.cfg.actions.wheel_velocity_scale * action[wheel], rel=1e-6)


# -- efforts ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("gains", [{}, {"knee_kp": 2000.0, "wheel_kd": 20.0}])
def test_efforts_never_exceed_the_spec_limits(gains):
    env = make(**gains)
    limit = np.array([KNEE_EFFORT if "knee" in j else WHEEL_EFFORT for j in ROBOT_JOINT_ORDER])
    peak = np.zeros(len(ROBOT_JOINT_ORDER))

    def record(_env, _model, data):
        np.maximum(peak, np.abs(data.actuator_force), out=peak)

    env.task.physics.on_substep = record
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    action = np.ones(8, np.float32)
    for k in range(150):  # bang-bang: full reversals every 5 steps
        action = np.sign(rng.uniform(-1, 1, 8)).astype(np.float32) if k % 10 == 0 else -action
        _, _, terminated, _, _ = env.step(action)
        if terminated:
            env.reset()
    assert np.all(peak <= limit + 1e-9)
    if gains:  # stiff gains saturate: the clip is what holds the limit
        assert np.allclose(peak, limit)


# -- the two robots ---------------------------------------------------------------------------------
def test_the_two_robots_differ_the_way_the_spec_says_and_share_one_layout():
    sol, m20 = make("solenopsis"), make("m20_legacy")
    assert sum(sol.model.body_mass) == pytest.approx(SOLENOPSIS_TOTAL_MASS, abs=1e-9)
    assert sum(m20.model.body_mass) == pytest.approx(M20_LEGACY_TOTAL_MASS, abs=1e-9)
    assert SOLENOPSIS.link_length == pytest.approx(0.300) and M20_LEGACY.link_length == pytest.approx(
        0.237065, abs=1e-6
    )
    assert SOLENOPSIS.stance_height_q0 == pytest.approx(0.3288, abs=1e-4)
    assert M20_LEGACY.stance_height_q0 == pytest.approx(0.306, abs=1e-3)
    assert sol.task.settled_height == pytest.approx(0.276, abs=0.003)  # spec: A stance settles near 0.276 m
    assert np.allclose(np.abs(sol.task.settled_knees), 0.6, atol=0.01)
    assert abs(sol.task.settled_height - m20.task.settled_height) > 0.02
    assert sol.observation_space == m20.observation_space and sol.action_space == m20.action_space
    assert sol.obs_slices == m20.obs_slices

    weights = np.random.default_rng(0).normal(0, 0.1, (8, sol.observation_space.shape[0]))

    def policy(obs):
        return np.tanh(weights @ obs).astype(np.float32)

    for env in (sol, m20):  # one policy, evaluated on both robots
        obs, _ = env.reset(seed=0)
        for _ in range(50):
            obs, _, terminated, _, _ = env.step(policy(obs))
            assert not terminated


# -- observation, reward, termination ------------------------------------------------------------
def test_observation_slices_and_values_at_rest():
    env = make()
    obs, _ = env.reset(seed=0)
    s = env.obs_slices
    assert [name for name in s] == ["base_ang_vel", "projected_gravity", "velocity_commands", "joint_pos_rel",
                                    "joint_vel_rel", "last_action"]  # fmt: skip
    assert max(sl.stop for sl in s.values()) == obs.shape[0] == 28
    obs = env.set_command(0.4, -0.3)
    for _ in range(30):
        obs, *_ = env.step(np.zeros(8, np.float32))
    assert np.allclose(obs[s["projected_gravity"]], (0, 0, -1), atol=0.02)
    assert np.allclose(obs[s["velocity_commands"]], (0.4, -0.3))
    assert np.allclose(obs[s["joint_pos_rel"]], env.task.settled_knees - env.cfg.stance_pose, atol=0.01)
    assert np.allclose(obs[s["last_action"]], 0.0)
    a = np.full(8, 0.5, np.float32)
    obs, *_ = env.step(a)
    assert np.array_equal(obs[s["last_action"]], a)


def test_privileged_observation_appends_velocity_friction_and_masses():
    env = make(privileged_obs=True, domain_randomization=True)
    obs, _ = env.reset(seed=0)
    s = env.obs_slices
    assert obs.shape == (28 + 16,) and s["base_lin_vel"].start == 28
    p = env.task.episode_params[0]
    assert obs[s["friction"]][0] == pytest.approx(p.friction - 1.0, abs=1e-6)
    assert obs[s["base_mass_add"]][0] == pytest.approx(p.base_mass_add, abs=1e-5)
    env.set_command(0.0, 0.0)
    for _ in range(20):
        obs, _, _, _, info = env.step(np.full(8, -0.3, np.float32) * np.array([0, 0, 0, 0, 1, 1, 1, 1]))
    assert obs[s["base_lin_vel"]][0] == pytest.approx(info["lin_vel_x"], abs=1e-6)


def test_reward_is_the_sum_of_named_terms_in_info():
    env = make()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        _, reward, _, _, info = env.step(rng.uniform(-1, 1, 8).astype(np.float32))
        terms = [info[f"reward_{name}"] for name in REWARD_TERMS]
        assert sum(terms) == reward
    assert set(REWARD_TERMS) == {
        "track_lin_vel_x_exp", "track_ang_vel_z_exp", "lin_vel_z_l2", "ang_vel_xy_l2", "flat_orientation_l2",
        "joint_torques_l2", "action_rate_l2", "undesired_contacts", "termination_penalty",
    }  # fmt: skip
    for key in (
        "lin_vel_x",
        "ang_vel_z",
        "command_lin_vel_x",
        "command_ang_vel_z",
        "lin_vel_x_error",
        "terminated_contact",
    ):
        assert key in info


def test_reward_terms_match_an_independent_computation_from_the_mujoco_state():
    """Every term recomputed with numpy from MjData (not the sensors the kernel reads).

    MuJoCo's sensors (and ``actuator_force``) come from the forward pass of the control step's last
    ``mj_step``, i.e. the state before its integration: the one the previous substep left.
    """
    env = make()
    states = []
    env.task.physics.on_substep = lambda _i, _m, d: states.append((d.qpos.copy(), d.qvel.copy()))
    env.reset(seed=4)
    r, dt = env.cfg.rewards, env.dt
    w = {name: term.weight for name, term in r.items()}
    lin_std, ang_std = r["track_lin_vel_x_exp"].params["std"], r["track_ang_vel_z_exp"].params["std"]
    rng = np.random.default_rng(2)
    prev = np.zeros(8)
    for _ in range(30):
        action = rng.uniform(-1, 1, 8).astype(np.float32)
        command = env.task.commands[0].copy()
        _, reward, _, _, info = env.step(action)
        qpos, qvel = states[-2]
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, qpos[3:7])
        rot = rot.reshape(3, 3)
        lin, ang = rot.T @ qvel[0:3], qvel[3:6]  # base frame (the free joint's angular velocity already is)
        gravity = rot.T @ np.array([0.0, 0.0, -1.0])
        expected = {
            "track_lin_vel_x_exp": w["track_lin_vel_x_exp"] * np.exp(-((command[0] - lin[0]) ** 2) / lin_std**2),
            "track_ang_vel_z_exp": w["track_ang_vel_z_exp"] * np.exp(-((command[1] - ang[2]) ** 2) / ang_std**2),
            "lin_vel_z_l2": w["lin_vel_z_l2"] * lin[2] ** 2,
            "ang_vel_xy_l2": w["ang_vel_xy_l2"] * (ang[0] ** 2 + ang[1] ** 2),
            "flat_orientation_l2": w["flat_orientation_l2"] * (gravity[0] ** 2 + gravity[1] ** 2),
            "joint_torques_l2": w["joint_torques_l2"] * np.sum(env.data.actuator_force**2),
            "action_rate_l2": w["action_rate_l2"] * np.sum((action.astype(np.float64) - prev) ** 2),
            "undesired_contacts": 0.0,
            "termination_penalty": 0.0,
        }
        for name, value in expected.items():
            assert info[f"reward_{name}"] == pytest.approx(value * dt, rel=1e-6, abs=1e-12), name
        assert reward == pytest.approx(sum(expected.values()) * dt, rel=1e-9, abs=1e-12)
        assert info["lin_vel_x_error"] == pytest.approx(abs(command[0] - lin[0]), abs=1e-9)
        prev = action.astype(np.float64)


def test_tracking_reward_peaks_at_the_command():
    env = make(reward_weights={"action_rate_l2": 0.0})
    env.reset(seed=0)
    env.set_command(0.0, 0.0)
    _, _, _, _, info = env.step(np.zeros(8, np.float32))
    w = {name: term.weight for name, term in env.cfg.rewards.items()}
    assert info["reward_track_lin_vel_x_exp"] == pytest.approx(w["track_lin_vel_x_exp"] * env.dt, rel=1e-3)
    assert info["reward_track_ang_vel_z_exp"] == pytest.approx(w["track_ang_vel_z_exp"] * env.dt, rel=1e-3)
    env.set_command(1.0, 0.0)
    _, _, _, _, info = env.step(np.zeros(8, np.float32))
    assert info["reward_track_lin_vel_x_exp"] < 0.3 * w["track_lin_vel_x_exp"] * env.dt


def _forward_commands(env, steps: int, seed: int = 0) -> list[float]:
    env.reset(seed=seed)
    out = []
    for _ in range(steps):
        _, _, _, _, info = env.step(np.zeros(8, np.float32))
        out.append(info["command_lin_vel_x"])
    return out


def test_rel_reversal_flips_the_forward_command_at_every_resample():
    # 0.1 s between resamples: 5 control steps; speeds from (0.8, 1.0) and reversal 1 alternate the sign
    stress = make(lin_vel_x_range=(0.8, 1.0), rel_standing_envs=0.0, rel_reversal=1.0, resampling_time_s=(0.1, 0.1))
    x = np.array(_forward_commands(stress, 30))
    per_resample = x[::5]
    assert np.all((np.abs(per_resample) >= 0.8) & (np.abs(per_resample) <= 1.0))
    assert np.all(np.sign(per_resample[1:]) == -np.sign(per_resample[:-1]))
    assert per_resample[0] > 0  # the reset's draw is not reversed
    plain = make(lin_vel_x_range=(0.8, 1.0), rel_standing_envs=0.0, rel_reversal=0.0, resampling_time_s=(0.1, 0.1))
    assert min(_forward_commands(plain, 30)) >= 0.8  # 0: every draw from the range as it is
    with pytest.raises(ValueError, match=r"commands.rel_reversal: must be in \[0, 1\], got 1.5"):
        make(rel_reversal=1.5)


def test_tilt_and_body_contact_terminate():
    env = make()
    env.reset(seed=0)
    quat = np.zeros(4)
    mujoco.mju_axisAngle2Quat(quat, [1.0, 0.0, 0.0], 1.3)  # rolled past the 1 rad limit
    env.data.qpos[3:7] = quat
    _, _, terminated, _, info = env.step(np.zeros(8, np.float32))
    assert terminated and info["terminated_tilt"]
    penalty = env.cfg.rewards["termination_penalty"].weight * env.dt
    assert penalty == pytest.approx(-4.0) and info["reward_termination_penalty"] == penalty  # -200 x 0.02 s
    env.reset(seed=0)
    env.data.qpos[2] = 0.05  # base box in the floor
    _, reward, terminated, _, info = env.step(np.zeros(8, np.float32))
    assert terminated and info["terminated_contact"] and info["reward_undesired_contacts"] < 0
    assert info["reward_termination_penalty"] == penalty
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(np.zeros(8, np.float32))
    assert not terminated and info["reward_termination_penalty"] == 0.0


def test_episode_truncates_at_its_length():
    env = make(episode_length_s=0.2)
    env.reset(seed=0)
    flags = [env.step(np.zeros(8, np.float32))[3] for _ in range(10)]
    assert flags == [False] * 9 + [True]


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (np.zeros(7, np.float32), r"shape \(8,\).*got \(7,\)"),
        (np.zeros((2, 4), np.float32), r"shape \(8,\).*got \(2, 4\)"),
        (np.array([0, 0, 0, 0, 0, np.nan, 0, 0]), r"action\[5\] \(fr_wheel_joint\) = nan is not finite.*\[-1, 1\]"),
        (np.array([np.inf, 0, 0, 0, 0, 0, 0, 0]), r"action\[0\] \(fl_knee_joint\) = inf"),
        (np.array(["a"] * 8), "numeric"),
    ],
)
def test_bad_actions_raise_naming_the_field_and_leave_the_state_unchanged(action, match):
    env = make()
    env.reset(seed=0)
    env.step(np.full(8, 0.3, np.float32))
    state = (env.data.qpos.copy(), env.data.qvel.copy(), env.data.ctrl.copy(), env.task.action.copy(),
             env.task.last_action.copy(), env.task.obs.copy(), env.task.t)  # fmt: skip
    with pytest.raises(ActionError, match=match):
        env.step(action)
    after = (
        env.data.qpos,
        env.data.qvel,
        env.data.ctrl,
        env.task.action,
        env.task.last_action,
        env.task.obs,
        env.task.t,
    )
    assert all(np.array_equal(x, y) for x, y in zip(state, after, strict=True))
    policy = env.task.buffers["policy"].block.reshape(5, -1)
    assert np.allclose(policy[0, :4], np.array(env.cfg.stance_pose) + 0.25 * 0.3)  # the last good action holds


# -- configuration surface ----------------------------------------------------------------------------
def test_every_tunable_is_a_plain_kwarg():
    env = make(decimation=2, action_scale_knee=0.3, wheel_velocity_scale=15.0, layers=["policy", "override"],
               lin_vel_x_range=[-0.5, 0.5], rewards={"lin_vel_z_l2": -1.0}, domain_rand={"friction": [0.5, 0.9]},
               commands={"rel_standing_envs": 0.0}, terminations={"max_tilt_rad": 0.7}, reset_noise_scale=0.0)  # fmt: skip
    c = env.cfg
    assert env.dt == pytest.approx(0.01) and c.actions.knee_scale == 0.3 and c.actions.wheel_velocity_scale == 15.0
    assert c.composer.layers == ("policy", "override") and c.commands.lin_vel_x == (-0.5, 0.5)
    assert c.rewards["lin_vel_z_l2"].weight == -1.0 and c.domain_rand.enabled and c.domain_rand.friction == (0.5, 0.9)
    assert c.terminations["tilt"].params["limit_angle"] == 0.7
    assert make_cfg(WheelLegEnvCfg(), frame_skip=8).decimation == 8
    with pytest.raises(ValueError, match="valid"):
        make(wheel_speed=3.0)
    with pytest.raises(
        ValueError, match=r"rewards\.tracking: no such term to reweight; terms: \['track_lin_vel_x_exp'"
    ):
        make(rewards={"tracking": 1.0})
    with pytest.raises(ValueError, match="robot"):
        WheelLegEnv(robot="g20_left")


def test_domain_randomization_is_off_by_default_and_changes_the_model_when_on():
    env = make()
    nominal = env.model.body_mass.copy()
    env.reset(seed=0)
    assert np.array_equal(env.model.body_mass, nominal)
    env = make(domain_randomization=True)
    masses = []
    for seed in range(3):
        env.reset(seed=seed)
        masses.append(env.model.body_mass.copy())
        p = env.task.episode_params[0]
        assert 0.35 <= p.friction <= 1.5 and -1.0 <= p.base_mass_add <= 3.0
        assert np.all(np.abs(p.base_com_offset) <= 0.03) and np.all((p.kp_scale >= 0.85) & (p.kp_scale <= 1.15))
        assert env.model.geom_friction[env.model.geom("floor").id, 0] == pytest.approx(p.friction)
    assert not np.array_equal(masses[0], masses[1])
    env.step(np.zeros(8, np.float32))
    assert not np.allclose(-env.model.actuator_biasprm[[0, 2, 4, 6], 1], 80.0)  # randomised knee kp


def test_pushes_change_the_base_velocity():
    env = make(domain_rand={"enabled": True, "push_interval_s": (0.1, 0.1), "push_velocity": 0.5})
    env.reset(seed=0)
    env.task.set_command(0.0, 0.0)
    env.step(np.zeros(8, np.float32))
    before = env.data.qvel[:2].copy()
    for _ in range(5):
        env.step(np.zeros(8, np.float32))
    assert env.task.t >= env.task.episode_start[0] + 5
    assert not np.allclose(env.data.qvel[:2], before, atol=1e-3)


def test_render_rgb_array_follows_the_base():
    env = make(render_mode="rgb_array", width=96, height=64)
    env.reset(seed=0)
    try:
        frame = env.render()
    except Exception as exc:  # no offscreen GL on this machine
        pytest.skip(f"offscreen rendering unavailable: {exc}")
    assert frame.shape == (64, 96, 3) and frame.dtype == np.uint8 and frame.std() > 0
    env.close()
