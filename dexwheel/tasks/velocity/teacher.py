"""A scripted climbing gait for the wheel-leg velocity task: privileged (it reads the terrain under each wheel,
no learning), a teacher for a policy to imitate before PPO (``algo.params.teacher=climbing``); the gait in words,
its numbers and how they were found: docs/explanation/climbing-gait.md.

The wheels track the command as a skid-steered cart (each side's rim speed ``v -+ w W / 2`` with feedback on
the measured forward speed and yaw rate), at ``climb_speed`` at least while a rise is ahead: the momentum is
what lifts the trailing wheels. The arms act in three phases, each read per wheel from the terrain just ahead of
its rim in the direction of travel (so a flight of stairs is a sequence of edges, one pair of wheels at a time):

* **prepare** (a rise within ``pre_reach`` of a leading wheel): the leading arms swing forward and up, the
  trailing arms forward under the body, moving the load back before the leading wheels meet the edge;
* **lead** (a rise within ``lead_reach`` of a leading wheel): the leading arms lift their wheels onto it;
* **trail** (a rise within ``trail_reach`` of a trailing wheel): every arm swings the other way, which moves the
  load onto the leading wheels on top so the trailing wheels roll up.

A later phase wins over an earlier one. Each phase's knee actions ``(leading, trailing)`` are in the direction of
travel (a reversing command mirrors them). The defaults come from a cross-entropy search over these 11 numbers
on the step benchmark (0.15 and 0.20 m up, 0.15 m stairs, start yaw +-0.5 rad). It turns poorly (a skid-steered
stance: yaw-rate error about 0.44 rad/s on flat ground), so a student learns no turning from it.
``tests/tasks/velocity/test_teacher.py`` scores it on the step benchmark.
"""

from __future__ import annotations

import numpy as np

from dexwheel.tasks.velocity.terrain import yaw_heading


class ClimbingTeacher:
    """The gait's actions ``(N, 8)`` (policy order: knees fl fr hl hr, then wheels) for a
    :class:`~dexwheel.tasks.velocity.task.WheelLegTask` with terrain and every joint in its policy layer.
    After each call, :attr:`active` ``(N,)`` marks the envs with a rise ahead (the gait at work), and
    :attr:`near_edge` those with a rise or a drop ahead of any wheel (where the gait's actions, the arms at the
    stance on a drop, are the ones that cross the edge). Distances (m) are ahead of a wheel's rim."""

    active: np.ndarray
    near_edge: np.ndarray

    def __init__(self, task, rise: float = 0.03, pre_reach: float = 0.148, lead_reach: float = 0.047,
                 trail_reach: float = 0.135, approach: float = 0.1, climb_speed: float = 1.276,
                 prepare: tuple[float, float] = (0.56, -0.724), lead: tuple[float, float] = (1.0, -0.868),
                 trail: tuple[float, float] = (-1.0, -0.293), speed_gain: float = 1.0,
                 yaw_gain: float = 1.0) -> None:  # fmt: skip
        if task.terrain is None:
            raise ValueError("ClimbingTeacher reads the terrain, and this task has none (the rough task has one)")
        if task.action_dim != 8:
            raise ValueError(f"ClimbingTeacher acts on all 8 joints; this task's policy holds {task.action_dim}")
        p = task.params
        self.task, self.rise, self.speed_gain, self.yaw_gain = task, rise, speed_gain, yaw_gain
        self.climb_speed, self.wheel_radius = climb_speed, p.wheel_radius
        r = p.wheel_radius
        self.approach, self.pre_reach, self.lead_reach, self.trail_reach = (
            r + approach, r + pre_reach, r + lead_reach, r + trail_reach)  # fmt: skip
        self.phases = (prepare, lead, trail)  # (leading, trailing) knee actions, in the order a later one wins
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
        """The actions for every env's current state; sets :attr:`active` and :attr:`near_edge`."""
        task = self.task
        raster = task.terrain.raster
        x, y, heading = self.wheel_xy()
        v_cmd, w_cmd = task.commands[:, 0], task.commands[:, 1]
        sign = np.where(v_cmd < 0.0, -1.0, 1.0)  # the direction of travel along the heading
        leading = np.where(sign[:, None] > 0, np.array([1, 1, 0, 0], bool), np.array([0, 0, 1, 1], bool))
        under = raster.lookup(x, y)

        def rise_within(reach: float) -> np.ndarray:  # (N, 4): the ground that far ahead minus the ground below
            d = sign[:, None] * reach
            return raster.lookup(x + d * heading[:, 0:1], y + d * heading[:, 1:2]) - under

        prepare = ((rise_within(self.pre_reach) > self.rise) & leading).any(axis=1)
        lead_up = ((rise_within(self.lead_reach) > self.rise) & leading).any(axis=1)
        trail_up = ((rise_within(self.trail_reach) > self.rise) & ~leading).any(axis=1)
        step_ahead = rise_within(self.approach)
        climbing = ((step_ahead > self.rise) & leading).any(axis=1) | prepare | lead_up | trail_up
        self.active = climbing  # where the gait departs from plain tracking: what algo.params.teacher_guide keeps
        self.near_edge = climbing | (step_ahead < -self.rise).any(axis=1)
        knees = np.zeros((task.num_envs, 4))
        for mask, (a_leading, a_trailing) in zip((prepare, lead_up, trail_up), self.phases, strict=True):
            knees[mask] = np.where(leading[mask], a_leading, a_trailing)
        knees *= sign[:, None]
        v_cmd = np.where(climbing, sign * np.maximum(np.abs(v_cmd), self.climb_speed), v_cmd)  # momentum
        v = v_cmd + self.speed_gain * (v_cmd - task.base_lin_vel[:, 0])
        w = w_cmd + self.yaw_gain * (w_cmd - task.base_ang_vel[:, 2])
        rim = v[:, None] - self.side[None] * w[:, None] * self.half_track  # m/s per wheel
        wheels = -rim / self.wheel_radius / self.wheel_scale  # a positive wheel velocity rolls backward
        return np.clip(np.concatenate([knees, wheels], axis=1), -1.0, 1.0).astype(np.float32)


def gait_policy(env, **kwargs):
    """The gait as a policy of a single env (``env.unwrapped.task``, its env 0; the observation goes unread): what
    ``evaluate.py policy=climbing``, the step benchmark's runners and the gait search play. ``kwargs``:
    :class:`ClimbingTeacher`'s."""
    teacher = ClimbingTeacher(env.unwrapped.task, **kwargs)
    return lambda obs: teacher()[0]
