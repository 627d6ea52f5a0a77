"""A scripted climbing gait for the wheel-leg velocity task: privileged (it reads the terrain under each wheel,
no learning), a teacher for a policy to imitate before PPO (``algo.params.teacher=climbing``,
docs/how-to/train-on-terrain.md#from-a-teacher-the-documented-run).

The wheels track the command as a skid-steered cart (each side's rim speed ``v -+ w W / 2`` with feedback on
the measured forward speed and yaw rate), at ``climb_speed`` at least while a rise is ahead: the momentum is
what lifts the trailing wheels (at the step benchmark's 0.5 m/s they stall at 0.10 m). The arms lift a wheel
onto a rise: a leading wheel (front, or hind when the command reverses) with the ground more than ``rise`` m
higher just ahead of its rim swings its arm forward and up (knee action +-1 in the direction of travel); once a
trailing wheel meets the rise, every arm swings the other way, which moves the load onto the leading wheels on
top so the trailing wheels roll up. It turns poorly (a skid-steered stance: yaw-rate error about 0.44 rad/s on
flat ground), so a student learns no turning from it (docs/results.md#from-a-teacher-the-documented-run).
``tests/benchmarks/test_steps_climbable.py`` scores it on the step benchmark
(docs/notes/2026-12-rough-terrain.md#what-was-tried-for-climbing).
"""

from __future__ import annotations

import numpy as np

from dexwheel.tasks.velocity.terrain import yaw_heading


class ClimbingTeacher:
    """The gait's actions ``(N, 8)`` (policy order: knees fl fr hl hr, then wheels) for a
    :class:`~dexwheel.tasks.velocity.task.WheelLegTask` with terrain and every joint in its policy layer.
    After each call, :attr:`active` ``(N,)`` marks the envs with a rise ahead (the gait at work), and
    :attr:`near_edge` those with a rise or a drop ahead of any wheel (where the gait's actions, the arms at the
    stance on a drop, are the ones that cross the edge)."""

    active: np.ndarray
    near_edge: np.ndarray

    def __init__(self, task, rise: float = 0.03, lookahead: float = 0.02, trail_lookahead: float = 0.06,
                 approach: float = 0.2, climb_speed: float = 1.0, speed_gain: float = 1.0,
                 yaw_gain: float = 1.0) -> None:  # fmt: skip
        if task.terrain is None:
            raise ValueError("ClimbingTeacher reads the terrain, and this task has none (the rough task has one)")
        if task.action_dim != 8:
            raise ValueError(f"ClimbingTeacher acts on all 8 joints; this task's policy holds {task.action_dim}")
        p = task.params
        self.task, self.rise, self.speed_gain, self.yaw_gain = task, rise, speed_gain, yaw_gain
        self.approach, self.climb_speed = p.wheel_radius + approach, climb_speed
        self.lead_reach, self.trail_reach = p.wheel_radius + lookahead, p.wheel_radius + trail_lookahead
        self.wheel_radius = p.wheel_radius
        sx, sy = np.array([1.0, 1.0, -1.0, -1.0]), np.array([1.0, -1.0, 1.0, -1.0])  # fl fr hl hr
        self.hip = np.stack([sx * p.hip_xyz[0], sy * p.hip_xyz[1]], axis=1)  # (4, 2) base frame x y
        self.arm = float(-p.knee_to_axle[2])
        self.half_track = p.hip_xyz[1] + p.wheel_center_left[1]
        self.side = sy  # +1 left
        self.wheel_scale = float(task.cfg.actions.wheel_velocity_scale)

    def wheel_xy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each wheel's centre (world x, y; ``(N, 4)`` each) and each base's heading ``(N, 2)``."""
        q = self.task.physics.qpos
        c, s = yaw_heading(q[:, 3:7])
        bx = self.hip[None, :, 0] + self.arm * np.sin(self.task.knee_pos)  # the arm's reach along the base
        by = self.hip[None, :, 1]
        x = q[:, 0:1] + c[:, None] * bx - s[:, None] * by
        y = q[:, 1:2] + s[:, None] * bx + c[:, None] * by
        return x, y, np.stack([c, s], axis=1)

    def __call__(self) -> np.ndarray:
        """The actions for every env's current state; sets :attr:`active`."""
        task = self.task
        raster = task.terrain.raster
        x, y, heading = self.wheel_xy()
        v_cmd, w_cmd = task.commands[:, 0], task.commands[:, 1]
        sign = np.where(v_cmd < 0.0, -1.0, 1.0)  # the direction of travel along the heading
        leading = np.where(sign[:, None] > 0, np.array([1, 1, 0, 0], bool), np.array([0, 0, 1, 1], bool))
        ahead = sign[:, None] * np.where(leading, self.lead_reach, self.trail_reach)
        under = raster.lookup(x, y)
        front = raster.lookup(x + ahead * heading[:, 0:1], y + ahead * heading[:, 1:2])
        at_rise = front - under > self.rise  # (N, 4)
        far = sign[:, None] * self.approach
        step_ahead = raster.lookup(x + far * heading[:, 0:1], y + far * heading[:, 1:2]) - under
        rise_ahead = step_ahead > self.rise
        climbing = (rise_ahead & leading).any(axis=1) | at_rise.any(axis=1)
        self.active = climbing  # where the gait departs from plain tracking: what algo.params.teacher_guide keeps
        self.near_edge = climbing | (step_ahead < -self.rise).any(axis=1)
        lead_up = (at_rise & leading).any(axis=1)
        trail_up = (at_rise & ~leading).any(axis=1)
        knees = np.zeros((task.num_envs, 4))
        knees[lead_up] = np.where(leading[lead_up], 1.0, 0.0)
        knees[trail_up] = -1.0
        knees *= sign[:, None]
        v_cmd = np.where(climbing, sign * np.maximum(np.abs(v_cmd), self.climb_speed), v_cmd)  # momentum
        v = v_cmd + self.speed_gain * (v_cmd - task.base_lin_vel[:, 0])
        w = w_cmd + self.yaw_gain * (w_cmd - task.base_ang_vel[:, 2])
        rim = v[:, None] - self.side[None] * w[:, None] * self.half_track  # m/s per wheel
        wheels = -rim / self.wheel_radius / self.wheel_scale  # a positive wheel velocity rolls backward
        return np.clip(np.concatenate([knees, wheels], axis=1), -1.0, 1.0).astype(np.float32)
