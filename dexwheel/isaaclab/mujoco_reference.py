"""The MuJoCo half of the cross-backend comparison: runs in the core venv (mujoco 4), not in Isaac Lab's.

python -m dexwheel.isaaclab.mujoco_reference OUT.npz [--group wheel_leg|hand ...]

builds the programs (:mod:`dexwheel.isaaclab.scenarios`), runs each on the robot description's own MuJoCo
model (what ``assets/<robot>/`` holds: position actuators with kv, velocity actuators on the wheels) and
writes programs and trajectories to ``OUT.npz`` for the Isaac half to replay.
"""

from __future__ import annotations

import argparse

import mujoco
import numpy as np

from dexwheel.isaaclab import scenarios
from dexwheel.robots import get_robot
from dexwheel.robots.mjcf import build_spec, compile_model
from dexwheel.terrain import generate
from dexwheel.terrain.mujoco import add_terrain


def run(prog: scenarios.Program) -> dict[str, np.ndarray]:
    desc = get_robot(prog.robot)
    terrain = scenarios.terrain_of(prog)
    if terrain is None:
        model = compile_model(desc, ground=desc.floating_base)
    else:  # the terrain's geoms in place of the floor, as the rough task's model
        spec = build_spec(desc)
        add_terrain(spec, generate(terrain))
        model = spec.compile()
    data = mujoco.MjData(model)
    jid = [model.joint(j).id for j in desc.joint_names]
    qadr, dadr = model.jnt_qposadr[jid], model.jnt_dofadr[jid]
    act = [int(np.flatnonzero(model.actuator_trnid[:, 0] == j)[0]) for j in jid]
    kind = {a.joint: a.kind for a in desc.actuators}
    velocity = np.array([kind[j] == "velocity" for j in desc.joint_names])  # these take the velocity target
    if desc.floating_base:
        data.qpos[:3] = prog.base_pos
        data.qpos[3:7] = (1.0, 0.0, 0.0, 0.0)
    data.qpos[qadr] = prog.q0
    mujoco.mj_forward(model, data)
    out = {"base_pos": np.zeros((prog.steps, 3)), "base_quat": np.zeros((prog.steps, 4)),
           "q": np.zeros((prog.steps, len(jid))), "qd": np.zeros((prog.steps, len(jid)))}  # fmt: skip
    for k in range(prog.steps):
        data.ctrl[act] = np.where(velocity, prog.vel_target[k], prog.pos_target[k])
        mujoco.mj_step(model, data)
        if desc.floating_base:
            out["base_pos"][k], out["base_quat"][k] = data.qpos[:3], data.qpos[3:7]
        else:
            out["base_quat"][k] = (1.0, 0.0, 0.0, 0.0)
        out["q"][k], out["qd"][k] = data.qpos[qadr], data.qvel[dadr]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="the .npz to write")
    parser.add_argument("--group", action="append", choices=list(scenarios.GROUPS), help="default: all")
    args = parser.parse_args()
    progs = [p for g in args.group or list(scenarios.GROUPS) for p in scenarios.programs(g)]
    trajectories = {p.key: run(p) for p in progs}
    scenarios.save(args.out, progs, trajectories, {"backend": "mujoco", "mujoco": mujoco.__version__})


if __name__ == "__main__":
    main()
