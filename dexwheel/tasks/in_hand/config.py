"""The in-hand tasks' configuration (``G20Rotate-v0``, ``G20RotateZ-v0``, ``G20Reorient-v0``; Hydra
``task=in_hand_rotate`` / ``in_hand_rotate_z`` / ``in_hand_reorient``), without MuJoCo: sections (object, actions,
drive, commands, physics) and the term tables, built by the one config builder (:mod:`dexwheel.tasks.config_builder`).

``G20Rotate-v0`` rolls a capsule lying across the fingers about the flexion axis (the hand's strong axis: the
flexion joints sweep 50-60 deg about it, the side joints 2.5-6 deg about the palm normal), ``G20RotateZ-v0`` spins
the 6 cm cube about the palm normal (HORA's and the LEAP hand's axis), ``G20Reorient-v0`` turns the cube to goals.

The object tasks drive the hand's PD actuators only: the real hand's servos are position-controlled, and an object
is moved by contact forces, which a hard-written pose does not have (it teleports the fingers through the object's
surface and resolves the penetration afterwards), so ``drive="hard_write"`` is refused naming that reason.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from dexwheel.fields import ConfigFieldError, check_types
from dexwheel.tasks.config_builder import build_cfg
from dexwheel.tasks.hand.config import (
    KIND_SHORTHANDS,
    HandActionCfg,
    HandCollisionCfg,
    HandComposerCfg,
    HandDriveCfg,
    check_sections,
)
from dexwheel.tasks.in_hand.objects import ObjectSpec, validate_object
from dexwheel.tasks.in_hand.physics import InHandPhysicsCfg, validate_physics
from dexwheel.tasks.terms import (
    EventTermCfg,
    ObservationTermCfg,
    RewardTermCfg,
    TerminationTermCfg,
    check_params,
    validate_terms,
)

#: ``rotate``: roll a capsule lying across the fingers about the flexion axis (``G20Rotate-v0``); ``rotate_z``: spin
#: the object about the palm normal (``G20RotateZ-v0``); ``reorient``: turn it to a goal orientation.
TASKS = ("rotate", "rotate_z", "reorient")
_R = "dexwheel.tasks.in_hand.rewards:"
_G = "dexwheel.tasks.mdp:"  # the generic terms
_O = "dexwheel.tasks.in_hand.observations:"
_T = "dexwheel.tasks.in_hand.terminations:"
_E = "dexwheel.tasks.in_hand.events:"


#: The object tasks' hand sections (:mod:`dexwheel.tasks.hand.config`): delta actions, clipped (HORA's and the LEAP
#: hand's: small corrections, 1 rad/s at 20 Hz); the PD drive, the only one they take; no collision projection (the
#: hard-write drive's: PD meets the object with real contacts; its other settings take no part).
ACTIONS = HandActionCfg(kind="delta", out_of_range="clip")
DRIVE = HandDriveCfg(kind="pd")
COLLISION = HandCollisionCfg(projection=False)


@dataclass(frozen=True)
class InHandCommandCfg:
    """``axis``: the rotation axis in the world frame (the flexion axis, world ``+y``: the top of an object under the
    fingers rolls toward the wrist; ``rotate_z``: the palm's normal, up). ``success_tolerance``: a reorientation goal
    is reached within this angle (rad), and a new one drawn."""

    axis: tuple[float, float, float] = (0.0, 1.0, 0.0)
    success_tolerance: float = 0.4

    def __post_init__(self) -> None:
        object.__setattr__(self, "axis", tuple(self.axis))


#: The rolling task's object: a capsule 45 mm across and 80 mm long (the four fingers' span), 100 g, lying across the
#: fingers (a capsule, not a cylinder: MuJoCo meets a cylinder lying along the palm's edge with one contact that jumps
#: between its ends, and the cylinder creeps round at 0.2-0.8 rad/s with the hand held still).
ROLL_OBJECT = ObjectSpec("capsule", 0.045, 0.1, 1.0, length=0.08, orientation="across")
#: The rotation tasks' rewards, in the order they are summed: the angular velocity about the axis clipped at the target
#: rate (the task: 0.5 rad/s, issue 70's aim), the object's velocity, its drift beyond the 2 cm a turn needs and its
#: tilt off the axis (turn in place), effort and smoothness, and a drop's price. The penalties are scaled so that PPO's
#: starting exploration (actions of std 1.0) costs less than a quarter of what turning at 0.25 rad/s pays (0.25 per
#: step): the exploration budget, measured by scripts/reward_budget.py (docs/how-to/in-hand.md).
ROTATE_REWARDS: dict[str, RewardTermCfg] = {
    "rotation_velocity": RewardTermCfg(_R + "rotation_velocity", 1.0, {"max_rate": 0.5}),
    "object_lin_vel_l2": RewardTermCfg(_R + "object_lin_vel_l2", -0.5),
    "object_drift": RewardTermCfg(_R + "object_drift_excess", -50.0, {"free": 0.02}),
    "object_tilt": RewardTermCfg(_R + "object_tilt", -0.02),
    "joint_torques_l2": RewardTermCfg(_G + "joint_torques_l2", -1e-4),
    "action_rate_l2": RewardTermCfg(_G + "action_rate_l2", -1e-3),
    "termination_penalty": RewardTermCfg(_G + "is_terminated", -5.0),
}
ROTATE_Z_REWARDS: dict[str, RewardTermCfg] = dict(ROTATE_REWARDS)
#: The reorientation task's rewards: Isaac Lab's Shadow-hand shape (1 / (error + eps), a bonus per goal reached).
REORIENT_REWARDS: dict[str, RewardTermCfg] = {
    "orientation_tracking": RewardTermCfg(_R + "orientation_tracking", 0.1, {"eps": 0.1}),
    "goal_reached": RewardTermCfg(_R + "goal_reached", 50.0),
    "object_drift_l2": RewardTermCfg(_R + "object_drift_l2", -50.0),
    "joint_torques_l2": RewardTermCfg(_G + "joint_torques_l2", -1e-3),
    "action_rate_l2": RewardTermCfg(_G + "action_rate_l2", -0.01),
    "termination_penalty": RewardTermCfg(_G + "is_terminated", -10.0),
}
#: Observations: proprioception for the actor (joint positions with a history of 3 frames, the last action); the
#: object's state, the fingers' contacts and the command for the critic (an asymmetric actor-critic).
_CRITIC = {
    "object_pos_rel": ObservationTermCfg(_O + "object_pos_rel", group="critic"),
    "object_quat": ObservationTermCfg(_O + "object_quat", group="critic"),
    "object_lin_vel": ObservationTermCfg(_O + "object_lin_vel", group="critic"),
    "object_ang_vel": ObservationTermCfg(_O + "object_ang_vel", group="critic", scale=0.2),
    "fingertip_contacts": ObservationTermCfg(_O + "fingertip_contacts", group="critic"),
}
#: The rolling task's actor also reads a clock at the finger gait's period (``gait_phase``: sin and cos of the episode's
#: time at :data:`dexwheel.tasks.in_hand.teacher.DEFAULT_GAIT`'s 0.52 s): without it a student imitating the gait
#: holds the capsule still (docs/notes/2026-12-in-hand-learnable.md, step 5).
ROTATE_OBSERVATIONS: dict[str, ObservationTermCfg] = {
    "joint_pos": ObservationTermCfg(_G + "joint_pos", history_length=3),
    "last_action": ObservationTermCfg(_G + "last_action"),
    "gait_phase": ObservationTermCfg(_O + "gait_phase", {"period": 0.52}),
    **_CRITIC,
    "rotation_axis": ObservationTermCfg(_O + "rotation_axis", group="critic"),
}
#: The cube's spin about the palm normal has no gait: proprioception alone.
ROTATE_Z_OBSERVATIONS: dict[str, ObservationTermCfg] = {
    k: t for k, t in ROTATE_OBSERVATIONS.items() if k != "gait_phase"
}
REORIENT_OBSERVATIONS: dict[str, ObservationTermCfg] = {
    "joint_pos": ObservationTermCfg(_G + "joint_pos", history_length=3),
    "last_action": ObservationTermCfg(_G + "last_action"),
    "goal_quat": ObservationTermCfg(_O + "goal_quat"),  # the command: the actor needs it
    **_CRITIC,
}
#: A drop: the object's centre 2 cm below where it started (off the fingers or the palm), or 6 cm from it (out of the
#: hand: the rolling gait moves it up to 1.2 cm); the cube on the palm, 5 cm.
TERMINATIONS: dict[str, TerminationTermCfg] = {
    "object_dropped": TerminationTermCfg(_T + "object_dropped", {"max_distance": 0.06, "min_height": -0.02}),
}
ROTATE_Z_TERMINATIONS: dict[str, TerminationTermCfg] = {
    "object_dropped": TerminationTermCfg(_T + "object_dropped", {"max_distance": 0.05, "min_height": -0.02}),
}
#: Reset events, in order: the start state drawn from the grasp cache (its joints, the object's pose).
EVENTS: dict[str, EventTermCfg] = {
    "reset_from_grasps": EventTermCfg(_E + "reset_from_grasps"),
}
_TERM_KINDS = {"rewards": RewardTermCfg, "observations": ObservationTermCfg, "terminations": TerminationTermCfg,
               "events": EventTermCfg}  # fmt: skip


@dataclass(frozen=True)
class InHandCfg:
    """Every tunable of the in-hand tasks; ``gymnasium.make`` keywords are these fields, a section as a dict of its
    fields (or a hand section by its kind alone: ``actions="sdk255"``)."""

    task: str = "rotate"
    hand: str = "left"
    object: ObjectSpec = field(default_factory=lambda: ROLL_OBJECT)
    #: The grasp cache (a path; None: the one made for this hand and object, dexwheel/tasks/in_hand/grasps/).
    grasps: str | None = None
    #: The hand sections (:mod:`dexwheel.tasks.hand.config`), shared with the pose task.
    actions: HandActionCfg = field(default_factory=lambda: ACTIONS)
    drive: HandDriveCfg = field(default_factory=lambda: DRIVE)
    composer: HandComposerCfg = field(default_factory=HandComposerCfg)
    collision: HandCollisionCfg = field(default_factory=lambda: COLLISION)
    commands: InHandCommandCfg = field(default_factory=InHandCommandCfg)
    #: The simulation (:mod:`dexwheel.tasks.in_hand.physics`): the physics step, the joints' armature.
    physics: InHandPhysicsCfg = field(default_factory=InHandPhysicsCfg)
    control_hz: float = 20.0  # HORA's and the LEAP hand's rate
    episode_length_s: float = 20.0
    #: Append the "critic" observation group (the object's state): an asymmetric actor-critic.
    privileged_obs: bool = True
    observations: dict[str, ObservationTermCfg] = field(default_factory=lambda: dict(ROTATE_OBSERVATIONS))
    rewards: dict[str, RewardTermCfg] = field(default_factory=lambda: dict(ROTATE_REWARDS))
    terminations: dict[str, TerminationTermCfg] = field(default_factory=lambda: dict(TERMINATIONS))
    events: dict[str, EventTermCfg] = field(default_factory=lambda: dict(EVENTS))


def _bad(field_name: str, detail: str) -> ConfigFieldError:
    return ConfigFieldError(field_name, f"{field_name}: {detail}")


def rotate_cfg(robot: str = "g20_left") -> InHandCfg:
    """``G20Rotate-v0`` for ``robot`` (``g20_left`` / ``g20_right``): roll a 45 mm capsule lying across the fingers
    about the flexion axis."""
    return InHandCfg(hand=robot.removeprefix("g20_"))


def rotate_z_cfg(robot: str = "g20_left") -> InHandCfg:
    """``G20RotateZ-v0`` for ``robot``: spin the 6 cm cube about the palm normal (HORA's and the LEAP hand's axis)."""
    return InHandCfg(task="rotate_z", hand=robot.removeprefix("g20_"), object=ObjectSpec(),
                     commands=InHandCommandCfg(axis=(0.0, 0.0, 1.0)), observations=dict(ROTATE_Z_OBSERVATIONS),
                     rewards=dict(ROTATE_Z_REWARDS),
                     terminations=dict(ROTATE_Z_TERMINATIONS))  # fmt: skip


def reorient_cfg(robot: str = "g20_left") -> InHandCfg:
    """``G20Reorient-v0`` for ``robot``: turn the 6 cm cube to a goal orientation."""
    return InHandCfg(task="reorient", hand=robot.removeprefix("g20_"), object=ObjectSpec(),
                     commands=InHandCommandCfg(axis=(0.0, 0.0, 1.0)), observations=dict(REORIENT_OBSERVATIONS),
                     rewards=dict(REORIENT_REWARDS), terminations=dict(ROTATE_Z_TERMINATIONS))  # fmt: skip


#: Each task's own config.
TASK_CFGS = {"rotate": rotate_cfg, "rotate_z": rotate_z_cfg, "reorient": reorient_cfg}


def make_cfg(cfg: InHandCfg | None = None, **kwargs: Any) -> InHandCfg:
    """``cfg`` (default: the ``task`` keyword's own config, the rotation task's without it) with keyword changes
    applied (:func:`build_cfg`) and checked."""
    if cfg is None:
        task = kwargs.get("task", "rotate")
        if task not in TASKS:
            raise _bad("task", f"{task!r}; choose one of {list(TASKS)}")
        cfg = TASK_CFGS[task]()
    if "object" in kwargs and isinstance(kwargs["object"], dict):
        kwargs = {**kwargs, "object": {**dataclasses.asdict(cfg.object), **kwargs["object"]}}
    convert = {**KIND_SHORTHANDS, "object": lambda c, v, k: ObjectSpec(**v) if isinstance(v, dict) else v}
    cfg = build_cfg(cfg, kwargs, tables=_TERM_KINDS, convert=convert, env="G20InHand")
    validate(cfg)
    return cfg


def validate(cfg: InHandCfg) -> None:
    """Refuse a config the tasks cannot run, in one line naming the key and its allowed values."""
    check_types(cfg)
    if cfg.task not in TASKS:
        raise _bad("task", f"{cfg.task!r}; choose one of {list(TASKS)}")
    if cfg.hand not in ("left", "right"):
        raise _bad("hand", f"{cfg.hand!r}; choose one of ['left', 'right']")
    check_sections(cfg, "G20InHand")
    if cfg.drive.kind != "pd":
        raise _bad("drive.kind", f"{cfg.drive.kind!r}: the object tasks drive the hand's PD actuators only ('pd'): an "
                                 "object moves by contact forces, which a hard-written pose has not (it moves the "
                                 "fingers through the object's surface)")  # fmt: skip
    if cfg.drive.track_test:
        raise _bad("drive.track_test", "true: the vendor track test belongs to the pose task (G20Hand-v0); false here")
    if cfg.collision.projection:
        raise _bad("collision.projection", "true: collision projection is the hard-write drive's; the object tasks "
                                           "drive PD, whose contacts are real (collision=off)")  # fmt: skip
    validate_object(cfg.object, "object")
    for name, value, low in (("control_hz", cfg.control_hz, 0.0),
                             ("episode_length_s", cfg.episode_length_s, 0.0),
                             ("commands.success_tolerance", cfg.commands.success_tolerance, 0.0)):  # fmt: skip
        if not (math.isfinite(value) and value > low):
            raise _bad(name, f"must be a finite number > {low:g}, got {value!r}")
    validate_physics(cfg.physics, cfg.control_hz)
    axis = cfg.commands.axis
    if len(axis) != 3 or not all(map(math.isfinite, axis)) or math.hypot(*axis) < 1e-6:
        raise _bad("commands.axis", f"expected a non-zero (x, y, z), got {axis!r}")
    for section in _TERM_KINDS:
        table = getattr(cfg, section)
        validate_terms(table, section)
        check_params(table, section)
