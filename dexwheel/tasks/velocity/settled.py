"""The settled stance of a wheel-leg config without MuJoCo: a committed table of the MuJoCo task's own results.

The MuJoCo velocity task starts episodes at the stance its robot settles to under its own weight
(:func:`dexwheel.tasks.velocity.settle.settle`, MuJoCo 4). The Isaac Lab task's venv has no MuJoCo 4, so the
settled knees and base height it starts at come from here: ``settled_stance.json`` next to this module holds
that function's results for every wheel-leg robot's default config (``python -m dexwheel.tasks.velocity.settle
--write`` regenerates it; ``tests/tasks/velocity/test_settled.py`` recomputes every entry and compares them
bit for bit). A config the table lacks (another stance or other gains) is computed once per process by the
same function in the core venv (``DEXWHEEL_MUJOCO_PYTHON``, default ``.venv/bin/python``).

An entry is keyed by what the settle depends on: the robot, the stance and the knee and wheel gains.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from dexwheel.atomic import write_atomic
from dexwheel.tasks.velocity.config import WheelLegEnvCfg

TABLE = Path(__file__).with_name("settled_stance.json")
REPO = Path(__file__).resolve().parents[3]
KEY_FIELDS = ("robot", "stance", "knee_kp", "knee_kd", "wheel_kd")


def key(cfg: WheelLegEnvCfg) -> dict:
    """What the settled stance depends on."""
    return {"robot": cfg.robot, "stance": [float(q) for q in cfg.stance_pose], "knee_kp": float(cfg.knee_kp),
            "knee_kd": float(cfg.knee_kd), "wheel_kd": float(cfg.wheel_kd)}  # fmt: skip


def entry(cfg: WheelLegEnvCfg, knees: Sequence[float], height: float) -> dict:
    """A table entry: :func:`key` plus the settled knee angles (KNEE_JOINTS order, rad) and base height (m)."""
    return {**key(cfg), "knees": [float(q) for q in knees], "height": float(height)}


def load() -> list[dict]:
    return json.loads(TABLE.read_text())["entries"]


def write(entries: list[dict]) -> None:
    """Replace the committed table with ``entries`` (atomically: an interrupted write leaves the old table)."""
    doc = {"about": "dexwheel.tasks.velocity.settle results (MuJoCo); regenerate: python -m "
                    "dexwheel.tasks.velocity.settle --write", "entries": entries}  # fmt: skip
    write_atomic(TABLE, json.dumps(doc, indent=1) + "\n")


def lookup(cfg: WheelLegEnvCfg) -> tuple[tuple[float, ...], float] | None:
    """The table's settled ``(knees, height)`` for ``cfg``, or None when the table lacks its key."""
    want = key(cfg)
    for e in load():
        if all(e[k] == want[k] for k in KEY_FIELDS):
            return tuple(e["knees"]), float(e["height"])
    return None


def mujoco_python() -> Path:
    return Path(os.environ.get("DEXWHEEL_MUJOCO_PYTHON", REPO / ".venv" / "bin" / "python"))


@functools.lru_cache(maxsize=32)
def _computed(robot: str, stance: tuple[float, ...], knee_kp: float, knee_kd: float, wheel_kd: float):
    python = mujoco_python()
    fields = f"robot={robot!r}, stance={stance}, knee_kp={knee_kp}, knee_kd={knee_kd}, wheel_kd={wheel_kd}"
    if not python.exists():
        raise FileNotFoundError(
            f"the settled stance of this config ({fields}) is not in {TABLE.name}, and computing it needs MuJoCo 4 "
            f"in the core venv's python at {python} (make .venv, or set DEXWHEEL_MUJOCO_PYTHON)"
        )
    cmd = [str(python), "-m", "dexwheel.tasks.velocity.settle", "--robot", robot, "--stance", *map(repr, stance),
           "--knee-kp", repr(knee_kp), "--knee-kd", repr(knee_kd), "--wheel-kd", repr(wheel_kd)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"computing the settled stance ({fields}) in the core venv failed:\n{proc.stderr[-4000:]}")
    out = json.loads(proc.stdout)
    return tuple(out["knees"]), float(out["height"])


def settled_stance(cfg: WheelLegEnvCfg) -> tuple[tuple[float, ...], float]:
    """The settled knees and base height of ``cfg``: from the table, else computed in the core venv."""
    found = lookup(cfg)
    if found is not None:
        return found
    k = key(cfg)
    return _computed(k["robot"], tuple(k["stance"]), k["knee_kp"], k["knee_kd"], k["wheel_kd"])
