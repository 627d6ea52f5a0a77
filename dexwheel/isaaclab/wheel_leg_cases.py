"""Cross-backend wheel-leg task cases: the stance layer and domain randomisation off and on, as statistics.

Where :mod:`.scenarios` replays physics-step targets on the robot's model, these run the Solenopsis flat task
end to end on both backends with ``NUM_ENVS`` envs: wheels-only actions (``layers=("policy", "stance")``: the
stance layer holds the knees), the settled start without reset noise, pushes off. Every env gets the same
open-loop program: ``STAND_S`` with the wheels at 0, then ``DRIVE_S`` with every wheel at ``WHEEL_ACTION``.
Per env: the base height at the end of the stand and the distance driven.

* randomisation off: every env is the same robot, so the spread over envs is 0 on both backends and the
  means agree as the physics tables do;
* randomisation on (the task's ``domain_rand`` ranges: friction, base mass, CoM, link masses, gains), each
  backend draws its own values (MuJoCo from each env's seeded generator, Isaac Lab from torch's): the means
  and spreads over envs are compared as statistics (:func:`compare` says how), and the draws themselves
  (read from the privileged observations on both) must cover the same ranges.

``python -m dexwheel.isaaclab.wheel_leg_cases mujoco OUT.npz`` (core venv) and ``... isaac OUT.npz`` (Isaac Lab
venv) write the per-env results; :func:`compare` makes the table's rows.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np

from dexwheel.atomic import atomic_open
from dexwheel.isaaclab.scenarios import Row, pair, task_cases_main

ROBOT = "solenopsis"
NUM_ENVS = 32
SEED = 0
STAND_S, DRIVE_S = 1.0, 2.0
WHEEL_ACTION = -0.2  # 6 rad/s forward: about 0.6 m/s
MODES = {"off": False, "on": True}
#: the privileged draw columns, in the order both backends record them (offsets from nominal)
DRAWS = ("friction", "base_mass_add", "base_com_offset", "link_mass_scale")


def overrides(randomize: bool) -> dict:
    """The task keywords of a mode (``Solenopsis-v0`` and ``Dexwheel-Velocity-Flat-Solenopsis-v0`` take the same)."""
    return {"layers": ("policy", "stance"), "privileged_obs": True, "reset_noise_scale": 0.0,
            "domain_randomization": randomize, "domain_rand": {"push_interval_s": None}}  # fmt: skip


def program(dt: float) -> np.ndarray:
    """The wheel actions ``(steps, 4)``, float32, at control period ``dt``."""
    stand, drive = round(STAND_S / dt), round(DRIVE_S / dt)
    actions = np.zeros((stand + drive, 4), np.float32)
    actions[stand:] = WHEEL_ACTION
    return actions


def _summary(base_pos: np.ndarray, draws: np.ndarray, dt: float) -> dict[str, np.ndarray]:
    """Per env from the base positions ``(steps, N, 3)`` after each control step (relative to its start)."""
    stand = round(STAND_S / dt) - 1
    return {"height": base_pos[stand, :, 2], "distance": base_pos[-1, :, 0] - base_pos[stand, :, 0],
            "draws": draws}  # fmt: skip


def run_mujoco() -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    import mujoco

    from dexwheel.envs.wheel_leg_vector import WheelLegVectorEnv

    out = {}
    for mode, randomize in MODES.items():
        env = WheelLegVectorEnv(NUM_ENVS, robot=ROBOT, **overrides(randomize))
        obs, _ = env.reset(seed=SEED)
        cols = np.concatenate([np.arange(env.obs_slices[d].start, env.obs_slices[d].stop) for d in DRAWS])
        draws = obs[:, cols].astype(np.float64)
        start = env.task.physics.qpos[:, :3].copy()
        pos = []
        for a in program(env.task.dt):
            env.step(np.tile(a, (NUM_ENVS, 1)))
            pos.append(env.task.physics.qpos[:, :3] - start)
        out[mode] = _summary(np.asarray(pos), draws, env.task.dt)
        env.close()
    return out, {"backend": "mujoco", "mujoco": mujoco.__version__}


def run_isaac(device: str = "cpu") -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    import torch

    from dexwheel.isaaclab.episodes import open_task
    from dexwheel.isaaclab.tasks.velocity.observations import model_params

    out, meta = {}, {"backend": "isaaclab", "build_s": [], "step_s": []}
    for mode, randomize in MODES.items():
        t0 = time.perf_counter()
        env = open_task("Dexwheel-Velocity-Flat-Solenopsis-v0", NUM_ENVS, device, SEED, overrides(randomize))
        env.reset(seed=SEED)
        u = env.unwrapped
        robot = u.scene["robot"]
        draws = model_params(u).double().cpu().numpy()
        start = robot.data.root_pos_w.torch.double().cpu().numpy()
        t1 = time.perf_counter()
        pos = []
        for a in program(u.step_dt):
            env.step(torch.as_tensor(a, device=device).expand(NUM_ENVS, -1))
            pos.append(robot.data.root_pos_w.torch.double().cpu().numpy() - start)
        out[mode] = _summary(np.asarray(pos), draws, u.step_dt)
        meta["build_s"].append(t1 - t0)
        meta["step_s"].append(time.perf_counter() - t1)
        env.close()
    return out, meta


def save(path: str, results: dict[str, dict[str, np.ndarray]], meta: dict) -> None:
    arrays = {f"{mode}/{k}": v for mode, r in results.items() for k, v in r.items()}
    with atomic_open(path) as f:  # a half killed mid-write leaves no truncated .npz in --workdir
        np.savez_compressed(f, meta=np.array(json.dumps(meta)), **arrays)


def load(path: str) -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    with np.load(path) as f:
        results: dict[str, dict[str, np.ndarray]] = {}
        for key in f.files:
            if key != "meta":
                mode, name = key.split("/")
                results.setdefault(mode, {})[name] = f[key]
        return results, json.loads(str(f["meta"]))


#: Randomisation off: as the physics tables, with the task in between (height 1 mm, distance 1 %),
#: and no spread over envs beyond float32 rounding (Isaac Lab keeps each env at its own origin, metres apart: 1e-5 m
#: measured, 1e-4 allowed).
OFF_HEIGHT_TOL_M = 1e-3
OFF_DISTANCE_TOL = 0.01
OFF_SPREAD_TOL_M = 1e-4
#: Randomisation on: the means within Z_MAX standard errors of their difference plus the off mode's
#: tolerance (the backends' own difference), the spreads within a factor SPREAD_RATIO of each other (a sample
#: standard deviation of 32 varies by about 1/sqrt(64) = 12.5 %: 1.6 is about 4 of those for the ratio).
Z_MAX = 4.0
SPREAD_RATIO = 1.6


def _mean_row(quantity: str, m: np.ndarray, i: np.ndarray, allowance: float) -> Row:
    """``|mean_i - mean_m|`` against ``Z_MAX`` standard errors of the difference plus ``allowance``."""
    se = math.sqrt(m.var(ddof=1) / len(m) + i.var(ddof=1) / len(i))
    return Row(f"{ROBOT} task", quantity, float(abs(i.mean() - m.mean())), Z_MAX * se + allowance,
               float(m.mean()), float(i.mean()))  # fmt: skip


def _spread_row(quantity: str, m: np.ndarray, i: np.ndarray) -> Row:
    """``|log(std_i / std_m)|`` against ``log(SPREAD_RATIO)``."""
    sm, si = float(m.std(ddof=1)), float(i.std(ddof=1))
    return Row(f"{ROBOT} task", quantity, abs(math.log(si / sm)), math.log(SPREAD_RATIO), sm, si)


def compare(mj: dict[str, dict[str, np.ndarray]], il: dict[str, dict[str, np.ndarray]]) -> list[Row]:
    """The rows: per mode, the height and distance means (and spreads) over the envs, and the draws' ranges."""
    name = f"{NUM_ENVS} envs, stance layer, wheels at {WHEEL_ACTION:g}"
    off_m, off_i = mj["off"], il["off"]
    rows = [
        pair(f"{ROBOT} task", f"randomisation off, {name}: base height change over the {STAND_S:g} s stand, mean (m)",
             off_m["height"].mean(), off_i["height"].mean(), OFF_HEIGHT_TOL_M),
        pair(f"{ROBOT} task", f"randomisation off, {name}: distance in {DRIVE_S:g} s, mean (relative)",
             off_m["distance"].mean(), off_i["distance"].mean(), OFF_DISTANCE_TOL, relative=True),
        Row(f"{ROBOT} task", "randomisation off: largest spread over envs, either backend (m)",
            max(float(np.ptp(r[k])) for r in (off_m, off_i) for k in ("height", "distance")), OFF_SPREAD_TOL_M),
    ]  # fmt: skip
    on_m, on_i = mj["on"], il["on"]
    allowance = OFF_DISTANCE_TOL * abs(float(off_m["distance"].mean()))
    rows += [
        _mean_row(f"randomisation on, {name}: base height change over the {STAND_S:g} s stand, mean (m)", on_m["height"],
                  on_i["height"], OFF_HEIGHT_TOL_M),
        _spread_row("randomisation on: base height change, std over envs (|log ratio|)", on_m["height"], on_i["height"]),
        _mean_row(f"randomisation on, {name}: distance in {DRIVE_S:g} s, mean (m)", on_m["distance"],
                  on_i["distance"], allowance),
        _spread_row("randomisation on: distance, std over envs (|log ratio|)", on_m["distance"], on_i["distance"]),
    ]  # fmt: skip
    for k, draw in ((0, "friction"), (1, "base mass added"), (2, "base CoM x offset"), (5, "fl knee mass factor")):
        rows.append(_mean_row(f"randomisation on: draw of {draw}, mean (offset from nominal)", on_m["draws"][:, k],
                              on_i["draws"][:, k], 0.0))  # fmt: skip
    return rows


if __name__ == "__main__":
    task_cases_main(__doc__, run_mujoco, run_isaac, save)
