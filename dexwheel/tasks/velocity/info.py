"""The velocity task's ``info``: the last step's values by key (reward terms, tracking metrics, termination causes),
whether the physics diverged and, on terrain, each env's level; as ``(N,)`` arrays (the vector env) or one env's
plain numbers (the single env)."""

from __future__ import annotations

from typing import Any

import numpy as np


def step_info(task: Any) -> dict[str, np.ndarray]:
    """The last step's ``info`` as fresh ``(N,)`` arrays: ``task.info_keys`` (the termination causes as booleans)
    and ``diverged``."""
    columns = task.values.T.copy()  # one row per info key
    info: dict[str, np.ndarray] = dict(zip(task.info_keys, columns, strict=True))
    for key in task.flag_keys:
        info[key] = info[key] > 0.0
    info["diverged"] = task.diverged.copy()
    if task.terrain is not None:
        info["terrain_level"] = task.terrain.level.astype(np.float64)
    return info


def step_info_of(task: Any, i: int) -> dict[str, Any]:
    """Env ``i``'s last step ``info`` as plain numbers (the single env's): :func:`step_info`'s keys."""
    row = task.values[i].tolist()
    info: dict[str, Any] = dict(zip(task.info_keys, row, strict=True))
    for key in task.flag_keys:
        info[key] = info[key] > 0.0
    info["diverged"] = bool(task.diverged[i])
    if task.terrain is not None:
        info["terrain_level"] = float(task.terrain.level[i])
    return info


def reset_info(task: Any, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The ``info`` of freshly reset envs ``idx``: every step key, 0 (False) but the new commands."""
    k = len(idx)
    info: dict[str, np.ndarray] = {key: np.zeros(k) for key in task.info_keys}
    info["command_lin_vel_x"], info["command_ang_vel_z"] = task.commands[idx].T.copy()
    for key in (*task.flag_keys, "diverged"):
        info[key] = np.zeros(k, dtype=bool)
    if task.terrain is not None:
        info["terrain_level"] = task.terrain.level[idx].astype(np.float64)
    return info
