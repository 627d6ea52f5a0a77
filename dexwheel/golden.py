"""Golden trajectories: what the simulator does, pinned per env, drive and action mode.

Each :class:`GoldenCase` is a registered env with fixed keyword arguments, a seed and an action
program (the spec presets, random actions, a fist closing into contact, driving and turning, pushes).
:func:`record` runs it and returns every step's physics state (``qpos``, ``qvel``, the actuator
``ctrl`` the drive applied, the commanded joint targets), the action, observation, reward,
terminations and every numeric ``info`` value (each reward term among them), stacked as
``(steps, num_envs, ...)`` arrays. ``tests/golden/<case>.npz`` keeps one recording per case with the
MuJoCo and numpy versions and the command that made it; ``tests/test_golden.py`` replays each case and
:func:`compare` names the quantity that diverged first, the step, the env and by how much.

Recordings are compared bit for bit. MuJoCo does not promise identical results across its versions, so
``pyproject.toml`` bounds ``mujoco`` to the versions the files were made with; a file made with another
MuJoCo or numpy version is compared to :data:`CROSS_VERSION_ATOL` instead and the test says so.
``python scripts/regen_golden.py`` regenerates them on purpose and prints what changed.
"""

from __future__ import annotations

import io
import json
import platform
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

import dexwheel  # noqa: F401  (registers the env ids)
from dexwheel.atomic import atomic_open
from dexwheel.tasks.registry import GoldenSpec, tasks

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "tests" / "golden"
REGEN_COMMAND = "python scripts/regen_golden.py"
#: The largest deviation accepted when a file was made with another MuJoCo or numpy version.
CROSS_VERSION_ATOL = 1e-9
#: Compared first, so a report names the physics before what is derived from it.
PRIORITY = ("qpos", "qvel", "ctrl", "command", "action", "obs", "reward", "terminated", "truncated")


class GoldenCase(GoldenSpec):
    """One pinned trajectory (a task record's :class:`~dexwheel.tasks.registry.GoldenSpec`): a registered env with
    fixed keyword arguments, a seed and an action program. ``num_envs`` 0 is a single env (``gymnasium.make``, reset
    again with no seed whenever an episode ends); ``N > 0`` is the native vector env (``make_vec``, which resets its
    envs itself)."""

    @property
    def path(self) -> Path:
        return GOLDEN_DIR / f"{self.name}.npz"


def cases() -> tuple[GoldenCase, ...]:
    """Every registered task's golden cases, task by task (:func:`dexwheel.tasks.registry.tasks`)."""
    return tuple(GoldenCase(**{f.name: getattr(spec, f.name) for f in fields(GoldenSpec)})
                 for record in tasks().values() for spec in record.golden)  # fmt: skip


CASES: tuple[GoldenCase, ...] = cases()


# -- action programs -----------------------------------------------------------------------------
def _g20_pose_action(task: Any, preset: str) -> np.ndarray:
    """The action of the env's own kind that commands a goal preset (delta: holds still)."""
    return task.actions.hold_action(task.presets[preset])


def _program(case: GoldenCase, env: Any, n: int, dim: int) -> np.ndarray:
    """The case's ``(steps, n, dim)`` actions, fixed by the case alone."""
    rng = np.random.default_rng(1000 + case.seed)
    steps = case.steps
    task = env.unwrapped.task
    if case.program == "random":
        if getattr(getattr(task, "actions", None), "kind", None) == "sdk255":  # the G20 tasks: integers
            return rng.integers(0, 256, (steps, n, dim)).astype(np.float64)
        space = env.single_action_space if case.num_envs else env.action_space
        low, high = np.broadcast_to(space.low, (dim,)), np.broadcast_to(space.high, (dim,))
        return rng.uniform(low, high, (steps, n, dim))
    out = np.zeros((steps, n, dim))
    if case.program == "presets":  # open -> half fist -> full fist (into contact) -> open
        marks = ("open", "half_fist", "full_fist", "open")
        for k, preset in enumerate(marks):
            out[k * steps // 4 : (k + 1) * steps // 4] = _g20_pose_action(task, preset)
    elif case.program == "fist":  # every joint flexes at once into contact, then opens
        out[: steps // 2] = 1.0 if task.actions.kind == "delta" else _g20_pose_action(task, "full_fist")
        out[steps // 2 :] = -1.0 if task.actions.kind == "delta" else _g20_pose_action(task, "open")
    elif case.program == "drive_turn":  # stand, drive forward, skid-turn left, crouch and straighten
        knees, wheels = slice(0, 4), slice(4, 8)
        q = steps // 6
        out[q : 3 * q, :, wheels] = -0.3  # a positive wheel velocity rolls backward
        out[3 * q : 5 * q, :, wheels] = (0.3, -0.3, 0.3, -0.3)  # fl, fr, hl, hr: right side forward turns left
        out[5 * q :, :, knees] = (0.5, 0.5, -0.5, -0.5)
    elif case.program == "drive_forward":  # stand a quarter second, then drive forward at 9 rad/s
        out[12:, :, 4:8] = -0.3
    else:
        raise ValueError(f"golden case {case.name}: unknown program {case.program!r}")
    return out


# -- recording -----------------------------------------------------------------------------------
def make_env(case: GoldenCase) -> Any:
    if case.num_envs:
        return gym.make_vec(case.env_id, num_envs=case.num_envs, vectorization_mode="vector_entry_point",
                            **case.kwargs)  # fmt: skip
    return gym.make(case.env_id, **case.kwargs)


def physics_state(env: Any) -> dict[str, np.ndarray]:
    """``(N, ...)`` copies of the simulated joint state and what the drive applied."""
    task = env.unwrapped.task
    if hasattr(task, "physics"):  # wheel-leg: the floating base and 8 joints, actuator inputs
        p = task.physics
        return {"qpos": p.qpos.copy(), "qvel": p.qvel.copy(), "ctrl": p.ctrl.copy()}
    state = {"qpos": task.qpos.copy(), "qvel": task.qvel.copy(), "command": task.command.copy()}
    if hasattr(task, "object_pos"):  # the in-hand tasks: the object's pose and velocity (world frame)
        state["object"] = np.concatenate([task.object_pos, task.object_quat, task.object_lin_vel,
                                          task.object_ang_vel], axis=1)  # fmt: skip
    control = getattr(task.drive, "control", None)  # PD: the last physics step's actuator targets
    state["ctrl"] = control[:, -1].copy() if control is not None else task.qpos.copy()
    return state


def _info_values(info: Mapping[str, Any], n: int) -> dict[str, np.ndarray]:
    """Every numeric ``info`` entry as an ``(N,)`` float64 array (gymnasium's masks and finals left out)."""
    out = {}
    for key, value in info.items():
        if key.startswith("_") or key.startswith("final_"):
            continue
        arr = np.asarray(value)
        if arr.dtype.kind in "biuf" and arr.size == n:
            out[f"info/{key}"] = arr.reshape(n).astype(np.float64)
    return out


def record(case: GoldenCase, on_step: Callable[[int], None] | None = None) -> dict[str, np.ndarray]:
    """Run ``case`` and return its trajectory: ``(steps, N, ...)`` arrays by quantity name."""
    env = make_env(case)
    try:
        vector = bool(case.num_envs)
        n = case.num_envs or 1
        space = env.single_action_space if vector else env.action_space
        obs, _ = env.reset(seed=case.seed)
        actions = _program(case, env, n, int(np.prod(space.shape)))
        rows: dict[str, list[np.ndarray]] = {"reset_obs": [np.asarray(obs).reshape(n, -1).copy()]}
        for t in range(case.steps):
            a = actions[t] if vector else actions[t, 0]
            obs, reward, terminated, truncated, info = env.step(a)
            step = {
                **physics_state(env),
                "action": actions[t],
                "obs": np.asarray(obs).reshape(n, -1).copy(),
                "reward": np.asarray(reward, dtype=np.float64).reshape(n),
                "terminated": np.asarray(terminated).reshape(n),
                "truncated": np.asarray(truncated).reshape(n),
                **_info_values(info, n),
            }
            for key, value in step.items():
                rows.setdefault(key, []).append(value)
            if not vector and (terminated or truncated):
                env.reset()
            if on_step is not None:
                on_step(t)
    finally:
        env.close()
    return {key: np.stack(values) for key, values in rows.items()}


# -- storage ---------------------------------------------------------------------------------------
def versions() -> dict[str, str]:
    return {"mujoco": mujoco.__version__, "numpy": np.__version__, "machine": platform.machine()}


def save(case: GoldenCase, trajectory: Mapping[str, np.ndarray], path: Path | None = None) -> Path:
    """Write the recording (compressed npz, atomically) with its versions and the command that made it."""
    path = Path(path or case.path)
    meta = {"case": {**asdict(case), "kwargs": dict(case.kwargs)}, "versions": versions(), "command": REGEN_COMMAND}
    buf = io.BytesIO()
    np.savez_compressed(buf, __meta__=np.array(json.dumps(meta, sort_keys=True)), **trajectory)
    with atomic_open(path) as f:
        f.write(buf.getvalue())
    return path


def load(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``(meta, trajectory)`` of a recording."""
    with np.load(path) as z:
        meta = json.loads(str(z["__meta__"]))
        return meta, {k: z[k] for k in z.files if k != "__meta__"}


# -- comparison ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Deviation:
    """Where two recordings first differ, and by how much."""

    key: str
    step: int
    env: int
    index: tuple[int, ...]
    recorded: float
    replayed: float

    @property
    def size(self) -> float:
        return abs(self.replayed - self.recorded)

    def __str__(self) -> str:
        at = f"[{', '.join(map(str, self.index))}]" if self.index else ""
        return (f"{self.key}{at} at step {self.step}, env {self.env}: recorded {self.recorded!r}, "
                f"replayed {self.replayed!r} (|diff| {self.size:.3g})")  # fmt: skip


@dataclass
class Comparison:
    """The result of :func:`compare`: empty when the recordings agree."""

    first: Deviation | None = None  # the earliest divergence (by step, then by PRIORITY)
    largest: dict[str, tuple[float, int]] = field(default_factory=dict)  # key -> (largest |diff|, its step)
    structure: list[str] = field(default_factory=list)  # quantities added, removed or reshaped

    @property
    def equal(self) -> bool:
        return self.first is None and not self.structure

    def summary(self) -> str:
        if self.equal:
            return "unchanged"
        parts = list(self.structure)
        if self.first is not None:
            key, (size, step) = max(self.largest.items(), key=lambda kv: kv[1][0])
            parts.append(f"first divergence: {self.first}; largest deviation: {key} {size:.3g} at step {step}")
        return "; ".join(parts)


def _order(key: str) -> tuple[int, str]:
    return (PRIORITY.index(key), key) if key in PRIORITY else (len(PRIORITY), key)


def compare(recorded: Mapping[str, np.ndarray], replayed: Mapping[str, np.ndarray], atol: float = 0.0) -> Comparison:
    """Compare two trajectories quantity by quantity; ``atol`` 0 is bit for bit (NaN equals NaN)."""
    result = Comparison()
    for key in sorted(set(recorded) - set(replayed)):
        result.structure.append(f"{key}: recorded but not replayed")
    for key in sorted(set(replayed) - set(recorded)):
        result.structure.append(f"{key}: new quantity")
    for key in sorted(set(recorded) & set(replayed), key=_order):
        a = np.asarray(recorded[key], dtype=np.float64)
        b = np.asarray(replayed[key], dtype=np.float64)
        if a.shape != b.shape:
            result.structure.append(f"{key}: shape {a.shape} recorded, {b.shape} replayed")
            continue
        diff = np.abs(b - a)
        both_nan = np.isnan(a) & np.isnan(b)
        diff[both_nan] = 0.0
        diff[np.isnan(diff)] = np.inf  # NaN on one side only
        bad = diff > atol
        if not bad.any():
            continue
        flat = int(np.argmax(bad.reshape(-1)))  # C order: the earliest step first
        where = np.unravel_index(flat, a.shape)
        worst = int(np.argmax(diff.reshape(-1)))
        result.largest[key] = (float(diff.reshape(-1)[worst]), int(np.unravel_index(worst, a.shape)[0]))
        dev = Deviation(key, int(where[0]), int(where[1]) if a.ndim > 1 else 0, tuple(int(i) for i in where[2:]),
                        float(a[where]), float(b[where]))  # fmt: skip
        if result.first is None or dev.step < result.first.step:
            result.first = dev
    return result


def tolerance_for(meta: Mapping[str, Any]) -> float:
    """0 (bit for bit) for a recording made with this MuJoCo and numpy on this kind of CPU, else
    :data:`CROSS_VERSION_ATOL`."""
    return 0.0 if meta.get("versions") == versions() else CROSS_VERSION_ATOL


def check(case: GoldenCase) -> tuple[Comparison, dict[str, Any]]:
    """Replay ``case`` against its file: ``(comparison, the file's meta)``."""
    meta, recorded = load(case.path)
    return compare(recorded, record(case), tolerance_for(meta)), meta


def case_named(name: str) -> GoldenCase:
    for case in CASES:
        if case.name == name:
            return case
    raise KeyError(f"no golden case {name!r}; cases: {[c.name for c in CASES]}")
