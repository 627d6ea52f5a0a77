"""The settled stance: knee angles and base height a wheel-leg stance sags to under its own weight (MuJoCo).

A commanded A stance splays further under load (Solenopsis: 0.5 -> ~0.6 rad); the velocity task starts its
episodes there, rather than at the commanded angles, which spares every episode the same initial sag. Both
backends start there: the MuJoCo task computes it when it is built (:func:`settle`), the Isaac Lab task reads
it from :mod:`dexwheel.tasks.velocity.settled` (a committed table of this function's results; a config the
table lacks is computed by this module in the core venv, ``python -m dexwheel.tasks.velocity.settle``).

``python -m dexwheel.tasks.velocity.settle --write`` rewrites the table for every wheel-leg robot's default
config (atomically; it takes no other option); ``--robot R [--stance ...] [--knee-kp ...]`` prints one config's
result as JSON. Bad input is one line, ``error: <option>: ...``, exit status 2, before the settle runs.
"""

from __future__ import annotations

import json
import sys
import time

import mujoco
import numpy as np

from dexwheel.cli import Parser, refuse
from dexwheel.fields import ConfigFieldError
from dexwheel.robots import WHEEL_LEG_ROBOTS, get_robot
from dexwheel.robots.wheel_leg import KNEE_JOINTS, PARAMS, ROBOT_JOINT_ORDER, START_DROP_M
from dexwheel.sim.physics import write_initial_state
from dexwheel.tasks.velocity import settled
from dexwheel.tasks.velocity.config import WheelLegEnvCfg, make_cfg

SETTLE_S = 1.5


def settle(model: mujoco.MjModel, cfg: WheelLegEnvCfg) -> tuple[np.ndarray, float]:
    """Knee angles (KNEE_JOINTS order) and base height after ``SETTLE_S`` holding ``cfg``'s stance with its
    gains, dropped from 0.5 mm on the nominal ``model`` (its actuators are restored afterwards)."""
    stance = np.asarray(cfg.stance_pose, dtype=np.float64)
    knee_qadr = np.array([model.jnt_qposadr[model.joint(j).id] for j in KNEE_JOINTS])
    bias = model.actuator_biasprm.copy()
    for j, name in enumerate(ROBOT_JOINT_ORDER):
        knee = name in KNEE_JOINTS
        model.actuator_biasprm[j, 1] = -cfg.knee_kp if knee else 0.0
        model.actuator_biasprm[j, 2] = -(cfg.knee_kd if knee else cfg.wheel_kd)
    d = mujoco.MjData(model)
    qpos = np.zeros(model.nq)
    qpos[3] = 1.0
    qpos[knee_qadr] = stance
    qpos[2] = float(PARAMS[cfg.robot].leg_heights(stance).max()) + START_DROP_M
    write_initial_state(model, d, qpos, np.zeros(model.nv))
    for j, name in enumerate(ROBOT_JOINT_ORDER):
        d.ctrl[j] = cfg.knee_kp * stance[KNEE_JOINTS.index(name)] if name in KNEE_JOINTS else 0.0
    for _ in range(round(SETTLE_S / model.opt.timestep)):
        mujoco.mj_step(model, d)
    model.actuator_biasprm[:] = bias
    return d.qpos[knee_qadr].copy(), float(d.qpos[2])


def compute(cfg: WheelLegEnvCfg) -> dict:
    """:func:`settle` on ``cfg``'s robot model, as a table entry (:func:`dexwheel.tasks.velocity.settled.entry`)."""
    from dexwheel.tasks.velocity.scene import build_scene

    model, _ = build_scene(get_robot(cfg.robot))
    knees, height = settle(model, cfg)
    return settled.entry(cfg, knees, height)


def write_table() -> None:
    """Settle every robot's default config and replace the committed table with the results."""
    entries = []
    for i, robot in enumerate(WHEEL_LEG_ROBOTS, 1):
        start = time.perf_counter()
        entries.append(compute(make_cfg(robot=robot)))
        print(f"[{i}/{len(WHEEL_LEG_ROBOTS)}] {robot} ({time.perf_counter() - start:.1f} s)", flush=True)
    settled.write(entries)
    print(f"wrote {settled.TABLE}")


def main(argv: list[str] | None = None) -> int:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="rewrite the table for every robot's default config (alone)")
    p.add_argument("--robot", choices=WHEEL_LEG_ROBOTS)
    p.add_argument("--stance", type=float, nargs=4)
    p.add_argument("--knee-kp", type=float)
    p.add_argument("--knee-kd", type=float)
    p.add_argument("--wheel-kd", type=float)
    args = p.parse_args(argv)
    given = {"stance": args.stance, "knee_kp": args.knee_kp, "knee_kd": args.knee_kd, "wheel_kd": args.wheel_kd}
    if args.write:
        for field, value in {"robot": args.robot, **given}.items():
            if value is not None:
                option = "--" + field.replace("_", "-")
                refuse(f"{option}: --write rewrites {settled.TABLE.name} for every wheel-leg robot's default config "
                       f"and takes no {option} (without --write, --robot R [--stance ...] [--knee-kp ...] prints one "
                       "config's result)")  # fmt: skip
        write_table()
        return 0
    if args.robot is None:
        refuse(f"--robot: give --robot {{{','.join(WHEEL_LEG_ROBOTS)}}} (one config's result), or --write alone "
               f"(rewrite {settled.TABLE.name})")  # fmt: skip
    try:
        cfg = make_cfg(robot=args.robot, **{k: v for k, v in given.items() if v is not None})
    except ConfigFieldError as e:  # the config's own checks, named by the option that sets the field
        refuse(
            f"--{e.field.replace('_', '-')}: {e.detail.removeprefix(e.field + ': ')}" if e.field in given else str(e)
        )
    json.dump(compute(cfg), sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
