"""The sections every hand task's config holds (the pose task's :class:`~dexwheel.tasks.hand_pose.config.
G20HandConfig`, the object tasks' :class:`~dexwheel.tasks.in_hand.config.InHandCfg`), one class each, and the control
rate's check.

Each section is what one Hydra group sets (``action.hand.actions``, ``drive.hand.drive``, ``composer.hand.composer``,
``collision.hand.collision``; a task's own defaults in ``task.<name>.<section>``), so a hand task is configured by the
same keys whichever it is. A task picks its defaults (the object tasks: PD, delta actions, no projection) and refuses
what it cannot run by the field's dotted name (``drive.kind``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.action_delay import delay_range
from dexwheel.tasks.hand.action_path import HOLD_JOINTS, HOLD_POSE, HandActionPath

DRIVES = ("hard_write", "pd")
ACTIONS = ("normalized", "sdk255", "nominal", "delta")
OUT_OF_RANGE = ("raise", "clip")


def _bad(field: str, detail: str, env: str) -> ConfigFieldError:
    return ConfigFieldError(field, f"{field}: {detail}", env)


def _choice(field: str, value: Any, allowed: tuple[str, ...], env: str) -> None:
    if value not in allowed:
        raise _bad(field, f"{value!r} is not allowed; choose one of {list(allowed)}", env)


def _number(field: str, value: Any, env: str, *, positive: bool) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        raise _bad(field, f"must be finite and {'>' if positive else '>='} 0, got {value!r}", env)


@dataclass(frozen=True)
class HandActionCfg:
    """The hand's actions through the action path (:mod:`dexwheel.tasks.hand.action`)."""

    #: The mapping of an action to joint goals: ``normalized`` ([-1, 1] per joint), ``sdk255`` (the SDK's 0..255),
    #: ``nominal`` (radians), ``delta`` (the goal moved by ``delta_scale * a`` per step).
    kind: str = "normalized"
    #: ``"raise"``: an out-of-range action raises ActionError; ``"clip"``: clipped. NaN/inf are refused either way.
    out_of_range: str = "raise"
    #: ``kind="delta"``: radians per step at action 1.
    delta_scale: float = 0.05
    #: Latency: the action of this many control steps ago is applied (an int, or (low, high) drawn per env at each
    #: reset); :mod:`dexwheel.tasks.action_delay`.
    delay_steps: int | tuple[int, int] = 0

    def __post_init__(self) -> None:
        if isinstance(self.delay_steps, (tuple, list)):
            object.__setattr__(self, "delay_steps", tuple(self.delay_steps))

    def check(self, env: str) -> None:
        _choice("actions.kind", self.kind, ACTIONS, env)
        _choice("actions.out_of_range", self.out_of_range, OUT_OF_RANGE, env)
        _number("actions.delta_scale", self.delta_scale, env, positive=True)
        delay_range(self.delay_steps, "actions.delay_steps")


@dataclass(frozen=True)
class HandDriveCfg:
    """How a joint goal reaches the joints (:mod:`dexwheel.sim.hand_drive`)."""

    #: ``hard_write`` (the vendor bridge: slew, project out of collision, write the pose) or ``pd`` (actuators).
    kind: str = "hard_write"
    #: The fastest a goal moves a joint (rad per simulated second; 0: it jumps).
    slew_rad_s: float = 5.0
    #: The vendor bridge's ``--track-test``: collision projection off and slew 0 (overrides both).
    track_test: bool = False

    @property
    def slew(self) -> float:
        """The slew actually used (0 under ``track_test``)."""
        return 0.0 if self.track_test else float(self.slew_rad_s)

    def check(self, env: str) -> None:
        _choice("drive.kind", self.kind, DRIVES, env)
        _number("drive.slew_rad_s", self.slew_rad_s, env, positive=False)


@dataclass(frozen=True)
class HandComposerCfg:
    """The composer layers of the action path (:mod:`dexwheel.tasks.hand.action_path`): ``("policy", "hold")`` holds
    ``hold_joints`` (a group: thumb, index, middle, ring, pinky, fingers; or joint names) at the goal preset
    ``hold_pose`` while the policy drives the rest; without ``hold`` both keep their defaults."""

    layers: tuple[str, ...] = ("policy",)
    hold_joints: str | tuple[str, ...] = HOLD_JOINTS
    hold_pose: str = HOLD_POSE

    def __post_init__(self) -> None:  # lists (Hydra's, JSON's) as the tuples a frozen config holds
        object.__setattr__(self, "layers", tuple(self.layers))
        if not isinstance(self.hold_joints, str):
            object.__setattr__(self, "hold_joints", tuple(self.hold_joints))

    def check(self, env: str) -> None:
        HandActionPath.check(self.layers, self.hold_joints, self.hold_pose)


@dataclass(frozen=True)
class HandCollisionCfg:
    """The hand's contacts, and the hard-write drive's collision projection (:mod:`dexwheel.sim.projection`)."""

    #: Project a hard-written pose out of collision (hard-write only: PD has real contacts).
    projection: bool = True
    penetration_tol: float = 5e-4
    projection_iters: int = 12
    #: Try the joints that move no body of a too-deep contact together first (one check); False: strictly per joint.
    projection_group_free: bool = True
    #: Body pairs whose contacts are excluded (None: the spec's pairs, ``robots.g20``); e.g. add
    #: ``("thumb_distal", "hand_base")`` to let the thumb pass through the palm.
    contact_excludes: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self) -> None:
        if self.contact_excludes is not None:
            object.__setattr__(self, "contact_excludes", tuple(tuple(p) for p in self.contact_excludes))

    def check(self, env: str) -> None:
        _number("collision.penetration_tol", self.penetration_tol, env, positive=False)
        iters = self.projection_iters
        if isinstance(iters, bool) or int(iters) != iters or iters < 1:
            raise _bad("collision.projection_iters", f"must be an integer >= 1, got {iters!r}", env)
        bad = [p for p in self.contact_excludes or () if len(p) != 2]
        if bad:
            raise _bad("collision.contact_excludes", f"entries must be (body, body) pairs, got {bad}", env)


#: The hand sections by field name: a task config holds each under this name.
SECTIONS = {"actions": HandActionCfg, "drive": HandDriveCfg, "composer": HandComposerCfg,
            "collision": HandCollisionCfg}  # fmt: skip


def by_kind(cfg: Any, value: Any, key: str) -> Any:
    """A section given by its kind alone (``drive="pd"``, ``actions="sdk255"``) as the change of its ``kind``."""
    return {"kind": value} if isinstance(value, str) else value


#: :func:`~dexwheel.tasks.config_builder.build_cfg`'s ``convert`` for the sections with a kind
KIND_SHORTHANDS = {"actions": by_kind, "drive": by_kind}


def check_sections(cfg: Any, env: str) -> None:
    """Each hand section of ``cfg`` checked, naming the bad field by its dotted name."""
    for name in SECTIONS:
        getattr(cfg, name).check(env)


def projection_on(cfg: Any) -> bool:
    """Whether collision projection runs: hard-write only, never under ``track_test``."""
    return bool(cfg.collision.projection) and cfg.drive.kind == "hard_write" and not cfg.drive.track_test


def control_substeps(control_hz: float, timestep: float, env: str = "G20Hand") -> int:
    """Physics steps per control step at ``control_hz``, which must be ``(1 / timestep) / k`` for an integer ``k``
    (:class:`ConfigFieldError` naming ``control_hz`` of ``env`` otherwise): the hand task's and the bridge's check."""
    n = round(1.0 / (control_hz * timestep))
    if n < 1 or abs(n * timestep * control_hz - 1.0) > 1e-6:
        raise ConfigFieldError(
            "control_hz",
            f"control_hz={control_hz!r} must be (1 / timestep) / k for an integer k >= 1; "
            f"the timestep is {timestep} s, so e.g. {1 / timestep:g}, {1 / (2 * timestep):g}, {1 / (10 * timestep):g}",
            env,
        )
    return n
