"""Every G20 selection on Isaac Lab, or refused by name: the action mappings and the hold layer are
dexwheel.control's on torch, hard-write writes the pose every physics step, random goals come from the MuJoCo
task's seeded set, and ``python -m dexwheel.isaaclab.evaluate`` (what ``scripts/evaluate.py backend=isaaclab``
starts) gives the MuJoCo evaluation's metrics. One 4-env task on the CPU, plus an evaluation on both backends."""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from dexwheel.control.g20_sdk import G20_MIMIC, G20SdkMapping
from dexwheel.isaaclab.cross_backend import MUJOCO_PYTHON, REPO
from dexwheel.isaaclab.episodes import open_task
from dexwheel.isaaclab.tasks import HandPoseG20LeftEnvCfg
from dexwheel.isaaclab.tasks.hand_pose.config import ACTION, COMMAND, preset_poses
from dexwheel.rl.isaaclab_launch import RESULT
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, JOINT_GROUPS
from dexwheel.tasks.hand.action_path import HandActionPath
from dexwheel.tasks.hand_pose import goal_set
from dexwheel.tasks.hand_pose.config import make_cfg

NUM_ENVS = 4
#: hard-write, slew 0 and no projection (the vendor's --track-test), SDK commands, the thumb held open, mixed goals
SELECTION = {"drive": {"kind": "hard_write", "track_test": True}, "actions": "sdk255",
             "composer": {"layers": ["policy", "hold"], "hold_joints": "thumb"}, "goal_mode": "mixed",
             "preset_goal_prob": 0.5}  # fmt: skip
THUMB = [ACTIVE_JOINTS.index(j) for j in JOINT_GROUPS["thumb"]]


def test_projection_and_other_unsupported_fields_are_refused_by_name_with_the_reason():
    with pytest.raises(ValueError) as exc:
        HandPoseG20LeftEnvCfg(task_overrides={"drive": "hard_write"})  # collision.projection defaults to True
    assert "'collision.projection'" in str(exc.value) and "collision check" in str(exc.value)
    with pytest.raises(ValueError, match="'collision.contact_excludes'.*USD"):
        HandPoseG20LeftEnvCfg(task_overrides={"collision": {"contact_excludes": [["thumb_distal", "hand_base"]]}})
    # projection is off under track_test or with collision.projection=False, and the PD drive never projects
    for ok in (
        {"drive": "hard_write", "collision": {"projection": False}},
        {"drive": "pd", "collision": {"projection": True}},
    ):
        HandPoseG20LeftEnvCfg(task_overrides=ok)


@pytest.fixture(scope="module")
def env(isaac_device):
    env = open_task("Dexwheel-HandPose-G20Left-v0", NUM_ENVS, isaac_device, 0, SELECTION)
    env.reset(seed=0)
    yield env
    env.close()


def test_the_action_path_is_dexwheel_controls_on_torch(env):
    u = env.unwrapped
    term = u.action_manager.get_term(ACTION)
    assert term.action_dim == 20 and isinstance(term.map.reference, G20SdkMapping)
    assert isinstance(term.path, HandActionPath) and term.path.layers == ("policy", "hold")
    assert isinstance(term.path.command, torch.Tensor) and term.completion is G20_MIMIC
    assert tuple(u.cfg.sim.gravity) == (0.0, 0.0, 0.0)  # hard-write: the written pose is the state


def test_hard_write_writes_the_mapped_and_held_pose_every_step(env):
    u = env.unwrapped
    term, robot = u.action_manager.get_term(ACTION), u.scene["robot"]
    cols = [robot.joint_names.index(j) for j in ALL_JOINTS]
    sdk, hold = G20SdkMapping("left"), preset_poses("left")["open"]
    free = goal_set.lookup(make_cfg())  # collision-free poses (the MuJoCo task's random goals), as SDK commands
    exact = 0
    for step in range(3):
        cmd = np.stack([sdk.to_sdk(q) for q in free[step * NUM_ENVS : (step + 1) * NUM_ENVS]]).astype(np.float64)
        env.step(torch.as_tensor(cmd, dtype=torch.float32))
        want = sdk.goals(cmd)
        want[:, THUMB] = hold[THUMB]  # the hold layer
        full = G20_MIMIC.complete(want, clip_mimic=True)
        q = robot.data.joint_pos.torch[:, cols].double().cpu().numpy()
        err = np.abs(q - full).max(axis=1)
        # slew 0 jumps; float32 state. A contact (the held thumb can meet a finger) pushes for one physics step.
        touching = u.dexwheel_step_info["max_penetration"].cpu().numpy() > 0
        assert np.all(err[~touching] < 1e-6) and np.all(err[touching] < 1e-2), (err, touching)
        exact += int((~touching).sum())
        assert torch.all(robot.data.joint_vel.torch[~torch.as_tensor(touching)] == 0)
    assert exact >= NUM_ENVS
    # the out_of_range="clip" arithmetic: NaN holds the channel, a fraction rounds, out of range clips
    previous = term._accepted.clone()
    bad = torch.full((NUM_ENVS, 20), 100.4)
    bad[:, 0], bad[:, 1], bad[:, 2] = float("nan"), 300.0, -5.0
    env.step(bad)
    a = term._accepted
    assert torch.equal(a[:, 0], previous[:, 0]) and torch.all(a[:, 1] == 255) and torch.all(a[:, 2] == 0)
    assert torch.all(a[:, 3:] == 100)
    # the observed last action and the action rate use the action scaled to [-1, 1], as on MuJoCo
    assert torch.allclose(term.normalized, a / 127.5 - 1.0)


def test_goals_are_held_presets_or_the_mujoco_tasks_random_goals(env):
    u = env.unwrapped
    goal = u.command_manager.get_term(COMMAND)
    task = make_cfg(**SELECTION)
    random = torch.as_tensor(goal_set.goal_set(task), dtype=torch.float32)
    assert torch.equal(goal.random_goals, random) and len(random) == goal_set.SIZE
    assert torch.all(goal.presets[:, THUMB] == torch.as_tensor(preset_poses("left")["open"][THUMB]).float())
    kinds = set()
    for seed in range(6):
        env.reset(seed=seed)
        for g in goal.goal:
            is_preset = any(torch.equal(g, p) for p in goal.presets)
            is_random = bool((random == g).all(dim=1).any())
            assert is_preset or is_random
            kinds.add("preset" if is_preset else "random")
    assert kinds == {"preset", "random"}
    assert torch.all(random[:, THUMB] == goal.presets[0, THUMB])  # held in the random goals too


# -- evaluation: the same config and a zero policy on both backends ------------------------------------------
OVERRIDES = ["robot=g20_left", "collision=off", "policy=zero", "episodes=2", "task.hand_pose.max_episode_steps=25",
             "task.hand_pose.goal_presets=[half_fist]", "task.hand_pose.goal_mode=presets", "task.hand_pose.events.reset_joints.params.scale=0.0"]  # fmt: skip
MUJOCO_EVAL = """
import json, sys
sys.path.insert(0, "tests")
from cfgutil import compose_cfg
from omegaconf import OmegaConf
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.evaluation import run_episodes
from dexwheel.rl.policies import baseline_policy
cfg = compose_cfg("evaluate", *json.loads(sys.argv[1]))
env = make_env(cfg)
result = run_episodes(env, baseline_policy("zero", env, cfg.eval_seed), cfg.task.name, cfg.episodes,
                      cfg.eval_seed)
print(json.dumps({"config": OmegaConf.to_container(cfg, resolve=True), "summary": result.summary()}))
"""


@pytest.fixture(scope="module")
def mujoco_eval():
    if not MUJOCO_PYTHON.exists():
        pytest.skip(f"the MuJoCo half needs the core venv's python at {MUJOCO_PYTHON}")
    proc = subprocess.run([str(MUJOCO_PYTHON), "-c", MUJOCO_EVAL, json.dumps(OVERRIDES)], cwd=REPO,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_evaluation_gives_the_mujoco_evaluations_metrics(mujoco_eval, tmp_path, isaac_device):
    cfg = mujoco_eval["config"]
    job = {"config": cfg, "policy": "zero", "checkpoint": None, "onnx": None, "metadata": None, "overrides": {},
           "episodes": 2, "eval_seed": cfg["eval_seed"], "device": isaac_device}  # fmt: skip
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    proc = subprocess.run([sys.executable, "-m", "dexwheel.isaaclab.evaluate", str(path)], cwd=REPO,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    isaac = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith(RESULT))[len(RESULT) :])
    mujoco = mujoco_eval["summary"]
    print("\nMuJoCo", mujoco, "\nIsaac Lab", isaac)
    assert set(isaac) == set(mujoco)
    # hard-write without projection: the same written pose at every step's end (float32 on Isaac Lab)
    for key in ("mean_joint_error", "max_joint_error"):
        assert isaac[key] == pytest.approx(mujoco[key], abs=1e-6), key
    assert isaac["return"] == pytest.approx(mujoco["return"], rel=1e-5)
    assert isaac["success"] == mujoco["success"] and isaac["length"] == mujoco["length"] == 25
    assert isaac["episodes"] == mujoco["episodes"] == 2
