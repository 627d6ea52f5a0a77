"""The random goals of a G20 config without MuJoCo: a seeded set drawn by the MuJoCo task's own ``sample_goal``.

The MuJoCo task draws a random goal as a uniform pose within the joint limits that its collision check finds
free (:meth:`dexwheel.tasks.hand_pose.task.G20HandTask.sample_goal`: up to ``random_goal_tries`` draws, the
open hand when none is free; joints the ``hold`` layer holds at their held position). The Isaac Lab venv has
no MuJoCo 4, so the Isaac Lab task draws its random goals from a set of :data:`SIZE` goals that function drew
with a generator seeded :data:`SEED` (:mod:`dexwheel.tasks.hand_pose.sample_goals`, core venv): the same
definition and distribution, a finite sample of it (not the same numbers as a MuJoCo run).

``random_goals.npz`` next to this module holds the sets of both hands' default configs (``python -m
dexwheel.tasks.hand_pose.sample_goals --write`` regenerates it; ``tests/tasks/hand_pose/test_goal_set.py``
recomputes them bit for bit). A config the file lacks (another ``penetration_tol``, ``random_goal_tries`` or a
``hold`` layer) is computed once per process by the same function in the core venv (``DEXWHEEL_MUJOCO_PYTHON``,
default ``.venv/bin/python``; about 10 s).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from dexwheel.atomic import atomic_open
from dexwheel.tasks.hand_pose.config import G20HandConfig

TABLE = Path(__file__).with_name("random_goals.npz")
REPO = Path(__file__).resolve().parents[3]
#: Goals per set, and the seed of the generator that draws them.
SIZE = 1024
SEED = 0


def key(cfg: G20HandConfig) -> dict:
    """What a config's random goals depend on: the hand, the collision check's settings, the held joints."""
    hold, excludes = "hold" in cfg.composer.layers, cfg.collision.contact_excludes
    joints = cfg.composer.hold_joints if isinstance(cfg.composer.hold_joints, str) else list(cfg.composer.hold_joints)
    return {"hand": cfg.hand, "penetration_tol": float(cfg.collision.penetration_tol),
            "random_goal_tries": int(cfg.random_goal_tries),
            "contact_excludes": None if excludes is None else [list(p) for p in excludes],
            "hold_joints": joints if hold else None, "hold_pose": cfg.composer.hold_pose if hold else None,
            "size": SIZE, "seed": SEED}  # fmt: skip


def config_of(k: dict) -> G20HandConfig:
    """The config :func:`key` ``k`` describes (random goals only), for the MuJoCo task that draws them."""
    from dexwheel.tasks.hand_pose.config import make_cfg

    hold = {} if k["hold_joints"] is None else {"layers": ("policy", "hold"), "hold_joints": k["hold_joints"],
                                                 "hold_pose": k["hold_pose"]}  # fmt: skip
    excludes = None if k["contact_excludes"] is None else tuple(tuple(p) for p in k["contact_excludes"])
    return make_cfg(hand=k["hand"], goal_mode="random", random_goal_tries=k["random_goal_tries"], composer=hold,
                    collision={"penetration_tol": k["penetration_tol"], "contact_excludes": excludes})  # fmt: skip


def load() -> list[tuple[dict, np.ndarray]]:
    """The committed sets: ``[(key, goals (SIZE, 16))]``."""
    with np.load(TABLE) as f:
        keys = json.loads(str(f["keys"]))
        return [(k, f[f"goals{i}"]) for i, k in enumerate(keys)]


def write(sets: list[tuple[dict, np.ndarray]]) -> None:
    """Replace the committed file with ``sets`` (atomically: an interrupted write leaves the old file)."""
    arrays = {f"goals{i}": np.asarray(g, dtype=np.float64) for i, (_, g) in enumerate(sets)}
    with atomic_open(TABLE) as f:
        np.savez(f, keys=np.array(json.dumps([k for k, _ in sets])), **arrays)


def lookup(cfg: G20HandConfig) -> np.ndarray | None:
    """The committed set of ``cfg``'s key, or None."""
    want = key(cfg)
    for k, goals in load():
        if k == want:
            return goals
    return None


def mujoco_python() -> Path:
    return Path(os.environ.get("DEXWHEEL_MUJOCO_PYTHON", REPO / ".venv" / "bin" / "python"))


@functools.lru_cache(maxsize=16)
def _computed(key_json: str) -> np.ndarray:
    python = mujoco_python()
    if not python.exists():
        raise FileNotFoundError(
            f"the random goals of this config ({key_json}) are not in {TABLE.name}, and drawing them needs MuJoCo 4 "
            f"(the task's collision check) in the core venv's python at {python} (make .venv, or set "
            "DEXWHEEL_MUJOCO_PYTHON); or use goal_mode='presets'"
        )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "goals.npy"
        cmd = [str(python), "-m", "dexwheel.tasks.hand_pose.sample_goals", "--key", key_json, "--out", str(out)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"drawing the random goals ({key_json}) in the core venv failed:\n{proc.stderr[-4000:]}")
        return np.load(out)


def goal_set(cfg: G20HandConfig) -> np.ndarray:
    """``cfg``'s random goals ``(SIZE, 16)`` (ACTIVE_JOINTS order): from the file, else drawn in the core venv."""
    found = lookup(cfg)
    return found if found is not None else _computed(json.dumps(key(cfg), sort_keys=True))
