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
on the step benchmark (0.15 and 0.20 m up, 0.15 m flights of 0.8 m treads, start yaw +-0.5 rad).

**Real stairs** (``stairs=True``): where a side's ground from its trailing wheel to a little past its leading rim
(``stairs_reach``) rises two or more times and never drops, the robot stands on a flight whose treads are shorter
than it (two rises 0.30 m apart under a 0.57 m wheelbase): the phases above would act at every edge at once, so
the stairs mode takes over. Its arms hold a ``stairs_cruise`` posture, lift the leading wheels
(``stairs_lead``) when one is within ``stairs_lead_reach`` of a riser, and swing back to load the leading wheels
(``stairs_trail``) when a trailing one is within ``stairs_trail_reach`` (it wins); a pitch feedback on every arm
(``stairs_pitch_gain`` per unit of the sine of the nose-up pitch above ``stairs_pitch``) and a speed per phase,
cut to ``stairs_guard_speed`` while the pitch exceeds ``stairs_max_pitch``. Its numbers come from a cross-entropy
search on the 5-step flights of 0.10 and 0.125 m risers, 0.30 m treads (``scripts/tune_climbing_gait.py
--stairs``). It climbs 0.10 m risers on real treads; 0.15 m it does not: the hind wheels' climb needs more
friction than the model's within the arms' reach (docs/explanation/climbing-gait.md#on-real-stairs,
``scripts/stairs_statics.py``).

It turns poorly (a skid-steered stance: yaw-rate error about 0.44 rad/s on flat ground), so a student learns no
turning from it. ``tests/tasks/velocity/test_teacher.py`` scores it on the step benchmark.
"""

from __future__ import annotations

import math

import numpy as np

from dexwheel.tasks.velocity.terrain import yaw_heading

#: Samples of a side's ground profile from its trailing wheel to past its leading rim (the stairs mode's test).
STAIRS_SAMPLES = 64


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
                 trail: tuple[float, float] = (-1.0, -0.293), speed_gain: float = 1.0, yaw_gain: float = 1.0,
                 stairs: bool = True, stairs_reach: float = 0.1, stairs_lead_reach: float = 0.106,
                 stairs_trail_reach: float = 0.137, stairs_cruise: tuple[float, float] = (0.272, -0.284),
                 stairs_lead: tuple[float, float] = (1.0, -1.0), stairs_trail: tuple[float, float] = (-0.988, -0.192),
                 stairs_speed: float = 0.709, stairs_lead_speed: float = 0.386, stairs_trail_speed: float = 0.995,
                 stairs_speed_gain: float = 0.984, stairs_pitch_gain: float = 1.34, stairs_pitch: float = 0.374,
                 stairs_max_pitch: float = 0.47, stairs_guard_speed: float = 0.5) -> None:  # fmt: skip
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
        self.stairs, self.stairs_reach = stairs, r + stairs_reach
        self.stairs_lead_reach, self.stairs_trail_reach = r + stairs_lead_reach, r + stairs_trail_reach
        self.stairs_phases = (stairs_cruise, stairs_lead, stairs_trail)  # (leading, trailing), a later one wins
        self.stairs_speeds = (stairs_speed, stairs_lead_speed, stairs_trail_speed)
        self.stairs_speed_gain, self.stairs_pitch_gain = stairs_speed_gain, stairs_pitch_gain
        self.stairs_sin_pitch, self.stairs_sin_max = math.sin(stairs_pitch), math.sin(stairs_max_pitch)  # libm
        self.stairs_guard_speed = stairs_guard_speed
        self.on_stairs = np.zeros(task.num_envs, dtype=bool)

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
        """The actions for every env's current state; sets :attr:`active`, :attr:`near_edge` and :attr:`on_stairs`."""
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
        knees = np.zeros((task.num_envs, 4))
        for mask, (a_leading, a_trailing) in zip((prepare, lead_up, trail_up), self.phases, strict=True):
            knees[mask] = np.where(leading[mask], a_leading, a_trailing)
        knees *= sign[:, None]
        v_cmd = np.where(climbing, sign * np.maximum(np.abs(v_cmd), self.climb_speed), v_cmd)  # momentum
        v = v_cmd + self.speed_gain * (v_cmd - task.base_lin_vel[:, 0])
        self.on_stairs = self._on_stairs(x, y, heading, sign) if self.stairs else np.zeros(task.num_envs, bool)
        if self.on_stairs.any():
            stairs_knees, stairs_v = self._stairs_mode(rise_within, leading, sign)
            knees = np.where(self.on_stairs[:, None], stairs_knees, knees)
            v = np.where(self.on_stairs, stairs_v, v)
        self.active = climbing | self.on_stairs  # where the gait departs from plain tracking (teacher_guide keeps it)
        self.near_edge = self.active | (step_ahead < -self.rise).any(axis=1)
        w = w_cmd + self.yaw_gain * (w_cmd - task.base_ang_vel[:, 2])
        rim = v[:, None] - self.side[None] * w[:, None] * self.half_track  # m/s per wheel
        wheels = -rim / self.wheel_radius / self.wheel_scale  # a positive wheel velocity rolls backward
        return np.clip(np.concatenate([knees, wheels], axis=1), -1.0, 1.0).astype(np.float32)

    def _on_stairs(self, x: np.ndarray, y: np.ndarray, heading: np.ndarray, sign: np.ndarray) -> np.ndarray:
        """(N,): a side's ground, from its trailing wheel's centre to ``stairs_reach`` past its leading rim (along the
        heading in the direction of travel), rises at least twice and never drops: a flight whose treads are
        shorter than the robot."""
        lead_i, trail_i = np.array([0, 1]), np.array([2, 3])  # fl fr, hl hr: the leading pair going forward
        fwd = sign[:, None] > 0
        tx, ty = np.where(fwd, x[:, trail_i], x[:, lead_i]), np.where(fwd, y[:, trail_i], y[:, lead_i])
        span = np.abs(
            (x[:, lead_i] - x[:, trail_i]) * heading[:, 0:1] + (y[:, lead_i] - y[:, trail_i]) * heading[:, 1:2]
        )
        d = np.linspace(0.0, 1.0, STAIRS_SAMPLES)[None, None, :] * (span + self.stairs_reach)[..., None]
        d = d * sign[:, None, None]
        raster = self.task.terrain.raster
        ground = raster.lookup(tx[..., None] + d * heading[:, 0:1, None], ty[..., None] + d * heading[:, 1:2, None])
        steps = np.diff(ground, axis=2)
        rises, drops = (steps > self.rise).sum(axis=2), (steps < -self.rise).sum(axis=2)
        return ((rises >= 2) & (drops == 0)).any(axis=1)

    def _stairs_mode(self, rise_within, leading: np.ndarray, sign: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The stairs mode's knee actions ``(N, 4)`` and forward rim speed ``(N,)`` for every env."""
        task = self.task
        lead = ((rise_within(self.stairs_lead_reach) > self.rise) & leading).any(axis=1)
        trail = ((rise_within(self.stairs_trail_reach) > self.rise) & ~leading).any(axis=1)
        cruise, lead_p, trail_p = self.stairs_phases
        knees = np.where(leading, cruise[0], cruise[1])
        speed = np.full(task.num_envs, self.stairs_speeds[0])
        for mask, (a_leading, a_trailing), v in ((lead, lead_p, self.stairs_speeds[1]),
                                                 (trail, trail_p, self.stairs_speeds[2])):  # fmt: skip
            knees = np.where(mask[:, None], np.where(leading, a_leading, a_trailing), knees)
            speed = np.where(mask, v, speed)
        nose_up = sign * task.world_z_in_base[:, 0]  # the sine of the pitch, nose up in the direction of travel
        knees = knees - self.stairs_pitch_gain * (nose_up - self.stairs_sin_pitch)[:, None]
        speed = np.where(nose_up > self.stairs_sin_max, self.stairs_guard_speed, speed)
        v = sign * speed
        return knees * sign[:, None], v + self.stairs_speed_gain * (v - task.base_lin_vel[:, 0])


def gait_policy(env, **kwargs):
    """The gait as a policy of a single env (``env.unwrapped.task``, its env 0; the observation goes unread): what
    ``evaluate.py policy=climbing``, the step benchmark's runners and the gait search play. ``kwargs``:
    :class:`ClimbingTeacher`'s."""
    teacher = ClimbingTeacher(env.unwrapped.task, **kwargs)
    return lambda obs: teacher()[0]
