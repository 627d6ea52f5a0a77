"""Cross-backend in-hand case: a cube dropped onto the G20's open palm, then the fingers closing on a fixed command.

Both venvs import this module (numpy and the MuJoCo-free object spec only). The scene is the in-hand tasks' (the
left hand palm up on its fixed mount, a 6 cm, 100 g cube of friction 1.0: :mod:`dexwheel.tasks.in_hand.scene`),
built on MuJoCo from the robot description and on Isaac Lab (Newton + MuJoCo-Warp) from the same description's USD,
turned palm up, with the cube spawned from the same :class:`~dexwheel.tasks.in_hand.objects.ObjectSpec`. The program,
open loop, per 2 ms physics step: every joint's PD target at the open hand until :data:`CLOSE_S`, then at the half
fist (the SDK preset, mimic-completed, no slew) until :data:`END_S`; the cube starts 2 cm above the palm, turned
0.3 rad about its normal, where the grasp cache's objects are dropped (:data:`~dexwheel.tasks.in_hand.objects.DROP_POINT`: the
flexed fingertips reach it). Recorded every 20 ms: the cube's position and orientation, the hand's joints.

``python -m dexwheel.isaaclab.in_hand_cases mujoco OUT.npz`` (core venv) and ``python -m dexwheel.isaaclab.in_hand_cases
isaac OUT.npz`` (Isaac Lab venv) write the trajectories; :func:`compare` makes the table's rows.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np

from dexwheel.atomic import atomic_open
from dexwheel.isaaclab.scenarios import Row, task_cases_main
from dexwheel.tasks.in_hand.geometry import quat_angle
from dexwheel.tasks.in_hand.objects import DROP_POINT, PALM_NORMAL, PALM_UP, ObjectSpec
from dexwheel.tasks.in_hand.physics import LEGACY

HAND = "left"
OBJECT = ObjectSpec()  # the rotation task's training cube: 6 cm, 100 g, friction 1.0
TIMESTEP = 0.002  # the G20's physics step (s)
RECORD_EVERY = 10  # physics steps per recorded frame (20 ms: the in-hand tasks' control step)
CLOSE_S, END_S = 0.4, 1.5  # the fingers close at CLOSE_S (the cube has landed and settled); the case ends at END_S
DROP_M, YAW = 0.02, 0.3  # the cube's start: this far above resting on the palm, turned this much about the normal
NAME = "cube dropped on the open palm, then the half fist"
#: Tolerances, from the measured differences (the docs' table) with margin: the cube's height while it falls and
#: settles (Newton zeroes the geom margins, so the cube rests 1.1 mm lower and lands a step earlier), its height over
#: the grasp, the angle between its two orientations (the fingers push it a few mm on both, not alike), where it ends,
#: and the hand's joints at the end (the half fist does not reach the cube's faces hard enough to stop a joint).
TOLERANCES = {"height_drop": 5e-3, "height_grasp": 4e-3, "angle": 0.1, "final_position": 5e-3, "final_joints": 1e-3}


def start_pose() -> tuple[np.ndarray, np.ndarray]:
    """The cube's start: its centre (m, world) and orientation (w x y z)."""
    return DROP_POINT + PALM_NORMAL * (OBJECT.half_height + DROP_M), np.array(
        [math.cos(YAW / 2), 0.0, 0.0, math.sin(YAW / 2)]
    )


def targets() -> np.ndarray:
    """The PD targets of every physics step ``(steps, 21)`` (ALL_JOINTS order): open, then the half fist."""
    from dexwheel.control import G20SdkMapping
    from dexwheel.robots.g20 import GOAL_PRESETS

    sdk = G20SdkMapping(HAND)
    open_q, fist_q = (sdk(GOAL_PRESETS[name]).copy() for name in ("open", "half_fist"))
    steps, close = round(END_S / TIMESTEP), round(CLOSE_S / TIMESTEP)
    return np.where(np.arange(steps)[:, None] < close, open_q, fist_q)


def _empty(frames: int) -> dict[str, np.ndarray]:
    return {"pos": np.zeros((frames, 3)), "quat": np.zeros((frames, 4)), "q": np.zeros((frames, 21))}


def run_mujoco() -> tuple[dict[str, np.ndarray], dict]:
    import mujoco

    from dexwheel.robots.g20 import ALL_JOINTS
    from dexwheel.tasks.in_hand.scene import build_scene, object_addresses

    model = build_scene(HAND, OBJECT, physics=LEGACY)  # the spec's 2 ms, as Isaac Lab steps it
    data = mujoco.MjData(model)
    jid = [model.joint(j).id for j in ALL_JOINTS]
    qadr = model.jnt_qposadr[jid]
    act = [int(np.flatnonzero(model.actuator_trnid[:, 0] == j)[0]) for j in jid]
    oq, _ = object_addresses(model)
    program = targets()
    data.qpos[qadr] = program[0]
    data.qpos[oq : oq + 3], data.qpos[oq + 3 : oq + 7] = start_pose()
    mujoco.mj_forward(model, data)
    out = _empty(len(program) // RECORD_EVERY)
    for k, target in enumerate(program):
        data.ctrl[act] = target
        mujoco.mj_step(model, data)
        if (k + 1) % RECORD_EVERY == 0:
            f = k // RECORD_EVERY
            out["pos"][f], out["quat"][f], out["q"][f] = (
                data.qpos[oq : oq + 3],
                data.qpos[oq + 3 : oq + 7],
                data.qpos[qadr],
            )
    return out, {"backend": "mujoco", "mujoco": mujoco.__version__}


def run_isaac(device: str = "cpu") -> tuple[dict[str, np.ndarray], dict]:
    import isaaclab.sim as sim_utils
    import torch
    from isaaclab.assets import RigidObjectCfg
    from isaaclab.scene import InteractiveScene, InteractiveSceneCfg

    from dexwheel.isaaclab.isaac_replay import write_default_state
    from dexwheel.isaaclab.sim import simulation_cfg
    from dexwheel.isaaclab.tasks.hand_pose.config import shape_pairs
    from dexwheel.isaaclab.tasks.in_hand.scene import contact_model, hand_cfg, object_cfg
    from dexwheel.robots import get_robot
    from dexwheel.robots.g20 import ALL_JOINTS

    t0 = time.perf_counter()
    program = targets()
    desc = get_robot(f"g20_{HAND}")
    sim_cfg = simulation_cfg(desc, device, dt=TIMESTEP)
    sim_cfg.physics.solver_cfg.nconmax = shape_pairs(desc, free_shapes=1)  # every pair that can touch, the cube's too
    sim = sim_utils.SimulationContext(sim_cfg)
    scene_cfg = InteractiveSceneCfg(num_envs=1, env_spacing=1.0)
    w, x, y, z = PALM_UP
    contacts = contact_model(HAND, OBJECT, LEGACY)  # the MuJoCo half's: the spec's contacts, 2 ms, armature 0.01
    scene_cfg.robot = hand_cfg(HAND, LEGACY, contacts, "{ENV_REGEX_NS}/Robot",
                               dict(zip(ALL_JOINTS, program[0].tolist(), strict=True)), rot=(x, y, z, w))  # fmt: skip
    pos, quat = start_pose()
    scene_cfg.object = object_cfg(OBJECT, contacts, "{ENV_REGEX_NS}/Object",
                                  RigidObjectCfg.InitialStateCfg(pos=tuple(pos), rot=(*quat[1:], quat[0])))  # fmt: skip
    scene = InteractiveScene(scene_cfg)
    sim.reset()
    robot, cube = scene["robot"], scene["object"]
    write_default_state(robot, scene.env_origins)
    scene.reset()
    cols = [robot.joint_names.index(j) for j in ALL_JOINTS]
    t1 = time.perf_counter()
    out = _empty(len(program) // RECORD_EVERY)
    zero = torch.zeros(1, len(ALL_JOINTS), device=sim.device)
    for k, target in enumerate(program):
        q_target = torch.empty_like(zero)
        q_target[0, cols] = torch.as_tensor(target, dtype=torch.float32, device=sim.device)
        robot.actuators.target_command.set_position_index(value=q_target)
        robot.actuators.target_command.set_velocity_index(value=zero)
        scene.write_data_to_sim()
        sim.step(render=False)
        scene.update(sim.get_physics_dt())
        if (k + 1) % RECORD_EVERY == 0:
            f = k // RECORD_EVERY
            out["pos"][f] = (cube.data.root_link_pos_w.torch - scene.env_origins)[0].cpu().numpy()
            out["quat"][f] = cube.data.root_link_quat_w.torch[0].cpu().numpy()[[3, 0, 1, 2]]  # xyzw -> wxyz
            out["q"][f] = robot.data.joint_pos.torch[0, cols].cpu().numpy()
    meta = {"backend": "isaaclab", "device": device, "build_s": t1 - t0, "step_s": time.perf_counter() - t1}
    sim_utils.SimulationContext.clear_instance()
    return out, meta


def save(path: str, traces: dict[str, np.ndarray], meta: dict) -> None:
    with atomic_open(path) as f:  # a half killed mid-write leaves no truncated .npz in --workdir
        np.savez_compressed(f, meta=np.array(json.dumps(meta)), **traces)


def load(path: str) -> tuple[dict[str, np.ndarray], dict]:
    with np.load(path) as f:
        return {k: f[k] for k in ("pos", "quat", "q")}, json.loads(str(f["meta"]))


def compare(mj: dict[str, np.ndarray], il: dict[str, np.ndarray]) -> list[Row]:
    """The rows: the cube's height difference while it falls and settles and over the grasp, the angle between its
    two orientations over the case, its position and the joints at the end."""
    close = round(CLOSE_S / TIMESTEP) // RECORD_EVERY
    dz = np.abs(mj["pos"][:, 2] - il["pos"][:, 2])
    t = TOLERANCES
    robot = f"g20_{HAND} + cube"
    return [
        Row(robot, f"{NAME}: max |dz| of the cube, 0-{CLOSE_S:g} s (m)", float(dz[:close].max()), t["height_drop"],
            float(mj["pos"][close - 1, 2]), float(il["pos"][close - 1, 2])),
        Row(robot, f"{NAME}: max |dz| of the cube, {CLOSE_S:g}-{END_S:g} s (m)", float(dz[close:].max()),
            t["height_grasp"], float(mj["pos"][-1, 2]), float(il["pos"][-1, 2])),
        Row(robot, f"{NAME}: max angle between the cube's orientations (rad)",
            float(quat_angle(mj["quat"], il["quat"]).max()), t["angle"]),
        Row(robot, f"{NAME}: |dp| of the cube at {END_S:g} s (m)", float(np.linalg.norm(mj["pos"][-1] - il["pos"][-1])),
            t["final_position"]),
        Row(robot, f"{NAME}: max |dq| of the hand at {END_S:g} s (rad)", float(np.abs(mj["q"][-1] - il["q"][-1]).max()),
            t["final_joints"]),
    ]  # fmt: skip


if __name__ == "__main__":
    task_cases_main(__doc__, run_mujoco, run_isaac, save)
