"""Cross-backend G20 task cases: the same config and action program on the MuJoCo env and the Isaac Lab task.

Both venvs import this module (numpy and the MuJoCo-free task config only). Where :mod:`.scenarios` replays
physics-step joint targets, these run the tasks end to end: the action mapping (``sdk255``, ``normalized``,
``nominal``, ``delta``), the composer layers, the slew and the drive (hard-write or PD), from the open hand
without reset noise, and compare the 21 joint positions after every control step.

``python -m dexwheel.isaaclab.hand_cases mujoco OUT.npz`` (core venv, ``G20Hand-v0``) and
``python -m dexwheel.isaaclab.hand_cases isaac OUT.npz`` (Isaac Lab venv, ``Dexwheel-HandPose-G20Left-v0``, one env per
case, in order) write the trajectories; :func:`compare` makes the table's rows.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

import numpy as np

from dexwheel.atomic import atomic_open
from dexwheel.isaaclab.scenarios import Row, task_cases_main

HAND = "left"
_HW = {"drive": "hard_write", "collision": {"projection": False}}


@dataclass(frozen=True)
class Case:
    """A config (``G20Hand-v0`` keywords), the goal presets it commands in turn (each for ``steps`` control
    steps) and what is compared: the largest joint difference over every step (``at_s`` None) or at one time."""

    name: str
    config: dict
    presets: tuple[str, ...] = ("half_fist",)
    steps: int = 25
    tol: float = math.inf
    at_s: float | None = None
    delta: float = 0.5  # action="delta": the constant action
    notes: dict = field(default_factory=dict)


#: Hard-write poses are written, so the backends agree to float32 (Isaac Lab's joint state) where no contact
#: pushes; the PD case is dynamics (tolerance as the PD rows of :mod:`.scenarios`).
CASES = (
    Case("hard_write, normalized, slew 5 rad/s: open -> half fist -> open", {**_HW, "actions": "normalized"},
         ("half_fist", "open"), 25, 1e-6),
    Case("hard_write, sdk255, slew 0 (track_test): open -> half fist -> open", {"drive": {"kind": "hard_write",
         "track_test": True}, "actions": "sdk255"}, ("half_fist", "open"), 10, 1e-6),
    Case("hard_write, nominal, hold thumb open: open -> half fist", {**_HW, "actions": "nominal",
         "composer": {"layers": ("policy", "hold"), "hold_joints": "thumb"}}, ("half_fist",), 25, 1e-6),
    Case("hard_write, delta 0.05 rad at +0.5: 30 steps", {**_HW, "actions": "delta"}, ("open",), 30, 1e-6),
    Case("pd, sdk255: open -> half fist, pose at 1 s", {"drive": "pd", "actions": "sdk255"}, ("half_fist",), 50, 1e-3,
         at_s=1.0),
    Case("hard_write, normalized: open -> full fist (thumb into the palm: contact)", {**_HW, "actions": "normalized"},
         ("full_fist",), 25),
)  # fmt: skip


def actions(case: Case) -> np.ndarray:
    """The case's action program ``(steps, action_dim)``, float32 (what a policy sends): each preset's action
    through the MuJoCo task's own :class:`~dexwheel.tasks.hand.action.G20ActionMap`."""
    from dexwheel.control.g20_sdk import G20_MIMIC
    from dexwheel.robots.g20 import GOAL_PRESETS
    from dexwheel.tasks.hand.action import G20ActionMap
    from dexwheel.tasks.hand_pose.config import make_cfg

    cfg = make_cfg(hand=HAND, **case.config)
    a = cfg.actions
    amap = G20ActionMap(a.kind, HAND, G20_MIMIC, 1, out_of_range=a.out_of_range, delta_scale=a.delta_scale)
    rows = []
    for name in case.presets:
        if amap.kind == "sdk255":
            a = np.asarray(GOAL_PRESETS[name], dtype=np.float64)
        elif amap.kind == "delta":
            a = np.full(amap.dim, case.delta)
        else:
            a = amap.hold_action(amap.preset(name))
        rows += [a] * case.steps
    return np.asarray(rows, dtype=np.float32)


def run_mujoco() -> tuple[dict[str, np.ndarray], dict]:
    import gymnasium as gym
    import mujoco

    import dexwheel  # noqa: F401

    out = {}
    for case in CASES:
        env = gym.make("G20Hand-v0", hand=HAND, **case.config)
        env.reset(seed=0, options={"init_qpos": "open"})
        qs = []
        for a in actions(case):
            env.step(a)
            qs.append(env.unwrapped.task.qpos[0].copy())
        out[case.name] = np.asarray(qs)
        env.close()
    return out, {"backend": "mujoco", "mujoco": mujoco.__version__}


def run_isaac(device: str = "cpu") -> tuple[dict[str, np.ndarray], dict]:
    import torch

    from dexwheel.isaaclab.episodes import open_task
    from dexwheel.robots.g20 import ALL_JOINTS

    out, meta = {}, {"backend": "isaaclab", "build_s": [], "step_s": []}
    for case in CASES:
        t0 = time.perf_counter()
        env = open_task("Dexwheel-HandPose-G20Left-v0", 1, device, 0, {**case.config, "reset_noise_scale": 0.0})
        env.reset(seed=0)
        robot = env.unwrapped.scene["robot"]
        cols = [robot.joint_names.index(j) for j in ALL_JOINTS]
        t1 = time.perf_counter()
        qs = []
        for a in actions(case):
            env.step(torch.as_tensor(a, device=device)[None])
            qs.append(robot.data.joint_pos.torch[0, cols].double().cpu().numpy())
        out[case.name] = np.asarray(qs)
        meta["build_s"].append(t1 - t0)
        meta["step_s"].append(time.perf_counter() - t1)
        env.close()
    return out, meta


def save(path: str, trajectories: dict[str, np.ndarray], meta: dict) -> None:
    names = list(trajectories)
    with atomic_open(path) as f:  # a half killed mid-write leaves no truncated .npz in --workdir
        np.savez_compressed(f, names=np.array(json.dumps(names)), meta=np.array(json.dumps(meta)),
                            **{f"q{i}": trajectories[n] for i, n in enumerate(names)})  # fmt: skip


def load(path: str) -> tuple[dict[str, np.ndarray], dict]:
    with np.load(path) as f:
        names = json.loads(str(f["names"]))
        return {n: f[f"q{i}"] for i, n in enumerate(names)}, json.loads(str(f["meta"]))


def compare(mj: dict[str, np.ndarray], il: dict[str, np.ndarray], dt: float = 0.02) -> list[Row]:
    """One row per case: the largest joint difference (rad) over every control step, or at ``at_s``."""
    rows = []
    for case in CASES:
        m, i = mj[case.name], il[case.name]
        if case.at_s is not None:
            k = round(case.at_s / dt) - 1
            diff, what = float(np.max(np.abs(m[k] - i[k]))), f"{case.name}, max |dq| (rad)"
        else:
            diff, what = float(np.max(np.abs(m - i))), f"{case.name}, max |dq| over every step (rad)"
        rows.append(Row(f"g20_{HAND} task", what, diff, case.tol))
    return rows


if __name__ == "__main__":
    task_cases_main(__doc__, run_mujoco, run_isaac, save)
