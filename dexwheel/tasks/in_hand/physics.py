"""The object tasks' simulation settings (:class:`InHandPhysicsCfg`, the config's ``physics`` section), without MuJoCo
(the config, the grasp cache and both backends read it).

``timestep``: the physics step (s), ``1 / (control_hz * timestep)`` of them per control step. 10 ms x 5 at 20 Hz is
the anchors' step (MuJoCo Playground's LEAP hand: 10 ms x 5; HORA: 8.3 ms x 6) and a fifth of the spec's 2 ms x 25.

``armature``: the hand's joints' reflected inertia (kg m^2). The G20's position actuators clamp their force at 8 N m;
MuJoCo's implicit integrators drop a clamped actuator's damping from the implicit step, so a saturated joint is
damped explicitly, which is stable only while ``kv * timestep / (2 * inertia) < 1``. With the spec's 0.01 at 10 ms
the fingers fall into a +-8 N m limit cycle (period two steps, 3.7 rad/s) whenever a command saturates them (194 of
200 closings of the grasp sampler; docs/notes/2026-12-in-hand-learnable.md); :data:`ARMATURE` (0.05, 1.25 x
``kv * timestep / 2`` at 10 ms) ends it, and at 2 ms the same rule gives the spec's 0.01. A value below
``kv * timestep / 2`` is refused. The pose task keeps the spec's 2 ms and 0.01.

``contact``: the contact model of the hand and the object (:func:`dexwheel.tasks.in_hand.scene.scene_spec` builds it):

* ``pads`` (the object tasks'): a flat pad (a box) on each distal segment's palmar face; every hand geom takes
  precedence over the object (MuJoCo's geom ``priority``), so its own friction and ``condim`` decide a contact:
  sliding friction only (``condim`` 3, no torsional or rolling friction, as the anchors' hands), the object's
  ``friction`` on the pads and the distal and middle segments, ``palm_friction`` on the palm and the proximal
  segments (the thumb's metacarpal and proximal too: Playground's LEAP palm is 0.2-0.3); contacts nearly hard
  (``solimp`` 0.99 0.999 1 mm: at the spec's 0.9 0.95 and the 10 ms step the saturated fingers pressed 5-14 mm into
  the object), their time constant the step's smallest stable one (2 x ``timestep``: MuJoCo's floor).
* ``spec``: the hand's spec geoms as every task builds them (friction 1.0, torsional 0.5 m, rolling 0.01 m) against
  an object with ``condim`` 4: MuJoCo takes the larger of each coefficient, so every contact resisted spinning with
  the hand's 0.5 m torsional friction (the object's 0.005 m never applied). Today's scene before issue 70.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from dexwheel.fields import ConfigFieldError

#: The physics steps the object tasks take (s): coarser loses grasps (25 ms: 2 of 64 cached grasps dropped in 10 s).
TIMESTEP_RANGE = (0.0005, 0.0125)
TIMESTEP = 0.005
#: The actuators' damping (N m s / rad; the spec's kv) and the armature that keeps their saturated damping stable at
#: :data:`TIMESTEP` (1.25 x kv * timestep / 2).
KV = 8.0
ARMATURE = 0.025
ARMATURE_MAX = 0.5
CONTACTS = ("pads", "spec")
#: The palm's and proximal segments' sliding friction in the ``pads`` model, and what it may be.
PALM_FRICTION, PALM_FRICTION_RANGE = 0.3, (0.05, 2.0)


@dataclass(frozen=True)
class InHandPhysicsCfg:
    """See the module docstring."""

    timestep: float = TIMESTEP
    armature: float = ARMATURE
    contact: str = "pads"
    palm_friction: float = PALM_FRICTION

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def options(self) -> str:
        """The grasp sampler's options that make a cache with these settings."""
        return " ".join(f"--{k.replace('_', '-')} {v:g}" if not isinstance(v, str) else f"--{k} {v}"
                        for k, v in self.as_dict().items())  # fmt: skip


#: The ``pads`` model's fingertip pads: a box on each distal segment's palmar face (``+x`` of a finger's distal body,
#: ``+y`` of the left thumb's, ``-y`` of the right's), half sizes and centres (m) in the body's frame: 4 mm thick,
#: 12-13 mm wide and 15 mm long, their faces 0.1-2.5 mm proud of the capsule (the capsule tapers toward the tip).
PAD_HALF, PAD_POS = (0.002, 0.006, 0.0075), (0.0045, 0.0, 0.0105)
THUMB_PAD_HALF, THUMB_PAD_POS = (0.0065, 0.002, 0.0075), (0.0, 0.006, 0.0105)
#: The ``pads`` model's contact impedance (solimp: dmin, dmax, width; MuJoCo's midpoint 0.5 and power 2 after them):
#: nearly hard.
PAD_SOLIMP = (0.99, 0.999, 0.001)
#: The ``pads`` model's contact time constant (s): MuJoCo's default, the same at every step the tasks take (an object
#: task's gait turns the object alike at 2 and 5 ms with it; docs/notes/2026-12-in-hand-learnable.md).
PAD_SOLREF = 0.02
#: The hand's collision shapes on the object's friction in the ``pads`` model (the rest take ``palm_friction``).
GRIP_SUFFIXES = ("_pad_col",)
#: The ``pads`` model's precedence of every hand shape over the object (MuJoCo's geom ``priority``) and the contact
#: dimension (sliding friction only).
PAD_PRIORITY, PAD_CONDIM = 1, 3


@dataclass(frozen=True)
class Pad:
    """One fingertip pad of the ``pads`` model: its collision shape's ``name``, the ``body`` it is fixed to, its box's
    half sizes ``half`` and centre ``pos`` (m, the body's frame)."""

    name: str
    body: str
    half: tuple[float, float, float]
    pos: tuple[float, float, float]


def pads(hand: str) -> tuple[Pad, ...]:
    """The ``pads`` model's pads of the ``hand`` (``left`` / ``right``; the thumb's pad mirrored): the four fingers',
    then the thumb's. Both backends' scenes add them (:func:`dexwheel.tasks.in_hand.scene.scene_spec`, the Isaac Lab
    hand's spawner)."""
    side = 1.0 if hand == "left" else -1.0
    tx, ty, tz = THUMB_PAD_POS
    fingers = tuple(Pad(f"{f}_pad_col", f"{f}_distal", PAD_HALF, PAD_POS) for f in ("index", "middle", "ring", "pinky"))
    return (*fingers, Pad("thumb_pad_col", "thumb_distal", THUMB_PAD_HALF, (tx, side * ty, tz)))


def pad_solref(timestep: float) -> tuple[float, float]:
    """The ``pads`` model's ``solref`` at ``timestep``: :data:`PAD_SOLREF`, never below MuJoCo's floor of two steps."""
    return (max(PAD_SOLREF, 2.0 * timestep), 1.0)


#: What a grasp cache that records no physics was made with (the spec's, before the object tasks had their own).
LEGACY = InHandPhysicsCfg(timestep=0.002, armature=0.01, contact="spec")


def min_armature(timestep: float) -> float:
    """The smallest armature (kg m^2) at which a saturated actuator's explicit damping is stable."""
    return KV * timestep / 2.0


def validate_physics(p: InHandPhysicsCfg, control_hz: float | None = None, where: str = "physics") -> None:
    """Refuse, in one line naming the key and its allowed values, settings the tasks cannot run."""
    lo, hi = TIMESTEP_RANGE
    dt = p.timestep
    if not (isinstance(dt, (int, float)) and not isinstance(dt, bool) and math.isfinite(dt) and lo <= dt <= hi):
        raise ConfigFieldError(f"{where}.timestep", f"{where}.timestep: {dt!r} s is outside [{lo:g}, {hi:g}] s "
                                                    "(coarser steps lose grasps)")  # fmt: skip
    if control_hz is not None and math.isfinite(control_hz) and control_hz > 0:
        n = round(1.0 / (control_hz * dt))
        if n < 1 or abs(n * dt * control_hz - 1.0) > 1e-6:
            raise ConfigFieldError(f"{where}.timestep", f"{where}.timestep: {dt:g} s does not divide the control step "
                                                        f"1 / control_hz = {1.0 / control_hz:g} s into whole physics "
                                                        "steps")  # fmt: skip
    a, least = p.armature, min_armature(dt)
    if not (
        isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a) and least <= a <= ARMATURE_MAX
    ):
        raise ConfigFieldError(f"{where}.armature", f"{where}.armature: {a!r} kg m^2 is outside [{least:g}, "
                                                    f"{ARMATURE_MAX:g}] (below kv * timestep / 2 = {least:g} a "
                                                    "saturated finger chatters)")  # fmt: skip
    if p.contact not in CONTACTS:
        raise ConfigFieldError(f"{where}.contact", f"{where}.contact: {p.contact!r}; choose one of {list(CONTACTS)}")
    f, (lo, hi) = p.palm_friction, PALM_FRICTION_RANGE
    if not (isinstance(f, (int, float)) and not isinstance(f, bool) and math.isfinite(f) and lo <= f <= hi):
        raise ConfigFieldError(f"{where}.palm_friction", f"{where}.palm_friction: {f!r} is outside [{lo:g}, {hi:g}]")
