"""Run both halves of the cross-backend comparison and compare them (called from the Isaac Lab venv).

The MuJoCo half needs mujoco 4, which only the core venv has, so it runs there as a subprocess
(``MUJOCO_PYTHON``, default ``.venv/bin/python``); each Isaac group runs in a subprocess of this
interpreter, so every group gets a fresh simulation context. Each half says on stderr when it starts and how long
it took, its own output relayed in between as it comes (a cold warp compile takes minutes); a half that fails
raises :class:`CrossBackendError`, one line naming it.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dexwheel.isaaclab import hand_cases, in_hand_cases, in_hand_task_cases, scenarios, wheel_leg_cases

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


class CrossBackendError(RuntimeError):
    """A half failed (its output, relayed above, says why), or the MuJoCo half's python is missing."""


def _run(cmd: list[str], what: str) -> None:
    """Run one half, its output relayed to stderr line by line, between a start line and a done line."""
    print(f"{what} ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the child's lines as it prints them, not at its exit
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:  # type: ignore[union-attr]
        sys.stderr.write(line)
        sys.stderr.flush()
    code = proc.wait()
    if code != 0:
        raise CrossBackendError(f"{what} failed (exit {code}); its output is above (command: {' '.join(cmd)})")
    print(f"{what}: done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)


#: The task cases, end to end (not physics-step targets): the G20's (:mod:`.hand_cases`: mappings, hard-write,
#: layers), the in-hand scene's (:mod:`.in_hand_cases`: a cube dropped on the palm, then grasped), the object tasks'
#: (:mod:`.in_hand_task_cases`: the capsule's finger gait and holds from the same grasps) and the wheel-leg's
#: (:mod:`.wheel_leg_cases`: the stance layer, randomisation off and on), each group's module with
#: ``mujoco``/``isaac`` halves writing an npz, ``load`` and ``compare``.
TASK_GROUPS = {"hand_task": hand_cases, "in_hand": in_hand_cases, "in_hand_task": in_hand_task_cases,
               "wheel_leg_task": wheel_leg_cases}  # fmt: skip
#: Every group: the physics-step scenarios' (:data:`.scenarios.GROUPS`) and the task cases.
GROUPS = (*scenarios.GROUPS, *TASK_GROUPS)


def outputs(groups: tuple[str, ...]) -> list[str]:
    """The files :func:`run` writes in its workdir for ``groups``: the physics groups' one MuJoCo file and an
    Isaac file per group, and each task group's two."""
    groups = tuple(dict.fromkeys(groups))  # each once, as run runs them
    physics = [g for g in groups if g in scenarios.GROUPS]
    return [*(["mujoco.npz"] if physics else []), *(f"isaaclab_{g}.npz" for g in physics),
            *(f"{half}_{g}.npz" for g in groups if g in TASK_GROUPS for half in ("mujoco", "isaaclab"))]  # fmt: skip


def run(workdir: Path, groups: tuple[str, ...] = GROUPS, device: str = "cpu", motor_pd: bool = True) -> Result:
    """Both halves for ``groups`` (each once); intermediate ``.npz`` files (:func:`outputs`) are left in
    ``workdir``."""
    if not MUJOCO_PYTHON.exists():
        raise CrossBackendError(f"the MuJoCo half needs the core venv's python at {MUJOCO_PYTHON} (make .venv, "
                                "or set DEXWHEEL_MUJOCO_PYTHON)")  # fmt: skip
    workdir.mkdir(parents=True, exist_ok=True)
    groups = tuple(dict.fromkeys(groups))
    physics = tuple(g for g in groups if g in scenarios.GROUPS)
    total = len(outputs(groups))  # one file per half
    halves = (f"[{i}/{total}]" for i in itertools.count(1))
    result = _run_physics(workdir, physics, device, motor_pd, halves) if physics else Result([], {})
    for group in (g for g in groups if g in TASK_GROUPS):
        module = TASK_GROUPS[group]
        mj_file, il_file = workdir / f"mujoco_{group}.npz", workdir / f"isaaclab_{group}.npz"
        mujoco_cmd = [str(MUJOCO_PYTHON), "-m", module.__name__, "mujoco", str(mj_file)]
        _run(mujoco_cmd, f"{next(halves)} MuJoCo half ({group})")
        _run([sys.executable, "-m", module.__name__, "isaac", str(il_file), "--device", device],
             f"{next(halves)} Isaac half ({group})")  # fmt: skip
        (mj, mj_meta), (il, il_meta) = module.load(str(mj_file)), module.load(str(il_file))
        meta = {**result.meta, f"mujoco_{group}": mj_meta, f"isaaclab_{group}": il_meta}
        result = Result(result.rows + module.compare(mj, il), meta, result.steps)
    return result


def _run_physics(workdir: Path, groups: tuple[str, ...], device: str, motor_pd: bool, halves: Iterator[str]) -> Result:
    mj_file = workdir / "mujoco.npz"
    group_args = [a for g in groups for a in ("--group", g)]
    _run([str(MUJOCO_PYTHON), "-m", "dexwheel.isaaclab.mujoco_reference", str(mj_file), *group_args],
         f"{next(halves)} MuJoCo half ({', '.join(groups)})")  # fmt: skip
    progs, mj, mj_meta = scenarios.load(str(mj_file))
    il, meta = {}, {"mujoco": mj_meta}
    for group in groups:
        out = workdir / f"isaaclab_{group}.npz"
        cmd = [sys.executable, "-m", "dexwheel.isaaclab.isaac_replay", str(mj_file), str(out), "--group", group,
               "--device", device] + ([] if motor_pd else ["--isaac-pd-split"])  # fmt: skip
        _run(cmd, f"{next(halves)} Isaac half ({group})")
        _, trajectories, meta[f"isaaclab_{group}"] = scenarios.load(str(out))
        il.update(trajectories)
    ran = [p for p in progs if p.key in il]
    steps = {p.key: scenarios.step_traces(p, mj[p.key], il[p.key]) for p in ran if p.case == "step"}
    return Result(scenarios.compare(ran, mj, il), meta, steps)
