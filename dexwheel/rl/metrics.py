"""Per-task evaluation metrics, accumulated from the envs' ``info`` dicts step by step.

Each task names the info entries it reads, so an env that stops reporting one fails loudly here
instead of silently producing a zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


def _require(info: dict[str, Any], key: str, task: str) -> float:
    if key not in info:
        raise KeyError(f"{task} metrics: the env's info has no {key!r} (keys: {sorted(info)})")
    return float(info[key])


@dataclass
class VelocityTrackingMetrics:
    """Wheel-leg velocity tracking: mean absolute errors over every step, falls, return."""

    name: str = "velocity"
    vx_err: list[float] = field(default_factory=list)
    wz_err: list[float] = field(default_factory=list)

    def step(self, info: dict[str, Any]) -> None:
        self.vx_err.append(_require(info, "lin_vel_x_error", self.name))
        self.wz_err.append(_require(info, "ang_vel_z_error", self.name))

    def episode(self, terminated: bool) -> dict[str, float]:
        out = {
            "lin_vel_x_error": float(np.mean(self.vx_err)) if self.vx_err else float("nan"),
            "ang_vel_z_error": float(np.mean(self.wz_err)) if self.wz_err else float("nan"),
            "fall": float(terminated),
        }
        self.vx_err.clear()
        self.wz_err.clear()
        return out


@dataclass
class HandPoseMetrics:
    """G20 pose tracking at the end of each episode (one goal per episode): mean and worst joint error
    over the 16 active joints, the deepest penetration seen, success (mean error <= threshold)."""

    name: str = "hand_pose"
    success_threshold_rad: float = 0.05
    mean_error: float = float("nan")
    max_error: float = float("nan")
    max_penetration: float = 0.0

    def step(self, info: dict[str, Any]) -> None:
        self.mean_error = _require(info, "mean_joint_error", self.name)
        self.max_error = _require(info, "tracking_error", self.name)
        self.max_penetration = max(self.max_penetration, _require(info, "max_penetration", self.name))

    def episode(self, terminated: bool) -> dict[str, float]:
        out = {
            "mean_joint_error": self.mean_error,
            "max_joint_error": self.max_error,
            "max_penetration": self.max_penetration,
            "success": float(self.mean_error <= self.success_threshold_rad),
        }
        self.mean_error, self.max_error, self.max_penetration = float("nan"), float("nan"), 0.0
        return out


#: The rough task's termination flag for leaving the terrain (``out_of_bounds`` in its table).
OUT_OF_BOUNDS_FLAG = "terminated_out_of_bounds"


@dataclass
class RoughTrackingMetrics(VelocityTrackingMetrics):
    """:class:`VelocityTrackingMetrics` on terrain: an episode that ended only by leaving the terrain
    (``terminated_out_of_bounds``, no other termination flag in that step) is ``out_of_bounds``, not a
    ``fall``: the robot drove off the map upright. A table without that term never ends there."""

    name: str = "velocity_rough"
    left_terrain: bool = False  # the last step's termination flags: out of bounds and nothing else

    def step(self, info: dict[str, Any]) -> None:
        super().step(info)
        flags = {k: bool(v) for k, v in info.items() if k.startswith("terminated_")}
        left = flags.pop(OUT_OF_BOUNDS_FLAG, False)
        self.left_terrain = left and not any(flags.values())

    def episode(self, terminated: bool) -> dict[str, float]:
        out = super().episode(terminated and not self.left_terrain)
        out["out_of_bounds"] = float(terminated and self.left_terrain)
        self.left_terrain = False
        return out


@dataclass
class InHandMetrics:
    """The in-hand tasks: the object's mean angular velocity about the axis (rad/s) and its total turn (rad), a drop
    (the episode ended by a termination), the goals reached (reorientation)."""

    name: str = "in_hand"
    rates: list[float] = field(default_factory=list)
    angle: float = 0.0
    successes: float = 0.0

    def step(self, info: dict[str, Any]) -> None:
        self.rates.append(_require(info, "rotation_rate", self.name))
        self.angle = _require(info, "rotation_angle", self.name)
        self.successes = _require(info, "successes", self.name)

    def episode(self, terminated: bool) -> dict[str, float]:
        out = {"rotation_rate": float(np.mean(self.rates)) if self.rates else float("nan"),
               "rotation_angle": self.angle, "drop": float(terminated), "successes": self.successes}  # fmt: skip
        self.rates.clear()
        self.angle = self.successes = 0.0
        return out


TASK_METRICS = {"velocity": VelocityTrackingMetrics, "velocity_rough": RoughTrackingMetrics,
                "hand_pose": HandPoseMetrics, "in_hand_rotate": InHandMetrics, "in_hand_rotate_z": InHandMetrics,
                "in_hand_reorient": InHandMetrics}  # fmt: skip


def make_metrics(task: str):
    try:
        return TASK_METRICS[task]()
    except KeyError:
        raise ValueError(f"task.name: unknown task {task!r}; known tasks {sorted(TASK_METRICS)}") from None
