"""Cross-backend dynamics: one initial state and one open-loop command program per case, run on both backends.

Both venvs import this module (numpy and the robot descriptions only). The MuJoCo half
(:mod:`dexwheel.isaaclab.mujoco_reference`, core venv, mujoco 4) builds the programs, runs them and writes
programs and trajectories to one ``.npz``; the Isaac half (:mod:`dexwheel.isaaclab.isaac_replay`) replays
the same programs; :func:`compare` turns the two into the table ``scripts/cross_backend.py`` prints.

Cases (every program starts at rest, identity orientation, on flat ground for the wheel-leg robots):

* wheel-leg robots, from the task's default stance 0.5 mm above the ground: ``SETTLE_S`` holding the
  stance, then ``RUN_S`` of ``stand`` (wheels at 0), ``drive`` (all wheels at ``DRIVE_WHEEL_VEL``, which
  rolls forward) or ``turn`` (left wheels at ``DRIVE_WHEEL_VEL``, right at its negative: a skid turn);
* hands, fixed base: from the ``open`` preset, the ``half_fist`` preset's PD targets for ``RUN_S``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dexwheel.atomic import atomic_open
from dexwheel.robots import WHEEL_LEG_ROBOTS, get_robot
from dexwheel.robots.wheel_leg import KNEE_JOINTS, PARAMS, START_DROP_M
from dexwheel.terrain import SubTerrainCfg, TerrainCfg, generate

GROUPS: dict[str, tuple[str, ...]] = {"wheel_leg": WHEEL_LEG_ROBOTS, "hand": ("g20_left", "g20_right"),
                                      "terrain": ("solenopsis",)}  # fmt: skip
SETTLE_S = 1.0
RUN_S = 2.0
DRIVE_WHEEL_VEL = -5.0  # rad/s; the wheel axis is (0, -1, 0), so negative rolls forward
HAND_START, HAND_GOAL = "open", "half_fist"
HAND_POSE_AT_S = 1.0
SATURATION_S = 0.3  # the G20's 8 N m limit saturates in the first 0.1-0.3 s of a preset move
#: The terrain case: from the middle of a 2 m pit STEP_M deep (one generated ``pit`` tile, the same
#: description on both backends), after SETTLE_S the wheels at STEP_WHEEL_VEL for STEP_RUN_S: the front
#: wheels climb its edge 1 m ahead ~0.7 s into the run, the rear ones ~1.1 s in, and the base ends ~2.3 m out
#: (the terrain's edge is at 3 m).
STEP_M = 0.05
STEP_RUN_S = 1.5
STEP_WHEEL_VEL = -20.0  # rad/s: at -5 the wheels (damping 0.6 alone) stall at the edge
STEP_TERRAIN = TerrainCfg(seed=0, size=(4.0, 4.0), border_width=1.0, num_rows=1, num_cols=1, sub_terrains={
    "step": SubTerrainCfg("pit", 1.0, height_range=(STEP_M, STEP_M), platform_width=2.0)})  # fmt: skip
#: Fields of a trajectory, each (steps, ...) sampled after every physics step.
FIELDS = ("base_pos", "base_quat", "q", "qd")


@dataclass(frozen=True)
class Program:
    """Open-loop joint targets per physics step, in the description's joint order."""

    robot: str
    case: str
    dt: float
    q0: np.ndarray  # (nj,)
    base_pos: np.ndarray  # (3,) start of a floating base (identity orientation); zeros for a fixed base
    pos_target: np.ndarray  # (steps, nj)
    vel_target: np.ndarray  # (steps, nj)
    run_start: int  # first step of the compared run (after the settle)

    @property
    def key(self) -> str:
        return f"{self.robot}/{self.case}"

    @property
    def steps(self) -> int:
        return len(self.pos_target)


def start_height(robot: str, knees: np.ndarray) -> float:
    """Base-origin height that puts the lowest wheel on the ground (the arms pitch about -y)."""
    return float(PARAMS[robot].leg_heights(np.asarray(knees, dtype=np.float64)).max())


def _wheel_leg_programs(robot: str) -> list[Program]:
    from dexwheel.tasks.velocity.config import WheelLegEnvCfg

    desc = get_robot(robot)
    names = desc.joint_names
    knees = np.array(WheelLegEnvCfg(robot=robot).stance_pose)  # the task's default stance
    stance = dict(zip(KNEE_JOINTS, knees, strict=True))
    q0 = np.array([stance.get(j, 0.0) for j in names])
    height = start_height(robot, knees) + START_DROP_M
    settle, run = round(SETTLE_S / desc.timestep), round(RUN_S / desc.timestep)
    wheel_vel = {
        "stand": {},
        "drive": {j: DRIVE_WHEEL_VEL for j in names if "wheel" in j},
        # left wheels (fl_, hl_) forward, right ones backward
        "turn": {j: DRIVE_WHEEL_VEL if j[1] == "l" else -DRIVE_WHEEL_VEL for j in names if "wheel" in j},
    }
    programs = []
    for case, vel in wheel_vel.items():
        vel_target = np.zeros((settle + run, len(names)))
        vel_target[settle:] = [vel.get(j, 0.0) for j in names]
        programs.append(Program(robot, case, desc.timestep, q0, np.array([0.0, 0.0, height]),
                                np.tile(q0, (settle + run, 1)), vel_target, settle))  # fmt: skip
    return programs


def group_of(prog: Program) -> str:
    """The group whose scene replays ``prog`` (a robot's terrain case runs in the terrain's scene)."""
    if prog.case == "step":
        return "terrain"
    return next(g for g, robots in GROUPS.items() if g != "terrain" and prog.robot in robots)


def terrain_of(prog: Program) -> TerrainCfg | None:
    """The terrain a program runs on (None: the flat ground); each backend builds it from ``generate`` of it."""
    return STEP_TERRAIN if prog.case == "step" else None


def _terrain_programs(robot: str) -> list[Program]:
    from dexwheel.tasks.velocity.config import WheelLegEnvCfg

    desc = get_robot(robot)
    names = desc.joint_names
    knees = np.array(WheelLegEnvCfg(robot=robot).stance_pose)
    q0 = np.array([dict(zip(KNEE_JOINTS, knees, strict=True)).get(j, 0.0) for j in names])
    floor = float(generate(STEP_TERRAIN).origins[0, 0, 2])  # the pit's floor, -STEP_M
    settle, run = round(SETTLE_S / desc.timestep), round(STEP_RUN_S / desc.timestep)
    vel_target = np.zeros((settle + run, len(names)))
    vel_target[settle:] = [STEP_WHEEL_VEL if "wheel" in j else 0.0 for j in names]
    base = np.array([0.0, 0.0, floor + start_height(robot, knees) + START_DROP_M])
    return [Program(robot, "step", desc.timestep, q0, base, np.tile(q0, (settle + run, 1)), vel_target, settle)]


def _hand_programs(robot: str) -> list[Program]:
    # the presets' joint targets through the project's SDK mapping (core venv only: dexwheel.control)
    from dexwheel.control.g20_sdk import G20SdkMapping
    from dexwheel.robots.g20 import ALL_JOINTS, G20_HALF_FIST_CMD, G20_OPEN_CMD

    desc = get_robot(robot)
    if tuple(desc.joint_names) != ALL_JOINTS:
        raise AssertionError(f"{robot}: joint order {desc.joint_names} is not the SDK mapping's {ALL_JOINTS}")
    presets = {"open": G20_OPEN_CMD, "half_fist": G20_HALF_FIST_CMD}
    sdk = G20SdkMapping("left" if robot.endswith("left") else "right")
    start = sdk.to_joint_positions(presets[HAND_START]).copy()
    goal = sdk.to_joint_positions(presets[HAND_GOAL]).copy()
    run = round(RUN_S / desc.timestep)
    return [Program(robot, HAND_GOAL, desc.timestep, start, np.zeros(3), np.tile(goal, (run, 1)),
                    np.zeros((run, len(goal))), 0)]  # fmt: skip


def programs(group: str) -> list[Program]:
    """Every program of a group (``wheel_leg`` or ``hand``); the hands' need the core venv."""
    make = {"wheel_leg": _wheel_leg_programs, "hand": _hand_programs, "terrain": _terrain_programs}[group]
    return [prog for robot in GROUPS[group] for prog in make(robot)]


# -- files: programs and trajectories travel between the venvs as one npz -------------------------
def save(path: str, progs: list[Program], trajectories: Mapping[str, Mapping[str, np.ndarray]], meta: dict) -> None:
    arrays: dict[str, np.ndarray] = {}
    for prog in progs:
        for name in ("q0", "base_pos", "pos_target", "vel_target"):
            arrays[f"{prog.key}/program/{name}"] = getattr(prog, name)
        arrays[f"{prog.key}/program/scalars"] = np.array([prog.dt, prog.run_start])
        for name in FIELDS:
            if prog.key in trajectories:
                arrays[f"{prog.key}/{name}"] = trajectories[prog.key][name]
    arrays["meta"] = np.array(json.dumps(meta))
    with atomic_open(path) as f:  # a half killed mid-write leaves no truncated .npz in --workdir
        np.savez_compressed(f, **arrays)


def load(path: str) -> tuple[list[Program], dict[str, dict[str, np.ndarray]], dict]:
    with np.load(path) as f:
        data = {k: f[k] for k in f.files}
    meta = json.loads(str(data.pop("meta")))
    keys = sorted({k.rsplit("/program/", 1)[0] for k in data if "/program/" in k})
    progs, trajectories = [], {}
    for key in keys:
        robot, case = key.split("/")
        dt, run_start = data[f"{key}/program/scalars"]
        progs.append(Program(robot, case, float(dt), data[f"{key}/program/q0"], data[f"{key}/program/base_pos"],
                             data[f"{key}/program/pos_target"], data[f"{key}/program/vel_target"], int(run_start)))  # fmt: skip
        if f"{key}/q" in data:
            trajectories[key] = {name: data[f"{key}/{name}"] for name in FIELDS}
    return progs, trajectories, meta


# -- the comparison ------------------------------------------------------------------------------
def yaw(quat_wxyz: np.ndarray) -> np.ndarray:
    """Heading about world z, unwrapped over the trajectory."""
    w, x, y, z = np.moveaxis(quat_wxyz, -1, 0)
    return np.unwrap(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


@dataclass(frozen=True)
class Row:
    """One line of the table: a quantity on both backends, or a difference alone (``mujoco`` None)."""

    robot: str
    quantity: str
    diff: float  # |isaac - mujoco|, relative to |mujoco| when ``relative``
    tol: float = math.inf  # inf: reported, not asserted
    mujoco: float | None = None
    isaac: float | None = None
    relative: bool = False

    @property
    def ok(self) -> bool:
        return bool(self.diff <= self.tol)


def pair(robot: str, quantity: str, mujoco: float, isaac: float, tol: float, relative: bool = False) -> Row:
    d = abs(isaac - mujoco) / (abs(mujoco) if relative else 1.0)
    return Row(robot, quantity, float(d), tol, float(mujoco), float(isaac), relative)


def _max_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)))


def compare(progs: list[Program], mj: Mapping[str, Mapping[str, np.ndarray]],
            il: Mapping[str, Mapping[str, np.ndarray]]) -> list[Row]:  # fmt: skip
    """The table: per robot its headline quantities, then the largest joint differences over the run."""
    rows: list[Row] = []
    by_robot: dict[str, dict[str, Program]] = {}
    for prog in progs:
        if prog.case == "step":
            rows += _step_rows(prog, mj[prog.key], il[prog.key])
        else:
            by_robot.setdefault(prog.robot, {})[prog.case] = prog
    for robot, cases in by_robot.items():
        if "stand" in cases:
            p = cases["stand"]
            rows.append(pair(robot, "settled stance height (m)", mj[p.key]["base_pos"][-1, 2],
                              il[p.key]["base_pos"][-1, 2], 1e-4))  # fmt: skip
            p = cases["drive"]
            m, i, s = mj[p.key]["base_pos"], il[p.key]["base_pos"], p.run_start - 1
            rows.append(pair(robot, f"distance, wheels at {DRIVE_WHEEL_VEL:g} rad/s for {RUN_S:g} s (m)",
                              m[-1, 0] - m[s, 0], i[-1, 0] - i[s, 0], 0.005, relative=True))  # fmt: skip
            p = cases["turn"]
            m, i, s = yaw(mj[p.key]["base_quat"]), yaw(il[p.key]["base_quat"]), p.run_start - 1
            rows.append(pair(robot, f"yaw, skid turn for {RUN_S:g} s (rad)", m[-1] - m[s], i[-1] - i[s], 0.02,
                              relative=True))  # fmt: skip
        else:
            p = cases[HAND_GOAL]
            m, i = mj[p.key]["q"], il[p.key]["q"]
            k, n = round(HAND_POSE_AT_S / p.dt) - 1, round(SATURATION_S / p.dt)
            rows.append(Row(robot, f"{HAND_GOAL} pose at {HAND_POSE_AT_S:g} s, max |dq| (rad)", _max_abs(m[k], i[k]),
                            1e-3))  # fmt: skip
            rows.append(Row(robot, f"max |dq| in the first {SATURATION_S:g} s, 8 N m saturating (rad)",
                            _max_abs(m[:n], i[:n])))  # fmt: skip
        progs_r = list(cases.values())
        rows.append(
            Row(
                robot,
                f"max |dq| over the {RUN_S:g} s run (rad)",
                max(_max_abs(mj[p.key]["q"][p.run_start :], il[p.key]["q"][p.run_start :]) for p in progs_r),
            )
        )
        rows.append(
            Row(
                robot,
                f"max |dqd| over the {RUN_S:g} s run (rad/s)",
                max(_max_abs(mj[p.key]["qd"][p.run_start :], il[p.key]["qd"][p.run_start :]) for p in progs_r),
            )
        )
    return rows


def pitch(quat_wxyz: np.ndarray) -> np.ndarray:
    """Rotation about the base's y axis (rad; positive: nose down, as MuJoCo's right-handed y)."""
    w, x, y, z = np.moveaxis(quat_wxyz, -1, 0)
    return np.arcsin(np.clip(2.0 * (w * y - z * x), -1.0, 1.0))


#: The step case's tolerances. Driving up to the edge (the first STEP_APPROACH_S of the run) both backends
#: agree as on flat ground; the front wheels' impact on the box edge at 2 m/s is where they part most (MuJoCo
#: 4.0.1's cylinder-edge contacts against MuJoCo-Warp's: 2.8 mm and 0.011 rad at worst; under MuJoCo 4.0.0, which
#: held a wheel at an edge by two contacts, 0.026 m and 0.13 rad), and they meet again on top: the height gained
#: within 1 mm.
STEP_APPROACH_S = 0.5
STEP_APPROACH_HEIGHT_TOL_M = 1e-3
STEP_APPROACH_PITCH_TOL_RAD = 2e-3
STEP_HEIGHT_TOL_M = 0.01
STEP_PITCH_TOL_RAD = 0.04
STEP_GAIN_TOL_M = 1e-3


@dataclass(frozen=True)
class StepTraces:
    """The step case's run on both backends, after every physics step from the settle's last on (t = 0)."""

    t: np.ndarray  # s
    height: dict[str, np.ndarray]  # backend -> base height (m)
    pitch: dict[str, np.ndarray]  # backend -> base pitch (rad)


def step_traces(p: Program, m: Mapping[str, np.ndarray], i: Mapping[str, np.ndarray]) -> StepTraces:
    s = p.run_start - 1
    return StepTraces(np.arange(len(m["base_pos"]) - s) * p.dt,
                      {"MuJoCo": m["base_pos"][s:, 2], "Isaac Lab": i["base_pos"][s:, 2]},
                      {"MuJoCo": pitch(m["base_quat"][s:]), "Isaac Lab": pitch(i["base_quat"][s:])})  # fmt: skip


def plot_step(traces: StepTraces, path: Path) -> Path:
    """The step case's base height and pitch over time, both backends overlaid, the approach shaded (PNG)."""
    from dexwheel.rl.curves import plot_over_time

    approach = (0.0, STEP_APPROACH_S, f"approach: within {STEP_APPROACH_HEIGHT_TOL_M:g} m, "
                                      f"{STEP_APPROACH_PITCH_TOL_RAD:g} rad")  # fmt: skip
    return plot_over_time(path, traces.t, {"base height (m)": traces.height, "pitch (rad, + nose down)": traces.pitch},
                          f"solenopsis onto a {STEP_M:g} m step, wheels at {STEP_WHEEL_VEL:g} rad/s, open loop",
                          approach)  # fmt: skip


def _step_rows(p: Program, m: Mapping[str, np.ndarray], i: Mapping[str, np.ndarray]) -> list[Row]:
    a = round(STEP_APPROACH_S / p.dt)
    traces = step_traces(p, m, i)
    (mz, iz), (mp, ip) = traces.height.values(), traces.pitch.values()
    s = p.run_start - 1
    step = f"{STEP_M:g} m step"
    return [
        Row(
            p.robot,
            f"{step}: max |d base height| driving up to it, {STEP_APPROACH_S:g} s (m)",
            _max_abs(mz[:a], iz[:a]),
            STEP_APPROACH_HEIGHT_TOL_M,
        ),  # fmt: skip
        Row(
            p.robot,
            f"{step}: max |d pitch| driving up to it, {STEP_APPROACH_S:g} s (rad)",
            _max_abs(mp[:a], ip[:a]),
            STEP_APPROACH_PITCH_TOL_RAD,
        ),  # fmt: skip
        Row(
            p.robot,
            f"{step}: max |d base height| over the {STEP_RUN_S:g} s run (m)",
            _max_abs(mz, iz),
            STEP_HEIGHT_TOL_M,
        ),  # fmt: skip
        Row(
            p.robot, f"{step}: max |d pitch| over the {STEP_RUN_S:g} s run (rad)", _max_abs(mp, ip), STEP_PITCH_TOL_RAD
        ),  # fmt: skip
        pair(p.robot, f"{step}: height gained (m)", mz[-1] - mz[0], iz[-1] - iz[0], STEP_GAIN_TOL_M),
        Row(p.robot, f"{step}: max |d base x| over the run (m)", _max_abs(m["base_pos"][s:, 0], i["base_pos"][s:, 0])),
    ]


def format_table(rows: list[Row]) -> str:
    """Markdown, side by side; a difference-only row leaves the backend columns empty."""
    lines = ["| robot | quantity | MuJoCo 4 | Isaac Lab (Newton, MJWarp) | difference | tolerance |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        tol = "" if math.isinf(r.tol) else (f"{r.tol:.1%}" if r.relative else f"{r.tol:g}")
        diff = f"{r.diff:.3%}" if r.relative else f"{r.diff:.2e}"
        m = "" if r.mujoco is None else f"{r.mujoco:.6f}"
        i = "" if r.isaac is None else f"{r.isaac:.6f}"
        lines.append(f"| {r.robot} | {r.quantity} | {m} | {i} | {diff} | {tol} |")
    return "\n".join(lines)


def task_cases_main(doc: str, run_mujoco: Callable[[], tuple], run_isaac: Callable[[str], tuple],
                    save: Callable[[str, object, dict], None]) -> None:  # fmt: skip
    """The command line of a task-case module (:mod:`.hand_cases`, :mod:`.wheel_leg_cases`): ``mujoco|isaac OUT.npz
    [--device D]`` runs that half and saves its results."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("backend", choices=("mujoco", "isaac"))
    parser.add_argument("out")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    results, meta = run_mujoco() if args.backend == "mujoco" else run_isaac(args.device)
    save(args.out, results, meta)
