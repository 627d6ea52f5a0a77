"""A scripted finger gait for the rolling task (``G20Rotate-v0``): open-loop (it reads the episode's time, its start
pose and the task's joint command, never the object), a teacher a policy imitates before PPO
(``algo.params.teacher=finger_gait``) and the baseline ``scripts/evaluate.py policy=teacher`` scores.

The gait rolls the capsule lying in the hooked fingers about the flexion axis. Every joint it drives follows a
sinusoid, ``mean + amplitude cos(2 pi t / period + phase)``: each finger's knuckle pitch, middle joint and knuckle
roll (the four fingers share their numbers, the middle and pinky fingers ``offset`` later in the cycle than the index
and ring), and the thumb's four active joints, its tip low on the palm behind the capsule (toward the wrist), its stop.
The fingers' pads press on the capsule's top and draw it toward the wrist (the knuckles flexing), then ease off (the
pairs alternate); the capsule turns in place, its surface sliding on the low-friction palm, capsules and thumb
(the ``pads`` contact model). For the first ``ramp`` seconds the targets blend from the episode's start pose (the
grasp's joints) onto the cycle. The targets go through the task's action mapping: the delta action moves the command
toward them at its full rate (``delta_scale`` per step), an absolute mapping commands them.

:data:`DEFAULT_GAIT` comes from a cross-entropy search on the task itself (``scripts/tune_in_hand_gait.py``: 25 rounds
of 16 candidates on 12 fresh grasps each, 12 s, at the 5 ms step), and passes the gate (docs/how-to/in-hand.md, the
teacher): the rotation benchmark's protocol, >= 0.15 rad/s with <= 10 % drops on 64 fresh grasps. Every array is per
env: a parameter set per env turns each env with its own gait (the search).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from dexwheel.control import G20_MIMIC
from dexwheel.robots.g20 import ACTIVE_JOINTS

#: The tasks the gait is made for (the config's ``task``): the rolling task.
TEACHER_TASKS = ("rotate",)
FINGERS = ("index", "middle", "ring", "pinky")
#: The gait's joints: each finger's knuckle pitch, middle joint and knuckle roll (the four fingers share them, the
#: middle and pinky fingers ``offset`` later in the cycle), and the thumb's four active joints.
FINGER_JOINTS = ("mcp_pitch", "pip", "mcp_roll")
THUMB = ("thumb_cmc_yaw", "thumb_cmc_roll", "thumb_cmc_pitch", "thumb_mcp")
#: Every joint of the gait: a mean, an amplitude and a phase (rad) each.
GAIT_JOINTS = (*FINGER_JOINTS, *THUMB)


@dataclass(frozen=True)
class GaitParams:
    """The gait's numbers: ``period`` (s), ``offset`` (rad: the middle and pinky fingers' phase after the index and
    ring fingers'), and per joint of :data:`GAIT_JOINTS` its ``(mean, amplitude, phase)`` (rad): its target is
    ``mean + amplitude cos(2 pi t / period + phase)``, clipped to its limits."""

    period: float = 1.0
    offset: float = 0.0
    joints: dict[str, tuple[float, float, float]] = dataclasses.field(default_factory=dict)
    #: s: the targets move from the episode's start pose onto the cycle over this long (the grasp's joints blended
    #: into the gait's), so the gait starts without knocking the object out of the grasp
    ramp: float = 1.5

    def __post_init__(self) -> None:
        if not (math.isfinite(self.period) and self.period > 0.0):
            raise ValueError(f"period: a cycle takes a finite time > 0 s, got {self.period!r}")
        if not (math.isfinite(self.ramp) and self.ramp >= 0.0):
            raise ValueError(f"ramp: a finite time >= 0 s, got {self.ramp!r}")
        unknown = sorted(set(self.joints) - set(GAIT_JOINTS))
        if unknown:
            raise ValueError(f"joints: {unknown} are not the gait's; it drives {list(GAIT_JOINTS)}")
        full = {j: tuple(float(v) for v in self.joints.get(j, (0.0, 0.0, 0.0))) for j in GAIT_JOINTS}
        if any(len(v) != 3 for v in full.values()):
            raise ValueError("joints: each joint takes (mean, amplitude, phase)")
        object.__setattr__(self, "joints", full)

    def vector(self) -> np.ndarray:
        """The numbers as one row (the search's): period, offset, each joint's mean, amplitude and phase, ramp."""
        return np.array([self.period, self.offset, *(v for j in GAIT_JOINTS for v in self.joints[j]), self.ramp])

    @classmethod
    def from_vector(cls, x: np.ndarray) -> GaitParams:
        x = [float(v) for v in x]
        return cls(x[0], x[1], {j: tuple(x[2 + 3 * k : 5 + 3 * k]) for k, j in enumerate(GAIT_JOINTS)}, x[-1])

    def as_dict(self) -> dict:
        return {"period": self.period, "offset": self.offset, "joints": {j: list(v) for j, v in self.joints.items()},
                "ramp": self.ramp}  # fmt: skip


PARAM_DIM = 3 + 3 * len(GAIT_JOINTS)
_IDX = {j: i for i, j in enumerate(ACTIVE_JOINTS)}
_COLUMNS = [[_IDX[f"{f}_{j}"] for f in FINGERS] for j in FINGER_JOINTS] + [[_IDX[j]] for j in THUMB]


def gait_targets(params: np.ndarray, t: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """The gait's active-joint targets ``(N, 16)`` at times ``t`` ``(N,)`` (s) for parameter rows ``params``
    ``(N, PARAM_DIM)`` (:meth:`GaitParams.vector`'s order), clipped to the joints' limits; with ``start`` ``(N, 16)``
    (the episodes' start poses) blended from it onto the cycle over each row's ``ramp``."""
    p = np.atleast_2d(params)
    phase = 2.0 * math.pi * t / p[:, 0]
    lag = np.array([0.0, 1.0, 0.0, 1.0])  # index, middle, ring, pinky: the second pair ``offset`` later
    q = np.zeros((len(t), len(ACTIVE_JOINTS)))
    for k, cols in enumerate(_COLUMNS):
        mean, amp, ph = p[:, 2 + 3 * k], p[:, 3 + 3 * k], p[:, 4 + 3 * k]
        if len(cols) == 1:
            q[:, cols[0]] = mean + amp * np.cos(phase + ph)
        else:
            q[:, cols] = mean[:, None] + amp[:, None] * np.cos((phase + ph)[:, None] + p[:, 1:2] * lag)
    if start is not None:
        ramp = p[:, -1]
        w = np.where(ramp > 0.0, np.clip(t / np.where(ramp > 0.0, ramp, 1.0), 0.0, 1.0), 1.0)[:, None]
        q = np.where(w >= 1.0, q, start + w * (q - start))
    return np.clip(q, G20_MIMIC.active_lower, G20_MIMIC.active_upper)


class FingerGaitTeacher:
    """The gait's actions ``(N, A)`` for an :class:`~dexwheel.tasks.in_hand.task.InHandTask` (its action mapping, its
    envs' episode times and commands), one parameter set for all envs (``params``, default :data:`DEFAULT_GAIT`) or
    one per env (``(N, PARAM_DIM)``).
    :attr:`active` marks every env (the gait acts everywhere: what ``algo.params.teacher_guide`` keeps)."""

    def __init__(self, task, params: GaitParams | np.ndarray | None = None) -> None:
        if task.cfg.composer.layers != ("policy",):
            raise ValueError(f"the finger gait drives every joint; this task's composer layers are "
                             f"{list(task.cfg.composer.layers)} (composer=policy)")  # fmt: skip
        if task.delay is not None:
            raise ValueError("the finger gait commands the joints now; this task delays its actions "
                             "(actions.delay_steps=0)")  # fmt: skip
        self.task = task
        p = (params or DEFAULT_GAIT).vector() if not isinstance(params, np.ndarray) else params
        self.params = np.broadcast_to(np.atleast_2d(p), (task.num_envs, PARAM_DIM)).copy()
        self.active = np.ones(task.num_envs, dtype=bool)

    def targets(self) -> np.ndarray:
        """The joints' targets for the coming step ``(N, 16)``."""
        task = self.task
        return gait_targets(self.params, (task.elapsed + 1) * task.dt, task.start_joints)

    def __call__(self) -> np.ndarray:
        task = self.task
        target = self.targets()
        actions = task.actions
        if actions.kind == "delta":
            a = np.clip((target - task.command) / actions.delta_scale, -1.0, 1.0)
        else:
            a = actions.hold_action(target)
        return a.astype(np.float32)


#: The searched gait (scripts/tune_in_hand_gait.py; docs/notes/2026-12-in-hand-learnable.md).
DEFAULT_GAIT = GaitParams(
    period=0.52,
    offset=1.882,
    joints={
        "mcp_pitch": (0.481, 0.179, 0.806),
        "pip": (0.765, 0.023, -1.975),
        "mcp_roll": (-0.123, 0.004, -1.817),
        "thumb_cmc_yaw": (0.766, 0.153, -0.386),
        "thumb_cmc_roll": (1.172, 0.15, -0.138),
        "thumb_cmc_pitch": (0.577, 0.058, 1.292),
        "thumb_mcp": (1.247, 0.146, 0.173),
    },
    ramp=2.79,
)


def gait_policy(env, params: GaitParams | None = None):
    """The gait as a policy of a single env (``env.unwrapped.task``, its env 0; the observation goes unread): what
    ``evaluate.py policy=teacher`` and the benchmark's runners play."""
    teacher = FingerGaitTeacher(env.unwrapped.task, params)
    return lambda obs: teacher()[0]
