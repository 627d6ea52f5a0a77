"""Run both halves of the cross-backend comparison and compare them (called from the Isaac Lab venv).

The MuJoCo half needs mujoco 4, which only the core venv has, so it runs there as a subprocess
(``MUJOCO_PYTHON``, default ``.venv/bin/python``); each Isaac group runs in a subprocess of this
interpreter, so every group gets a fresh simulation context.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from dexwheel.isaaclab import hand_cases, scenarios, wheel_leg_cases

REPO = Path(__file__).resolve().parents[2]
MUJOCO_PYTHON = Path(os.environ.get("DEXWHEEL_MUJOCO_PYTHON", REPO / ".venv" / "bin" / "python"))


@dataclass(frozen=True)
class Result:
    rows: list[scenarios.Row]
    meta: dict[str, dict]  # per half: versions, timings, the Isaac model's parameters
    steps: dict[str, scenarios.StepTraces] = field(default_factory=dict)  # the step case's traces, by program key

    @property
    def failures(self) -> list[scenarios.Row]:
        return [r for r in self.rows if not r.ok]


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(cmd)}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")


#: The task cases, end to end (not physics-step targets): the G20's (:mod:`.hand_cases`: mappings, hard-write,
#: layers) and the wheel-leg's (:mod:`.wheel_leg_cases`: the stance layer, randomisation off and on), each
#: group's module with ``mujoco``/``isaac`` halves writing an npz, ``load`` and ``compare``.
TASK_GROUPS = {"hand_task": hand_cases, "wheel_leg_task": wheel_leg_cases}
#: Every group: the physics-step scenarios' (:data:`.scenarios.GROUPS`) and the task cases.
GROUPS = (*scenarios.GROUPS, *TASK_GROUPS)


def run(workdir: Path, groups: tuple[str, ...] = GROUPS, device: str = "cpu", motor_pd: bool = True) -> Result:
    """Both halves for ``groups``; intermediate ``.npz`` files are left in ``workdir``."""
    if not MUJOCO_PYTHON.exists():
        raise FileNotFoundError(f"the MuJoCo half needs the core venv's python at {MUJOCO_PYTHON} (make .venv, "
                                "or set DEXWHEEL_MUJOCO_PYTHON)")  # fmt: skip
    workdir.mkdir(parents=True, exist_ok=True)
    physics = tuple(g for g in groups if g in scenarios.GROUPS)
    result = _run_physics(workdir, physics, device, motor_pd) if physics else Result([], {})
    for group in (g for g in groups if g in TASK_GROUPS):
        module = TASK_GROUPS[group]
        mj_file, il_file = workdir / f"mujoco_{group}.npz", workdir / f"isaaclab_{group}.npz"
        _run([str(MUJOCO_PYTHON), "-m", module.__name__, "mujoco", str(mj_file)], f"MuJoCo half ({group})")
        _run([sys.executable, "-m", module.__name__, "isaac", str(il_file), "--device", device],
             f"Isaac half ({group})")  # fmt: skip
        (mj, mj_meta), (il, il_meta) = module.load(str(mj_file)), module.load(str(il_file))
        meta = {**result.meta, f"mujoco_{group}": mj_meta, f"isaaclab_{group}": il_meta}
        result = Result(result.rows + module.compare(mj, il), meta, result.steps)
    return result


def _run_physics(workdir: Path, groups: tuple[str, ...], device: str, motor_pd: bool) -> Result:
    mj_file = workdir / "mujoco.npz"
    group_args = [a for g in groups for a in ("--group", g)]
    _run([str(MUJOCO_PYTHON), "-m", "dexwheel.isaaclab.mujoco_reference", str(mj_file), *group_args], "MuJoCo half")
    progs, mj, mj_meta = scenarios.load(str(mj_file))
    il, meta = {}, {"mujoco": mj_meta}
    for group in groups:
        out = workdir / f"isaaclab_{group}.npz"
        cmd = [sys.executable, "-m", "dexwheel.isaaclab.isaac_replay", str(mj_file), str(out), "--group", group,
               "--device", device] + ([] if motor_pd else ["--isaac-pd-split"])  # fmt: skip
        _run(cmd, f"Isaac half ({group})")
        _, trajectories, meta[f"isaaclab_{group}"] = scenarios.load(str(out))
        il.update(trajectories)
    ran = [p for p in progs if p.key in il]
    steps = {p.key: scenarios.step_traces(p, mj[p.key], il[p.key]) for p in ran if p.case == "step"}
    return Result(scenarios.compare(ran, mj, il), meta, steps)
