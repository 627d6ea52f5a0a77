"""The Isaac Lab G20 pose task (gym ids) is the MuJoCo task's configuration with the PD drive, and it reaches
its goal poses; the rsl_rl runners of every Isaac Lab task are the shared ``rsl_ppo.yaml``.

Both hands build, reset and step with 4 envs on the CPU. The MuJoCo env's own sizes, presets and reward
values come from one short run of ``G20Hand-v0`` in the core venv (mujoco 4), as the cross-backend test does.
"""

import json
import math
import subprocess

import gymnasium as gym
import pytest
import torch

import dexwheel.isaaclab.tasks as tasks
from dexwheel.isaaclab.cross_backend import MUJOCO_PYTHON, REPO
from dexwheel.isaaclab.episodes import open_task
from dexwheel.isaaclab.tasks import HandPoseG20LeftEnvCfg, agents
from dexwheel.isaaclab.tasks.hand_pose.config import ACTION, COMMAND, preset_poses
from dexwheel.robots import get_robot
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, MIMIC_RATIOS
from dexwheel.tasks.hand_pose.config import REWARD_TERMS, G20HandConfig
from dexwheel.tasks.registry import task_record

HANDS = {"left": "Dexwheel-HandPose-G20Left-v0", "right": "Dexwheel-HandPose-G20Right-v0"}
NUM_ENVS = 4
REACH_S = 1.0  # holding the goal's action; both presets settle within ~0.5 s
OBS_TERMS = ("qpos", "qvel", "goal", "last_action")  # the MuJoCo env's obs_slices, in order (checked below)

# the MuJoCo half: G20Hand-v0 (PD, presets) one step from the full fist (the thumb pressed into the palm, so
# in contact) toward action +1
MUJOCO_PROBE = """
import json, numpy as np, gymnasium as gym
import dexwheel
from dexwheel.envs.g20_hand import REWARD_TERMS
from dexwheel.rl.metrics import HandPoseMetrics
env = gym.make("G20Hand-v0", drive="pd", goal_mode="presets")
obs, _ = env.reset(seed=0, options={"goal": "half_fist", "init_qpos": "full_fist"})
u, sl = env.unwrapped, env.unwrapped.obs_slices
action = np.ones(u.action_space.shape, dtype=np.float32)
after, reward, _, _, info = env.step(action)
print(json.dumps({
    "obs_slices": {k: [s.start, s.stop] for k, s in sl.items()}, "action_shape": list(u.action_space.shape),
    "dt": u.dt, "max_episode_steps": u.task.max_episode_steps,
    "presets": {k: v.tolist() for k, v in u.task.presets.items()}, "hold_action": obs[sl["last_action"]].tolist(),
    "qpos": after[sl["qpos"]].tolist(), "goal": after[sl["goal"]].tolist(), "action": action.tolist(),
    "reward": reward, "terms": {t: info[f"reward_{t}"] for t in REWARD_TERMS}, "depth": info["max_penetration"],
    "success_threshold_rad": HandPoseMetrics().success_threshold_rad,
}))
"""


@pytest.fixture(scope="module")
def mujoco():
    if not MUJOCO_PYTHON.exists():
        pytest.skip(f"the MuJoCo half needs the core venv's python at {MUJOCO_PYTHON}")
    proc = subprocess.run([str(MUJOCO_PYTHON), "-c", MUJOCO_PROBE], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=list(HANDS))
def env(request, isaac_device):
    env = open_task(HANDS[request.param], NUM_ENVS, isaac_device, 0)
    env.reset(seed=0)
    yield env
    env.close()


def _active(u) -> list[int]:
    return [u.scene["robot"].joint_names.index(j) for j in ACTIVE_JOINTS]


def test_both_hands_have_registered_tasks():
    assert all(task_id in gym.registry and task_id in tasks.TASKS for task_id in HANDS.values())
    from dexwheel.isaaclab.tasks import HandPoseG20RightEnvCfg

    assert HandPoseG20RightEnvCfg().scene.robot.spawn.usd_path.endswith("g20_right.usda")


def test_unsupported_fields_are_refused_by_name():
    # every drive, action, goal mode and layer runs (tests/isaaclab/test_g20_selections.py); the collision
    # projection, other contact excludes and rendering do not
    with pytest.raises(ValueError) as exc:
        HandPoseG20LeftEnvCfg(task_overrides={"drive": "hard_write"})
    assert repr("collision.projection") in str(exc.value)
    with pytest.raises(ValueError, match=r"^render_mode: Isaac Lab renders with its own viewers"):  # the env's, not
        HandPoseG20LeftEnvCfg(task_overrides={"render_mode": "rgb_array"})  # the task's: refused by name


def test_a_term_without_an_isaac_lab_counterpart_is_refused_by_name():
    # a user's own term (importable: the MuJoCo config checks its function's parameters first)
    user = {"func": "user_terms:thumb_spread", "weight": -0.5}
    with pytest.raises(ValueError, match=r"no counterpart of \{'rewards\.user_term': 'user_terms:thumb_spread'\}"):
        HandPoseG20LeftEnvCfg(task_overrides={"rewards": {"user_term": user}})


def test_terms_weights_and_sizes_come_from_the_mujoco_task_config(env):
    u, task = env.unwrapped, G20HandConfig()  # the MuJoCo task's defaults
    desc = get_robot(u.cfg.robot)
    assert tuple(u.reward_manager.active_terms) == REWARD_TERMS
    for name, term in task.rewards.items():
        assert u.reward_manager.get_term_cfg(name).weight == term.weight, name
    for name in ("joint_pos_tracking", "joint_pos_tracking_fine"):
        assert u.reward_manager.get_term_cfg(name).params["std"] == task.rewards[name].params["std"], name
    assert u.cfg.events.reset_joints.params["noise"] == task.events["reset_joints"].params["scale"] == 0.05
    assert u.cfg.decimation == task.substeps(desc.timestep) and u.physics_dt == pytest.approx(desc.timestep)
    assert u.max_episode_length == task_record("hand_pose").default_config(u.cfg.robot).max_episode_steps == 250
    assert tuple(u.observation_manager.active_terms["policy"]) == OBS_TERMS
    sizes = (len(ALL_JOINTS), len(ALL_JOINTS), len(ACTIVE_JOINTS), len(ACTIVE_JOINTS))
    assert [d[0] for d in u.observation_manager.group_obs_term_dim["policy"]] == list(sizes)
    assert u.action_manager.total_action_dim == len(ACTIVE_JOINTS)
    goal = u.command_manager.get_term(COMMAND)
    presets = preset_poses(u.cfg.robot.removeprefix("g20_"))
    for i, name in enumerate(task.goal_presets):
        assert torch.allclose(goal.presets[i].double(), torch.from_numpy(presets[name]), atol=1e-6), name
    # the physics: the description's gains and effort limit on every hinge, mimic joints included
    robot = u.scene["robot"]
    actuator = desc.actuators[0]
    assert torch.all(robot.data.joint_stiffness.torch == actuator.kp)
    assert torch.all(robot.data.joint_effort_limits.torch == actuator.forcerange[1])


def test_sizes_presets_and_rewards_match_the_mujoco_env(env, mujoco):
    u = env.unwrapped
    dims = [d[0] for d in u.observation_manager.group_obs_term_dim["policy"]]
    assert list(mujoco["obs_slices"]) == list(OBS_TERMS)
    assert [stop - start for start, stop in mujoco["obs_slices"].values()] == dims
    assert mujoco["action_shape"] == [u.action_manager.total_action_dim]
    assert u.step_dt == pytest.approx(mujoco["dt"]) and u.max_episode_length == mujoco["max_episode_steps"]
    goal = u.command_manager.get_term(COMMAND)
    for i, name in enumerate(u.cfg.commands.goal.presets):
        assert goal.presets[i].tolist() == pytest.approx(mujoco["presets"][name], abs=1e-6), name
    term = u.action_manager.get_term(ACTION)
    hold = term.hold_action(torch.tensor(mujoco["presets"]["full_fist"]))
    assert hold.tolist() == pytest.approx(mujoco["hold_action"], abs=1e-5)
    # MuJoCo's reward terms of its step, from the Isaac terms' weights and widths and MuJoCo's state
    q = torch.tensor(mujoco["qpos"], dtype=torch.float64)[[ALL_JOINTS.index(j) for j in ACTIVE_JOINTS]]
    err = torch.square(q - torch.tensor(mujoco["goal"], dtype=torch.float64)).mean()
    weight = {name: u.reward_manager.get_term_cfg(name).weight for name in REWARD_TERMS}
    std = {name: u.reward_manager.get_term_cfg(name).params["std"] for name in REWARD_TERMS[:2]}
    rate = torch.square(torch.tensor(mujoco["action"]) - hold.double()).sum()
    expected = {**{name: weight[name] * math.exp(-err / std[name] ** 2) for name in REWARD_TERMS[:2]},
                "penetration": weight["penetration"] * mujoco["depth"],
                "action_rate_l2": weight["action_rate_l2"] * float(rate)}  # fmt: skip
    assert mujoco["terms"] == pytest.approx(expected, rel=1e-5, abs=1e-9)


def test_a_reset_starts_at_the_noisy_open_hand_holding_it(env):
    u = env.unwrapped
    obs, _ = env.reset(seed=1)
    obs = obs["policy"].cpu()
    qpos, qvel, goal, last = torch.split(obs, [len(ALL_JOINTS), len(ALL_JOINTS), len(ACTIVE_JOINTS), len(ACTIVE_JOINTS)], 1)  # fmt: skip
    q = qpos[:, [ALL_JOINTS.index(j) for j in ACTIVE_JOINTS]]
    noise = u.cfg.events.reset_joints.params["noise"]
    open_pose = torch.tensor(preset_poses(u.cfg.robot.removeprefix("g20_"))["open"], dtype=torch.float32)
    assert torch.all((q - open_pose).abs() <= noise + 1e-6) and not torch.allclose(q, open_pose.expand_as(q))
    for mimic, (source, ratio) in MIMIC_RATIOS.items():
        lo, hi = get_robot(u.cfg.robot).joint(mimic).limits
        src = qpos[:, ALL_JOINTS.index(source)]
        assert torch.allclose(qpos[:, ALL_JOINTS.index(mimic)], (src * ratio).clamp(lo, hi), atol=1e-6), mimic
    assert torch.all(qvel == 0)
    assert torch.allclose(last, u.action_manager.get_term(ACTION).hold_action(q), atol=1e-6)
    presets = u.command_manager.get_term(COMMAND).presets.cpu()
    assert all(any(torch.equal(g, p) for p in presets) for g in goal)


def test_it_reaches_a_goal_pose(env, mujoco):
    u = env.unwrapped
    env.reset(seed=2)
    goal_term, term = u.command_manager.get_term(COMMAND), u.action_manager.get_term(ACTION)
    names = list(u.cfg.commands.goal.presets)
    goals = [names.index(n) for n in ("half_fist", "full_fist")]
    goal = goal_term.presets[[goals[i % 2] for i in range(NUM_ENVS)]]
    goal_term.goal[:] = goal
    action = term.hold_action(goal)  # the normalized action of the goal pose
    robot, active = u.scene["robot"], _active(u)
    q0 = robot.data.joint_pos.torch[:, active].clone()
    env.step(action)
    # the slew: the PD targets moved slew_rad_s per second toward the distant goals, no joint faster
    moved = (term.targets - q0).abs().max(dim=1).values
    assert torch.allclose(moved, torch.full_like(moved, G20HandConfig().drive.slew_rad_s * u.step_dt), atol=1e-6), moved
    truncated = torch.zeros(NUM_ENVS, dtype=torch.bool)
    for _ in range(round(REACH_S / u.step_dt) - 1):
        _, reward, terminated, trunc, _ = env.step(action)
        truncated |= (terminated | trunc).cpu()
    err = (robot.data.joint_pos.torch[:, active] - goal).abs().mean(dim=1)
    assert not truncated.any()
    assert torch.all(err <= mujoco["success_threshold_rad"]), err
    assert torch.allclose(goal_term.metrics["mean_joint_error"], err, atol=1e-6)
    assert torch.all(torch.isfinite(reward))
    terms = dict(zip(REWARD_TERMS, u.reward_manager._step_reward.T * u.step_dt, strict=True))  # per step, as MuJoCo's
    assert torch.all(terms["action_rate_l2"] == 0) and torch.all(terms["penetration"] <= 0)
    assert torch.all(terms["penetration"][1::2] < 0)  # the full fist presses the thumb into the palm
    assert torch.all(terms["joint_pos_tracking"] > 0.95 * u.reward_manager.get_term_cfg("joint_pos_tracking").weight)


def test_goals_switch_every_goal_switch_steps(env):
    goal_term = env.unwrapped.command_manager.get_term(COMMAND)
    goal_term.cfg.switch_steps = 2
    try:
        env.reset(seed=3)
        start = goal_term.command_counter.clone()
        action = torch.zeros(NUM_ENVS, len(ACTIVE_JOINTS))
        counts = []
        for _ in range(4):
            env.step(action)
            counts.append((goal_term.command_counter - start).tolist())
        assert counts == [[0] * NUM_ENVS, [1] * NUM_ENVS, [1] * NUM_ENVS, [2] * NUM_ENVS]
    finally:
        goal_term.cfg.switch_steps = 0


def test_every_runner_cfg_is_the_shared_rsl_ppo_config():
    def check(expected, got, path):
        if isinstance(expected, dict):
            for key, value in expected.items():
                check(value, got[key], f"{path}.{key}")
        else:
            assert got == (list(expected) if isinstance(expected, tuple) else expected), path

    names, steps = set(), {}
    for task_id, (task, _robot) in tasks.TASKS.items():
        agent = gym.spec(task_id).kwargs["rsl_rl_cfg_entry_point"].rpartition(":")[2]
        cfg = getattr(tasks, agent)()
        got = cfg.to_dict()
        shared = agents.shared_runner_cfg(task)
        check({k: v for k, v in shared.items() if k not in (*agents.NOT_SHARED, "overlap")}, got, agent)
        assert got["clip_actions"] == 1.0
        names.add(got["experiment_name"])
        steps[got["experiment_name"]] = got["num_steps_per_env"]
    assert len(names) == len(tasks.TASKS)
    # each task's rollout per env (its record's train.steps_per_env), as the MuJoCo side trains it
    assert steps["hand_pose_g20_left"] == steps["hand_pose_g20_right"] == 64 and steps["velocity_solenopsis"] == 32
