"""G20Hand-v0 (issue: hard-write and PD drives, slew, collision projection, pose tracking)."""

import warnings

import gymnasium as gym
import mujoco
import numba
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dexwheel.robots.g20 as g20
from dexwheel.control import (
    ActionClipWarning,
    ActionError,
    G20SdkMapping,
    UnknownJointError,
    g20_delta_mapping,
    g20_nominal_mapping,
    g20_normalized_mapping,
)
from dexwheel.envs import register_envs
from dexwheel.envs.g20_hand import REWARD_TERMS, G20HandEnv
from dexwheel.envs.g20_vector import G20HandVectorEnv
from dexwheel.fields import ConfigFieldError
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, JOINT_LIMITS, MIMIC_JOINTS
from dexwheel.sim.projection import contact_depth
from dexwheel.sim.slew import slew_ramp

register_envs()  # explicit: a stale editable install can make ``import dexwheel`` a namespace package

TOL = 5e-4
ACTIVE_IDX = [ALL_JOINTS.index(j) for j in ACTIVE_JOINTS]
LOWER = np.array([JOINT_LIMITS[j][0] for j in ACTIVE_JOINTS])
UPPER = np.array([JOINT_LIMITS[j][1] for j in ACTIVE_JOINTS])


def make(**kwargs) -> G20HandEnv:
    kwargs.setdefault("reset_noise_scale", 0.0)
    return G20HandEnv(**kwargs)


def active(env: G20HandEnv) -> np.ndarray:
    return env.data.qpos[ACTIVE_IDX].copy()


def composed(goal: np.ndarray) -> np.ndarray:
    """A mapped goal as the composer hands it to the drive: through its float32 frame, back within the limits."""
    return np.clip(np.asarray(goal, dtype=np.float32).astype(np.float64), LOWER, UPPER)


def nominal(env: G20HandEnv, q: np.ndarray) -> dict[str, float]:
    return {name: float(v) for name, v in zip(ACTIVE_JOINTS, q, strict=True)}


def sdk_pose(cmd, hand: str = "left") -> np.ndarray:
    return G20SdkMapping(hand)(cmd)[ACTIVE_IDX].copy()


def deepest_contact(env: G20HandEnv) -> float:
    """An independent look at the written pose: a fresh MjData, full mj_forward."""
    d = mujoco.MjData(env.model)
    d.qpos[:] = env.data.qpos
    mujoco.mj_forward(env.model, d)
    return contact_depth(d)


# -- Gymnasium API --------------------------------------------------------------------------------
@pytest.mark.parametrize("hand", ["left", "right"])
@pytest.mark.parametrize("drive", ["hard_write", "pd"])
def test_check_env_passes(drive, hand):
    env = G20HandEnv(drive=drive, hand=hand, max_episode_steps=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # +-inf observation bounds, as Gymnasium's MuJoCo envs have
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("action", ["sdk255", "nominal", "delta"])
def test_check_env_passes_for_every_action_kind(action):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(G20HandEnv(actions=action), skip_render_check=True)


def test_make_applies_kwargs_and_spaces():
    env = gym.make("G20Hand-v0", drive="pd", actions="sdk255", control_hz=100, max_episode_steps=3)
    u = env.unwrapped
    assert isinstance(u, G20HandEnv)
    assert u.cfg.drive.kind == "pd" and u.dt == pytest.approx(0.01) and u.frame_skip == 5
    assert env.action_space.shape == (20,) and env.action_space.dtype == np.float32
    assert env.observation_space.shape == (21 + 21 + 16 + 20,)
    assert u.obs_slices == {
        "qpos": slice(0, 21),
        "qvel": slice(21, 42),
        "goal": slice(42, 58),
        "last_action": slice(58, 78),
    }
    obs, info = env.reset(seed=0)
    assert obs.dtype == np.float32 and set(info) >= {f"reward_{t}" for t in REWARD_TERMS}
    for _ in range(3):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    assert truncated and not terminated  # TimeLimit from make(max_episode_steps=3)


def test_config_errors_name_the_allowed_values():
    with pytest.raises(ValueError, match=r"drive.kind: 'torque'.*\['hard_write', 'pd'\]"):
        G20HandEnv(drive="torque")
    with pytest.raises(ValueError, match=r"actions.kind: 'rad'.*'normalized', 'sdk255', 'nominal', 'delta'"):
        G20HandEnv(actions="rad")
    with pytest.raises(ValueError, match="control_hz"):
        G20HandEnv(control_hz=30.0)
    with pytest.raises(ValueError, match="goal_presets"):
        G20HandEnv(goal_presets=["fist"])
    most = numba.config.NUMBA_NUM_THREADS
    with pytest.raises(ValueError, match=rf"num_threads must be between 1 and {most} .*got {most + 1}"):
        G20HandVectorEnv(num_envs=2, num_threads=most + 1)  # refused when made, not at its first step
    with pytest.raises(ConfigFieldError, match="not_a_setting: unknown keyword argument; valid: hand, actions, drive"):
        G20HandEnv(not_a_setting=1)


@pytest.mark.parametrize("drive", ["hard_write", "pd"])
def test_same_seed_same_actions_give_bit_identical_trajectories(drive):
    rng = np.random.default_rng(3)
    actions = rng.uniform(-1, 1, (40, 16)).astype(np.float32)
    runs = []
    for _ in range(2):
        env = make(drive=drive, goal_switch_steps=7, reset_noise_scale=0.05)
        obs, _ = env.reset(seed=11)
        traj = [obs]
        for a in actions:
            obs, reward, _, _, info = env.step(a)
            traj += [obs, np.array([reward]), np.array(list(info.values()), dtype=np.float64)]
        runs.append(np.concatenate([np.ravel(x).astype(np.float64) for x in traj]))
    assert np.array_equal(runs[0], runs[1])
    env3 = make(drive=drive, goal_switch_steps=7, reset_noise_scale=0.05)
    assert not np.array_equal(env3.reset(seed=12)[0], runs[0][: env3.observation_space.shape[0]])


@pytest.mark.parametrize("drive", ["hard_write", "pd"])
def test_reward_is_the_sum_of_its_named_terms(drive):
    env = make(drive=drive, actions="delta")
    env.reset(seed=0, options={"goal": "full_fist"})
    rng = np.random.default_rng(0)
    for _ in range(15):
        _, reward, _, _, info = env.step(rng.uniform(-1, 1, 16).astype(np.float32))
        terms = [info[f"reward_{t}"] for t in REWARD_TERMS]
        assert reward == terms[0] + terms[1] + terms[2] + terms[3]  # summed in REWARD_TERMS order
        assert terms[0] >= 0 and terms[1] >= 0 and terms[2] <= 0 and terms[3] <= 0
        assert info["max_penetration"] >= 0 and info["tracking_error"] >= 0


def test_reward_terms_and_errors_match_an_independent_computation():
    """Hard-write in contact (sdk255 actions): every info value recomputed with numpy from MjData."""
    env = make(actions="sdk255")
    w = {name: term.weight for name, term in env.cfg.rewards.items()}  # the default table's
    std = {name: env.cfg.rewards[name].params["std"] for name in ("joint_pos_tracking", "joint_pos_tracking_fine")}
    assert (w["joint_pos_tracking"], std["joint_pos_tracking"], std["joint_pos_tracking_fine"]) == (1.0, 0.3, 0.1)
    env.reset(seed=1, options={"goal": "half_fist"})
    rng = np.random.default_rng(5)
    deepest = 0.0
    for _ in range(12):
        previous = env.task.last_action[0].copy()
        action = rng.integers(0, 256, 20).astype(np.float32)
        _, reward, _, _, info = env.step(action)
        q, goal, command = active(env), env.goal, env.command
        expected = {
            "joint_pos_tracking": w["joint_pos_tracking"] * np.exp(-np.mean((q - goal) ** 2) / 0.3**2),
            "joint_pos_tracking_fine": w["joint_pos_tracking_fine"] * np.exp(-np.mean((q - goal) ** 2) / 0.1**2),
            "penetration": w["penetration"] * deepest_contact(env),
            "action_rate_l2": w["action_rate_l2"] * np.sum((action.astype(np.float64) / 127.5 - 1.0 - previous) ** 2),
        }
        for name, value in expected.items():
            assert info[f"reward_{name}"] == pytest.approx(value, rel=1e-9, abs=1e-12), name
        assert reward == pytest.approx(sum(expected.values()), rel=1e-9, abs=1e-12)
        assert info["tracking_error"] == pytest.approx(np.abs(q - goal).max(), abs=1e-12)
        assert info["mean_joint_error"] == pytest.approx(np.abs(q - goal).mean(), abs=1e-12)
        assert info["command_error"] == pytest.approx(np.abs(q - command).max(), abs=1e-12)
        deepest = max(deepest, info["max_penetration"])
    assert deepest > 0  # the sequence did reach contacts


def test_observation_layout_matches_the_state():
    env = make(actions="sdk255")
    env.reset(seed=0, options={"goal": "half_fist"})
    obs, *_ = env.step(np.full(20, 200.0, dtype=np.float32))
    s = env.obs_slices
    np.testing.assert_array_equal(obs[s["qpos"]], env.data.qpos.astype(np.float32))
    np.testing.assert_array_equal(obs[s["goal"]], sdk_pose((80, 80, 80, 80, 80, 255, 193, 148, 105, 42, 245, 255,
                                                            255, 255, 255, 80, 80, 80, 80, 80)).astype(np.float32))  # fmt: skip
    np.testing.assert_allclose(obs[s["last_action"]], 200 / 127.5 - 1, rtol=1e-6)
    assert np.all(env.data.qvel == 0)  # hard-write writes qvel = 0; the observation has the joint motion / dt
    assert np.abs(obs[s["qvel"]]).max() > 0


# -- action mappings are the control module's ---------------------------------------------------
def test_action_mappings_match_dexwheel_control_bit_for_bit():
    """The env's commands are the control mappings' goals, as the composer's float32 frame carries them."""
    rng = np.random.default_rng(1)
    active = [ALL_JOINTS.index(j) for j in ACTIVE_JOINTS]
    for kind, ref in (("normalized", g20_normalized_mapping()), ("nominal", g20_nominal_mapping())):
        env = make(actions=kind)
        env.reset(seed=0)
        for _ in range(5):
            if kind == "normalized":
                a = rng.uniform(-1, 1, 16)
                expected = ref(a)
            else:
                a = rng.uniform(LOWER, UPPER)
                expected = ref(nominal(env, a))
            env.step(a)
            np.testing.assert_array_equal(env.command, composed(expected[active]))
    for hand in ("left", "right"):  # the hands' SDK tables differ (directions, ranges)
        env, ref = make(actions="sdk255", hand=hand), G20SdkMapping(hand)
        env.reset(seed=0)
        for cmd in [rng.integers(0, 256, 20).astype(float), np.zeros(20)]:
            env.step(cmd)
            np.testing.assert_array_equal(env.command, composed(ref(cmd)[active]))
    env, ref = make(actions={"kind": "delta", "delta_scale": 0.05}), g20_delta_mapping(0.05)
    env.reset(seed=0)
    for _ in range(10):
        a = rng.uniform(-1, 1, 16)
        ref.reset(env.command)  # the delta adds to the previous command: the composed one
        env.step(a)
        np.testing.assert_array_equal(env.command, composed(ref(a)[active]))


def test_nominal_dict_actions_keep_unnamed_joints_and_refuse_mimic_names():
    env = make(actions="nominal", drive={"track_test": True})
    env.reset(seed=0)
    before = env.command
    with pytest.raises(ActionError, match="index_dip is a mimic joint: it follows index_pip"):
        env.step({"index_pip": 1.0, "index_dip": 0.3})
    env.step({"index_pip": 1.0})
    after = env.command
    i = ACTIVE_JOINTS.index("index_pip")
    assert after[i] == 1.0
    assert np.array_equal(np.delete(after, i), np.delete(composed(before), i))
    assert env.data.qpos[ALL_JOINTS.index("index_dip")] == pytest.approx(0.89)


# -- drives ---------------------------------------------------------------------------------------
def test_hard_write_writes_qpos_ctrl_and_zero_qvel_without_mj_step():
    env = make()
    env.reset(seed=0)
    t0 = env.data.time
    env.step(np.full(16, 0.3, dtype=np.float32))
    d = env.data
    np.testing.assert_array_equal(d.ctrl, d.qpos)
    assert np.all(d.qvel == 0)
    assert d.time == pytest.approx(t0 + env.dt)
    q = d.qpos.copy()
    for m, (src, ratio) in ((m, g20.MIMIC_RATIOS[m]) for m in MIMIC_JOINTS):
        assert q[ALL_JOINTS.index(m)] == pytest.approx(ratio * q[ALL_JOINTS.index(src)])


@pytest.mark.parametrize("hand", ["left", "right"])
def test_track_test_hard_write_reaches_any_in_range_goal(hand):
    env = make(hand=hand, actions="nominal", drive={"track_test": True})
    assert env.task.drive.projector is None and env.task.drive.slew_rad_s == 0.0
    env.reset(seed=0)
    rng = np.random.default_rng(2)
    goals = [rng.uniform(LOWER, UPPER) for _ in range(20)] + [LOWER, UPPER, sdk_pose(G20_FULL_FIST, hand)]
    for goal in goals:
        env.step(nominal(env, goal))
        _, _, _, _, info = env.step(nominal(env, goal))
        assert info["command_error"] <= 0.02
        assert np.abs(active(env) - goal).max() <= 0.02


G20_FULL_FIST = g20.G20_FULL_FIST_CMD
G20_HALF_FIST = g20.G20_HALF_FIST_CMD


@pytest.mark.parametrize("track_test", [True, False])
def test_pd_reaches_a_contact_free_goal_within_one_second(track_test):
    env = make(drive={"kind": "pd", "track_test": track_test}, actions="nominal")
    env.reset(seed=0)
    goal = sdk_pose(G20_HALF_FIST)
    steps = round(1.0 / env.dt)
    for _ in range(steps):
        _, _, _, _, info = env.step(nominal(env, goal))
    assert info["max_penetration"] == 0.0  # the goal (and the way there) is contact-free
    assert np.abs(active(env) - goal).max() <= 0.02
    assert info["command_error"] <= 0.02


def test_pd_penetration_is_the_deepest_contact_over_the_control_step():
    """PD reads penetration from the model's contact sensor after every physics step; replaying the
    step's controls on a copy of the data and reading the contact list must give the same maximum."""
    env = make(drive="pd", actions="nominal")
    fist = sdk_pose(G20_FULL_FIST)
    _, info = env.reset(seed=0, options={"init_qpos": fist})  # starts with the thumb 1.08 mm in the palm
    assert info["max_penetration"] == contact_depth(env.data) > TOL
    replay = mujoco.MjData(env.model)
    seen = []
    for _ in range(5):
        mujoco.mj_copyData(replay, env.model, env.data)
        _, _, _, _, info = env.step(nominal(env, fist))
        depths = []
        for row in env.task.drive.control[0]:
            replay.ctrl[:] = row
            mujoco.mj_step(env.model, replay)
            depths.append(contact_depth(replay))
        assert np.array_equal(replay.qpos, env.data.qpos)  # the same physics
        assert info["max_penetration"] == max(depths)
        seen.append(info["max_penetration"])
    assert seen[0] > TOL  # the first step starts in the penetrating pose


@pytest.mark.parametrize("control_hz", [500.0, 50.0])
@pytest.mark.parametrize("projection", [False, True])
def test_slew_bounds_every_joint_per_physics_step(control_hz, projection):
    slew = 5.0
    env = make(
        actions="nominal", control_hz=control_hz, drive={"slew_rad_s": slew}, collision={"projection": projection}
    )
    env.reset(seed=0)
    bound = slew * env.dt  # hard-write: one physics step (one mj_forward) per control step
    prev = env.data.qpos.copy()
    moved = 0.0
    for goal in (sdk_pose(G20_FULL_FIST), sdk_pose(G20_HALF_FIST), LOWER, UPPER):
        for _ in range(int(0.4 * control_hz)):
            env.step(nominal(env, goal))
            step = np.abs(env.data.qpos - prev).max()  # all 21 joints, mimic joints included
            assert step <= bound + 1e-12
            moved = max(moved, step)
            prev = env.data.qpos.copy()
    assert moved == pytest.approx(bound)


@pytest.mark.parametrize("slew", [5.0, 0.0])
def test_pd_controls_are_the_slew_ramp_completed_with_mimic_joints(slew):
    """The drive's compiled step against the numpy definitions (slew_ramp, MimicCompletion.complete)."""
    env = make(drive={"kind": "pd", "slew_rad_s": slew}, actions="normalized")
    env.reset(seed=0)
    drive, coupling = env.task.drive, env.task.coupling
    max_step = coupling.slew_steps(slew, env.task.timestep)
    rng = np.random.default_rng(3)
    for _ in range(5):
        start = env.task.q[0].copy()
        env.step(rng.uniform(-1, 1, 16).astype(np.float32))
        ramp = slew_ramp(start, env.command, max_step, env.task.nsub)
        expected = coupling.complete(ramp, clip_mimic=True)[:, np.argsort(drive.ctrl_idx)]
        np.testing.assert_array_equal(drive.control[0], expected)
        np.testing.assert_array_equal(env.task.q[0], ramp[-1])


def test_slew_bounds_pd_targets_per_physics_step():
    slew = 5.0
    env = make(
        drive={"kind": "pd", "slew_rad_s": slew}, actions="nominal", control_hz=500.0
    )  # one mj_step per env step
    env.reset(seed=0)
    bound = slew * env.task.timestep
    prev_ctrl, prev_q = env.data.ctrl.copy(), env.data.qpos.copy()
    for goal in (sdk_pose(G20_HALF_FIST), LOWER):
        for _ in range(150):
            env.step(nominal(env, goal))
            assert np.abs(env.data.ctrl - prev_ctrl).max() <= bound + 1e-12
            # the joints follow the ramp; a PD joint can briefly catch up a lag, so allow a margin
            assert np.abs(env.data.qpos - prev_q).max() <= 1.1 * bound
            prev_ctrl, prev_q = env.data.ctrl.copy(), env.data.qpos.copy()


def test_pd_couples_mimic_targets_into_their_actuators():
    env = make(drive="pd", actions="nominal")
    env.reset(seed=0)
    env.step({"thumb_mcp": 1.0, "ring_pip": 1.5})
    ctrl = env.data.ctrl
    assert ctrl[ALL_JOINTS.index("thumb_ip")] == pytest.approx(1.02 * ctrl[ALL_JOINTS.index("thumb_mcp")])
    assert ctrl[ALL_JOINTS.index("ring_dip")] == pytest.approx(0.89 * ctrl[ALL_JOINTS.index("ring_pip")])


# -- collision projection ------------------------------------------------------------------------
def test_projection_closing_a_full_fist_never_leaves_a_deep_contact():
    env = make(actions="sdk255")  # hard-write, projection on, slew 5 rad/s: the defaults
    env.reset(seed=0, options={"goal": "full_fist"})
    assert deepest_contact(env) <= TOL
    open_cmd = np.array(g20.G20_OPEN_CMD, dtype=np.float32)
    sequence = [G20_HALF_FIST] * 10 + [G20_FULL_FIST] * 25 + [open_cmd] * 5 + [G20_FULL_FIST] * 20
    checks = limited = 0
    for cmd in sequence:
        _, _, _, _, info = env.step(np.asarray(cmd, dtype=np.float32))
        assert info["max_penetration"] <= TOL
        assert deepest_contact(env) <= TOL
        checks += info["projection_checks"]
        limited += info["projection_limited"]
    assert limited > 0 and checks > len(sequence)  # the thumb was pressed into the palm and stopped
    assert info["command_error"] > 0.02  # the fist command is not reachable without penetrating ...
    fist = sdk_pose(G20_FULL_FIST)
    thumb = [ACTIVE_JOINTS.index(j) for j in ACTIVE_JOINTS if j.startswith("thumb")]
    fingers = [i for i in range(16) if i not in thumb]
    assert np.abs(active(env)[fingers] - fist[fingers]).max() <= 0.02  # ... but the fingers got there


@pytest.mark.parametrize("group_free", [True, False])
def test_a_colliding_thumb_does_not_freeze_the_index_finger(group_free):
    env = make(actions="nominal", collision={"projection_group_free": group_free})
    env.reset(seed=0)
    goal = sdk_pose(g20.G20_OPEN_CMD)
    fist = sdk_pose(G20_FULL_FIST)
    thumb = [ACTIVE_JOINTS.index(j) for j in ACTIVE_JOINTS if j.startswith("thumb")]
    goal[thumb] = fist[thumb]  # the thumb alone goes into the palm
    index = [ACTIVE_JOINTS.index(j) for j in ("index_mcp_roll", "index_mcp_pitch", "index_pip")]
    goal[index] = [0.1, 0.9, 1.0]  # the index finger bends, clear of the thumb
    for _ in range(40):
        _, _, _, _, info = env.step(nominal(env, goal))
        assert info["max_penetration"] <= TOL
    q = active(env)
    assert np.abs(q[index] - goal[index]).max() <= 0.02
    assert np.abs(q[thumb] - goal[thumb]).max() > 0.02  # the thumb stopped at the palm
    assert deepest_contact(env) <= TOL


def test_projection_off_lets_the_thumb_penetrate():
    env = make(actions="nominal", collision={"projection": False}, drive={"slew_rad_s": 0.0})
    env.reset(seed=0)
    _, _, _, _, info = env.step(nominal(env, sdk_pose(G20_FULL_FIST)))
    assert info["max_penetration"] > TOL and info["projection_checks"] == 0


def test_projection_falls_back_to_the_last_safe_pose_when_it_cannot_get_out():
    env = make(actions="nominal")
    fist = sdk_pose(G20_FULL_FIST)
    env.reset(seed=0, options={"init_qpos": fist})  # starts penetrating (1.08 mm)
    assert env.task.drive.safe[0] == False  # noqa: E712
    _, _, _, _, info = env.step(nominal(env, fist))  # holding it cannot be made safe
    assert info["projection_fallback"] and info["max_penetration"] <= TOL
    np.testing.assert_array_equal(active(env), env.task.open_pose)


# -- goals ---------------------------------------------------------------------------------------
def test_goals_come_from_presets_and_random_collision_free_poses():
    env = make(goal_mode="random")
    presets = make(goal_mode="presets")
    for seed in range(8):
        env.reset(seed=seed)
        assert env.task.pose_depth(env.goal) <= TOL
        assert np.all(env.goal >= LOWER) and np.all(env.goal <= UPPER)
        presets.reset(seed=seed)
        assert any(np.array_equal(presets.goal, p) for p in presets.task.presets.values())


def test_goal_switching_within_an_episode():
    env = make(goal_switch_steps=5, goal_mode="random")
    env.reset(seed=0)
    goals = [env.goal]
    for k in range(1, 16):
        obs, _, _, _, info = env.step(np.zeros(16, dtype=np.float32))
        assert info["goal_switched"] == (k % 5 == 0)
        np.testing.assert_array_equal(obs[env.obs_slices["goal"]], env.goal.astype(np.float32))  # the new goal
        goals.append(env.goal)
    assert not np.array_equal(goals[4], goals[5]) and np.array_equal(goals[5], goals[9])


def test_reset_options_set_the_goal():
    env = make()
    obs, _ = env.reset(seed=0, options={"goal": "half_fist"})
    np.testing.assert_array_equal(env.goal, sdk_pose(G20_HALF_FIST))
    np.testing.assert_array_equal(obs[env.obs_slices["goal"]], env.goal.astype(np.float32))
    with pytest.raises(ValueError, match="unknown options"):
        env.reset(options={"gaol": 1})


# -- bad input ------------------------------------------------------------------------------------
def _snapshot(env: G20HandEnv):
    t = env.task
    return (
        env.data.qpos.copy(),
        env.data.ctrl.copy(),
        env.data.time,
        t.q.copy(),
        t.command.copy(),
        t.goal.copy(),
        t.raw_action.copy(),
        t.elapsed.copy(),
        repr(env.np_random.bit_generator.state),
    )


BAD = [
    ("normalized", np.zeros(15), ActionError, r"shape \(16,\)"),
    ("normalized", np.zeros((1, 16)), ActionError, r"shape \(16,\)"),
    ("normalized", np.r_[np.nan, np.zeros(15)], ActionError, r"action\[0\] \(pinky_mcp_roll\) = nan is not finite"),
    ("normalized", np.r_[np.zeros(3), np.inf, np.zeros(12)], ActionError, r"action\[3\] \(pinky_dip\)|action\[3\]"),
    ("normalized", np.full(16, 1.5), ActionError, r"action\[0\].* outside.*\[-1, 1\]"),
    ("normalized", ["a"] * 16, ActionError, "numeric"),
    ("delta", np.full(16, np.nan), ActionError, "not finite"),
    ("sdk255", np.full(20, 300.0), ActionError, r"SDK channel 0 \(thumb_cmc_pitch\) = 300.0 is outside.*\[0, 255\]"),
    ("sdk255", np.r_[np.full(15, 100.0), -1.0, np.full(4, 100.0)], ActionError, r"SDK channel 15 \(thumb_mcp\)"),
    ("sdk255", np.full(19, 100.0), ActionError, r"shape \(20,\)"),
    ("nominal", {"index_pip": 1.0, "indx_pip": 0.5}, UnknownJointError, r"\['indx_pip'\].*valid names"),
    ("nominal", {"index_pip": np.nan}, ActionError, r"index_pip.*not finite"),
    ("nominal", {"index_pip": 2.5}, ActionError, r"index_pip.*outside.*\[0, 1.74\]"),
]


@pytest.mark.parametrize(("kind", "action", "error", "match"), BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
@pytest.mark.parametrize("drive", ["hard_write", "pd"])
def test_bad_actions_raise_clear_errors_and_change_nothing(drive, kind, action, error, match):
    env = make(drive=drive, actions=kind, goal_switch_steps=1)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    before = _snapshot(env)
    with pytest.raises(error, match=match):
        env.step(action)
    after = _snapshot(env)
    for x, y in zip(before, after, strict=True):
        assert np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
    env.step(env.action_space.sample())  # still usable


def test_dict_action_needs_nominal_mode():
    env = make()
    env.reset(seed=0)
    with pytest.raises(ActionError, match="action='nominal'"):
        env.step({"index_pip": 1.0})


def test_clip_mode_clips_instead_of_raising():
    env = make(actions={"kind": "sdk255", "out_of_range": "clip"})
    env.reset(seed=0)
    with pytest.warns(ActionClipWarning):
        _, _, _, _, info = env.step(np.r_[np.full(19, 300.0), -4.0])
    assert info["action_clipped"] == 20
    with pytest.raises(ActionError, match=r"SDK channel 19 \(pinky_pip\) = nan is not finite"):
        env.step(np.r_[np.full(19, 128.0), np.nan])  # no value to clip a NaN to: refused, as in every env


# -- rendering -----------------------------------------------------------------------------------
def test_rgb_array_rendering_uses_the_compare_view():
    env = make(render_mode="rgb_array", width=160, height=120)
    env.reset(seed=0)
    try:
        frame = env.render()
    except Exception as exc:  # no OpenGL backend on this machine
        pytest.skip(f"offscreen rendering unavailable (MUJOCO_GL): {exc}")
    assert frame.shape == (120, 160, 3) and frame.dtype == np.uint8
    assert frame.std() > 1.0  # not a blank image
    cam = env._renderer.default_cam_config
    np.testing.assert_allclose(cam["lookat"], (0.04, -0.04, 0.12))
    assert (cam["distance"], cam["azimuth"], cam["elevation"]) == (0.50, 180.0, -12.0)
    env.close()


def test_contact_excludes_is_a_config_field_that_reaches_the_model():
    from dexwheel.robots import get_robot

    spec_pairs = list(get_robot("g20_left").contact_excludes)
    thumb_through_palm = gym.make(
        "G20Hand-v0", collision={"contact_excludes": [*spec_pairs, ("thumb_distal", "hand_base")]}
    )
    default = gym.make("G20Hand-v0")
    assert thumb_through_palm.unwrapped.model.nexclude == default.unwrapped.model.nexclude + 1 == len(spec_pairs) + 1
    with pytest.raises(ValueError, match="unknown bodies \\['palm'\\]"):
        gym.make("G20Hand-v0", collision={"contact_excludes": [("thumb_distal", "palm")]})
