"""The Isaac Lab G20 object tasks (issue 58) are the MuJoCo tasks' config and term tables: the same terms, weights,
sizes, control rate and episode length; a reset draws a grasp of the same cache; a drop ends the episode with its
price; a goal reached earns its bonus and a new goal; a run trains on them and the in-hand benchmark scores it there.

The MuJoCo env's sizes come from one short probe of ``G20Rotate-v0`` / ``G20Reorient-v0`` in the core venv.
"""

import json
import math
import subprocess

import gymnasium as gym
import numpy as np
import pytest
import torch

import dexwheel.isaaclab.tasks as tasks
from dexwheel.control import G20_MIMIC
from dexwheel.isaaclab.cross_backend import MUJOCO_PYTHON, REPO
from dexwheel.isaaclab.episodes import open_task
from dexwheel.isaaclab.tasks import InHandRotateG20LeftEnvCfg
from dexwheel.isaaclab.tasks.in_hand.commands import quat_angle, wxyz
from dexwheel.isaaclab.tasks.in_hand.config import ACTION, COMMAND
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS
from dexwheel.tasks.in_hand import grasp_cache
from dexwheel.tasks.in_hand.config import reorient_cfg, rotate_cfg

IDS = {("rotate", "left"): "Dexwheel-InHand-Rotate-G20Left-v0", ("rotate", "right"): "Dexwheel-InHand-Rotate-G20Right-v0",
       ("reorient", "left"): "Dexwheel-InHand-Reorient-G20Left-v0",
       ("reorient", "right"): "Dexwheel-InHand-Reorient-G20Right-v0"}  # fmt: skip
NUM_ENVS = 4
MUJOCO_PROBE = """
import json, gymnasium as gym
import dexwheel
out = {}
for env_id in ("G20Rotate-v0", "G20Reorient-v0"):
    env = gym.make(env_id)
    t = env.unwrapped.task
    out[env_id] = {"obs_dim": t.obs_dim, "policy_obs_dim": t.policy_obs_dim, "nsub": t.nsub,
                   "timestep": float(t.model.opt.timestep), "max_episode_steps": t.max_episode_steps,
                   "slices": {k: [s.start, s.stop] for k, s in t.obs_slices.items()}}
    m = t.model
    geoms = {}
    for g in range(m.ngeom):
        if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:
            continue
        geoms[m.geom(g).name] = {"body": m.body(m.geom_bodyid[g]).name, "type": int(m.geom_type[g]),
                                 "size": m.geom_size[g].tolist(), "pos": m.geom_pos[g].tolist(),
                                 "priority": int(m.geom_priority[g]), "condim": int(m.geom_condim[g]),
                                 "friction": m.geom_friction[g].tolist(), "solref": m.geom_solref[g].tolist(),
                                 "solimp": m.geom_solimp[g].tolist(), "mass": float(m.body_mass[m.geom_bodyid[g]])}
    out[env_id]["geoms"], out[env_id]["armature"] = geoms, sorted({round(float(m.dof_armature[m.jnt_dofadr[j]]), 6)
                                                                for j in range(m.njnt) if m.jnt_type[j] != 0})
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def mujoco():
    if not MUJOCO_PYTHON.exists():
        pytest.skip(f"the MuJoCo half needs the core venv's python at {MUJOCO_PYTHON}")
    proc = subprocess.run([str(MUJOCO_PYTHON), "-c", MUJOCO_PROBE], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=["rotate", "reorient"])
def env(request, isaac_device):
    env = open_task(IDS[(request.param, "left")], NUM_ENVS, isaac_device, 0)
    env.reset(seed=0)
    yield env
    env.close()


def _task(u):
    return reorient_cfg() if u.cfg.task == "in_hand_reorient" else rotate_cfg()


def test_every_task_and_hand_has_a_registered_id():
    assert all(task_id in gym.registry and task_id in tasks.TASKS for task_id in IDS.values())
    from dexwheel.isaaclab.tasks import InHandReorientG20RightEnvCfg

    cfg = InHandReorientG20RightEnvCfg()
    assert cfg.scene.robot.spawn.usd_path.endswith("g20_right.usda") and cfg.commands.object_goal.reorient


def test_what_isaac_lab_cannot_run_is_refused_by_name():
    with pytest.raises(ValueError, match=r"do not support \['collision\.contact_excludes'\]"):
        InHandRotateG20LeftEnvCfg(task_overrides={"collision": {"contact_excludes": [["hand_base", "thumb_distal"]]}})
    with pytest.raises(ValueError, match=r"^render_mode: Isaac Lab renders with its own viewers"):
        InHandRotateG20LeftEnvCfg(task_overrides={"render_mode": "rgb_array"})
    user = {"func": "user_terms:thumb_spread", "weight": -0.5}  # a user's own term (tests/user_terms.py)
    with pytest.raises(ValueError, match=r"no counterpart of \{'rewards\.user_term': 'user_terms:thumb_spread'\}"):
        InHandRotateG20LeftEnvCfg(task_overrides={"rewards": {"user_term": user}})
    with pytest.raises(ValueError, match=r"task='reorient': this is the rotate task \(in_hand_rotate\); use its own"):
        InHandRotateG20LeftEnvCfg(task_overrides={"task": "reorient"})
    with pytest.raises(
        ValueError, match=r"drive\.kind: 'hard_write': the object tasks drive the hand's PD actuators only"
    ):
        InHandRotateG20LeftEnvCfg(task_overrides={"drive": "hard_write"})


# before the tests of the module's env: pytest keeps that env open to the module's end (one simulation at a time)
def test_a_users_variant_registered_from_their_package_gets_its_isaac_lab_id(tmp_path, monkeypatch, isaac_device):
    """A variant is a config function and a record (docs/how-to/add-a-task.md's module): its Isaac Lab id is made from
    the record, with its own config (the axis turned over), no Isaac Lab file of its own (issue 69)."""
    import sys

    text = (REPO / "docs" / "how-to" / "add-a-task.md").read_text()
    module = text.split("# mypkg/tasks.py", 1)[1].split("\n", 1)[1].split("```", 1)[0]
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "tasks.py").write_text(module)
    monkeypatch.syspath_prepend(str(tmp_path))
    import mypkg.tasks  # noqa: F401  (registers in_hand_rotate_cw; dexwheel.isaaclab.tasks derives its Isaac Lab id)

    assert tasks.TASKS["Mypkg-InHand-RotateCW-G20Left-v0"] == ("in_hand_rotate_cw", "g20_left")
    env = open_task("Mypkg-InHand-RotateCW-G20Left-v0", NUM_ENVS, isaac_device, 0)
    try:
        env.reset(seed=0)
        axis = env.unwrapped.command_manager.get_term(COMMAND).cfg.axis
        assert tuple(axis) == (0.0, 0.0, -1.0)
    finally:
        env.close()
        sys.modules.pop("mypkg.tasks", None)
        sys.modules.pop("mypkg", None)


def test_terms_sizes_and_timing_are_the_mujoco_tasks(env, mujoco):
    u = env.unwrapped
    task = _task(u)
    probe = mujoco["G20Reorient-v0" if u.cfg.task == "in_hand_reorient" else "G20Rotate-v0"]
    assert tuple(u.reward_manager.active_terms) == tuple(task.rewards)
    for name, term in task.rewards.items():
        assert u.reward_manager.get_term_cfg(name).weight == term.weight, name
    assert u.cfg.decimation == probe["nsub"] == round(1 / (task.control_hz * task.physics.timestep)) == 10
    assert u.physics_dt == pytest.approx(probe["timestep"]) == task.physics.timestep == 0.005
    assert u.max_episode_length == probe["max_episode_steps"] == 400
    policy = [k for k, t in task.observations.items() if t.group == "policy"]
    assert u.observation_manager.active_terms["policy"] == policy
    assert list(u.observation_manager.active_terms["critic"]) == list(probe["slices"])  # the MuJoCo columns' order
    obs = env.unwrapped.observation_manager.compute()
    assert obs["policy"].shape == (NUM_ENVS, probe["policy_obs_dim"])
    assert obs["critic"].shape == (NUM_ENVS, probe["obs_dim"])
    assert torch.equal(obs["critic"][:, : probe["policy_obs_dim"]], obs["policy"])  # the policy's columns first
    assert u.action_manager.total_action_dim == len(ACTIVE_JOINTS)
    assert [t for t in u.termination_manager.active_terms] == ["time_out", "in_hand_step", *task.terminations]


def _mj_geoms(m) -> dict[str, dict]:
    """The MuJoCo-Warp model's collision shapes by name: Newton names them by prim path (``..._index_pad_col_31``)."""
    import mujoco

    out = {}
    for g in range(m.ngeom):
        if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:
            continue
        out[mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or str(g)] = {
            "body": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, int(m.geom_bodyid[g])) or "",
            "type": int(m.geom_type[g]), "size": m.geom_size[g].tolist(), "pos": m.geom_pos[g].tolist(),
            "priority": int(m.geom_priority[g]), "condim": int(m.geom_condim[g]),
            "friction": m.geom_friction[g].tolist(), "solref": m.geom_solref[g].tolist(),
            "solimp": m.geom_solimp[g].tolist(), "mass": float(m.body_mass[m.geom_bodyid[g]])}  # fmt: skip
    return out


def _contact(g: dict) -> tuple:
    return (g["priority"], g["condim"], *np.round(g["friction"], 6), *np.round(g["solref"], 6),
            *np.round(g["solimp"], 6))  # fmt: skip


def test_the_scene_is_the_mujoco_tasks_step_armature_object_and_pads_contact_model(env, mujoco):
    """The physics section on Isaac Lab (issue 70): the MuJoCo-Warp model Newton builds has the MuJoCo scene's step,
    armature, object (the rotation task's capsule lying across: its shape, size and mass) and ``pads`` contact model:
    a pad on each distal segment with the same box in the same place, the pads at the object's friction, every other
    hand shape at the palm's, each with the same priority, condim, solref and solimp."""
    from isaaclab_newton.physics import NewtonManager

    u = env.unwrapped
    probe = mujoco["G20Reorient-v0" if u.cfg.task == "in_hand_reorient" else "G20Rotate-v0"]
    solver = NewtonManager._solver
    env.step(torch.zeros(NUM_ENVS, len(ACTIVE_JOINTS)))
    stepped = float(solver.mjw_model.opt.timestep.numpy()[0])  # each step's dt (the CPU mj_model keeps its default)
    assert stepped == pytest.approx(probe["timestep"]) == 0.005
    m = solver.mj_model
    robot = u.scene["robot"]
    hand_dofs = [m.jnt_dofadr[j] for j in range(m.njnt) if m.jnt_type[j] != 0]  # the object's free joint is type 0
    assert sorted(set(np.round(m.dof_armature[hand_dofs], 6).tolist())) == probe["armature"] == [0.025]
    assert len(hand_dofs) == len(robot.joint_names)
    mj = probe["geoms"]
    il = _mj_geoms(m)
    mj_obj, [il_obj] = mj.pop("object_col"), [g for g in il.values() if g["body"].endswith("_Object")]
    used = {2: 1, 3: 2, 5: 2, 6: 3}[mj_obj["type"]]  # a sphere's, capsule's, cylinder's, box's sizes (the rest unread)
    assert il_obj["type"] == mj_obj["type"] and np.allclose(il_obj["size"][:used], mj_obj["size"][:used], atol=1e-7)
    assert il_obj["mass"] == pytest.approx(mj_obj["mass"]) and _contact(il_obj) == _contact(mj_obj)
    if u.cfg.task == "in_hand_rotate":
        assert mj_obj["type"] == 3 and np.allclose(mj_obj["size"][:2], [0.0225, 0.0175])  # the 45 x 80 mm capsule
        quat = wxyz(u.scene["object"].data.root_link_quat_w.torch).cpu().numpy()
        axis = np.array([1 - 2 * (q[1] ** 2 + q[2] ** 2) for q in quat])  # the capsule's z on world z ...
        assert np.abs(axis).max() < 0.35  # ... small: it lies (across the fingers; a grasp's pose)
    pads = {n: g for n, g in mj.items() if n.endswith("_pad_col")}
    assert len(pads) == 5
    for name, pad in pads.items():
        [twin] = [g for n, g in il.items() if name in n]
        assert twin["type"] == pad["type"] == 6 and np.allclose(twin["size"], pad["size"], atol=1e-7), name
        assert np.allclose(twin["pos"], pad["pos"], atol=1e-6) and twin["body"].endswith(pad["body"]), name
        assert _contact(twin) == _contact(pad) and twin["friction"][0] == pytest.approx(1.0), name
    rest_mj = {_contact(g) for n, g in mj.items() if n not in pads}
    rest_il = {_contact(g) for n, g in il.items() if g is not il_obj and "_pad_col" not in n}
    assert rest_il == rest_mj and len(rest_mj) == 1 and next(iter(rest_mj))[2] == pytest.approx(0.3)  # palm_friction


def test_a_reset_starts_from_a_grasp_of_the_cache(env):
    u = env.unwrapped
    env.reset(seed=3)
    task = _task(u)
    cache = grasp_cache.load_for("left", task.object, task.grasps, task.physics)
    # written clipped to the joints' limits, as the MuJoCo task's reset writes them (a grasp settled a few mrad past
    # one: MuJoCo's limits are soft)
    joints = np.clip(cache.joints, G20_MIMIC.active_lower, G20_MIMIC.active_upper)
    robot, command = u.scene["robot"], u.command_manager.get_term(COMMAND)
    cols = [robot.joint_names.index(j) for j in ACTIVE_JOINTS]
    q = robot.data.joint_pos.torch[:, cols].double().cpu().numpy()
    pos = command.object_pos().cpu().numpy()
    quat = wxyz(u.scene["object"].data.root_link_quat_w.torch).cpu().numpy()
    for i in range(NUM_ENVS):
        k = int(np.argmin(np.abs(joints - q[i]).max(axis=1)))
        assert np.abs(joints[k] - q[i]).max() < 1e-5, i  # a grasp's joints (float32 in Isaac Lab)
        assert np.allclose(pos[i], cache.object_pose[k, :3], atol=1e-5) and np.allclose(
            command.object_start[i].cpu(), pos[i]
        )
        assert abs(abs(float(np.dot(quat[i], cache.object_pose[k, 3:]))) - 1.0) < 1e-5
    # the hold action keeps the commanded pose: the action term's command is the grasp
    term = u.action_manager.get_term(ACTION)
    assert np.allclose(term.processed_actions.cpu().numpy(), q, atol=1e-5)
    assert len(robot.joint_names) == len(ALL_JOINTS)


def test_the_fingertips_touch_the_held_object_and_a_drop_ends_the_episode_with_its_price(env):
    u = env.unwrapped
    env.reset(seed=0)
    hold = torch.zeros(NUM_ENVS, len(ACTIVE_JOINTS))  # delta actions: hold the grasp
    obs, *_ = env.step(hold)
    cols = slice(*_columns(u, "fingertip_contacts"))
    assert obs["critic"][:, cols].sum(dim=1).min() >= 1  # every grasp has a fingertip on the object
    obj = u.scene["object"]
    away = obj.data.root_link_pose_w.torch.clone()
    away[0, 2] += 0.2  # env 0's cube lifted 20 cm out of the hand
    obj.write_root_pose_to_sim_index(root_pose=away[:1], env_ids=torch.tensor([0], dtype=torch.int32))
    obs, reward, terminated, truncated, _ = env.step(hold)
    assert terminated.tolist() == [True, False, False, False] and not truncated.any()
    price = u.cfg.rewards.termination_penalty.weight
    assert reward[0] <= price + 1.0 < reward[1:].min()  # the drop's one-off -10 dominates the step's reward
    assert u.termination_manager.get_term("object_dropped").tolist() == [True, False, False, False]


def _columns(u, name: str) -> tuple[int, int]:
    names, dims = u.observation_manager.active_terms["critic"], u.observation_manager.group_obs_term_dim["critic"]
    starts = np.cumsum([0] + [int(np.prod(d)) for d in dims])
    k = names.index(name)
    return int(starts[k]), int(starts[k + 1])


def test_a_goal_reached_earns_its_bonus_counts_and_draws_the_next(env):
    u = env.unwrapped
    if u.cfg.task != "in_hand_reorient":
        pytest.skip("reorientation only")
    env.reset(seed=0)
    command = u.command_manager.get_term(COMMAND)
    command.goal[:] = command.object_quat()  # env k's goal: where its cube is now, except env 0's
    command.goal[0] = torch.tensor([0.0, 1.0, 0.0, 0.0])  # upside down: far from any grasp's
    before = command.goal.clone()
    _, reward, *_ = env.step(torch.zeros(NUM_ENVS, len(ACTIVE_JOINTS)))
    reached = command.successes.bool().tolist()
    assert reached == [False, True, True, True]
    bonus = u.cfg.rewards.goal_reached.weight
    assert reward[1:].min() > bonus * 0.9 and reward[0] < bonus * 0.1
    after = command.goal
    assert torch.equal(after[0], before[0]) and (quat_angle(after[1:], before[1:]) > 0).all()  # new goals
    info = u.dexwheel_step_info
    assert info["successes"].tolist() == [0.0, 1.0, 1.0, 1.0] and float(info["orientation_error"][1]) < 0.4
    assert math.isclose(float(info["orientation_error"][0]), float(quat_angle(command.object_quat()[:1], before[:1])),
                        abs_tol=1e-5)  # fmt: skip
