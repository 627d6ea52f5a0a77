"""The bridge's settings: one typed, checked dataclass that the Hydra config (``configs/bridge.yaml``) fills.

The switches are the vendor bridge's (``--plan-nominal``, ``--pd-drive``, ``--no-collision-project``, ``--speed``,
``--slew-rad-s``, ``--headless``, ``--track-test``, ``--max-steps``); topic names, the DDS domain and
the rates are configuration, never constants (the vendor bridge dropped its hard-coded ``ROS_DOMAIN_ID``).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dexwheel.control import TimeoutPolicy
from dexwheel.fields import ConfigFieldError, check_types
from dexwheel.robots import get_robot
from dexwheel.tasks.hand.config import control_substeps
from dexwheel.tasks.in_hand.objects import SHAPES, ObjectSpec, validate_object

HANDS = ("left", "right")
#: Simulations the bridge runs the hand on (``backend=``): MuJoCo (``G20Hand-v0``) or Isaac Lab
#: (``Dexwheel-HandPose-G20<Hand>-v0``, in the Isaac Lab venv).
BACKENDS = ("mujoco", "isaaclab")
#: Each backend's name in the state topic (the vendor's: ``/sim/mujoco/...`` and ``/sim/isaac/...``).
STATE_TOPIC_SIM = {"mujoco": "mujoco", "isaaclab": "isaac"}
#: Settings whose default depends on the backend (None in the config: this table). The vendor's Isaac hand
#: simulation (vendor document 000 section 9) jumps to each goal every physics step (slew 0) and has no collision
#: projection; the Isaac Lab bridge runs headless unless asked (its viewer, Newton's GL visualizer, is slow on a CPU).
BACKEND_DEFAULTS = {
    "mujoco": {"slew_rad_s": 5.0, "collision_projection": True, "headless": False},
    "isaaclab": {"slew_rad_s": 0.0, "collision_projection": False, "headless": True},
}
#: What the Isaac Lab bridge refuses, and why (one line each).
ISAACLAB_REFUSED = {
    "collision_projection": "collision_projection=true: the hard-write collision projection is MuJoCo's collision "
    "check of each slewed pose, which Isaac Lab has no counterpart of; the Isaac Lab bridge writes each pose as it "
    "is and its contacts push (docs/how-to/isaaclab.md); use collision_projection=false (its default) or "
    "backend=mujoco",
}
TIMEOUT_POLICIES = tuple(p.value for p in TimeoutPolicy)
#: Poses a silent source may fall back to (``timeout.policy=fixed_target``): the vendor bridge's SDK presets.
FIXED_TARGETS = ("open", "half_fist", "full_fist")
#: The largest domain id with Cyclone's (and ROS 2's) default port mapping.
MAX_DOMAIN_ID = 232


def _bad(name: str, detail: str) -> ConfigFieldError:
    return ConfigFieldError(name, detail, "bridge")


def _show(value: Any) -> str:
    """A setting's value as a user types it (``true``, ``3``)."""
    return str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value)


def ros_domain_id(environ: Mapping[str, str] | None = None) -> int:
    """``ROS_DOMAIN_ID`` as ROS 2 reads it: unset or empty -> 0."""
    value = (os.environ if environ is None else environ).get("ROS_DOMAIN_ID", "").strip()
    if not value:
        return 0
    if not value.isdigit():
        raise _bad("domain_id", f"domain_id: ROS_DOMAIN_ID={value!r} is not an integer")
    return int(value)


@dataclass(frozen=True)
class Topics:
    """ROS 2 topic names (without the ``rt/`` DDS prefix, which the transport adds)."""

    command: str
    nominal: str
    state: str

    @classmethod
    def for_hand(cls, hand: str, backend: str = "mujoco") -> Topics:
        """The vendor bridges' names (left hand; the state topic names the simulation, ``/sim/mujoco/...`` or
        ``/sim/isaac/...``); the right hand's follow the same pattern."""
        return cls(
            command=f"/g20/cb_{hand}_hand_control_cmd",
            nominal=f"/retarget/g20/{hand}/joint_target_nominal",
            state=f"/sim/{STATE_TOPIC_SIM.get(backend, backend)}/g20/{hand}/joint_state",
        )


@dataclass(frozen=True)
class SourceTimeout:
    """What the simulation does when the command source goes silent for ``timeout_s``."""

    #: ``hold_last``: keep the last goal (``fixed_target`` before the first command); ``fixed_target``: go
    #: to ``fixed_target``; ``raise``: a silent source is a fault, the hand holds its current pose.
    policy: str = "hold_last"
    timeout_s: float = 0.5
    fixed_target: str = "open"


@dataclass(frozen=True)
class HandObject:
    """An object in the hand: ``shape`` None is the hand alone (the vendor bridge's scene); a shape of
    :data:`~dexwheel.tasks.in_hand.objects.SHAPES` is the in-hand tasks' scene (the hand palm up holding the object
    from the grasp cache made for it), with ``size`` (m), ``mass`` (kg), sliding ``friction``, a cylinder's or capsule's
    ``length`` (m) and how it rests (``orientation``: ``G20Rotate-v0``'s capsule is ``capsule``, 0.045, length 0.08,
    ``across``)."""

    shape: str | None = None
    size: float = ObjectSpec.size
    mass: float = ObjectSpec.mass
    friction: float = ObjectSpec.friction
    length: float | None = ObjectSpec.length
    orientation: str = ObjectSpec.orientation

    @property
    def spec(self) -> ObjectSpec:
        assert self.shape is not None
        return ObjectSpec(self.shape, self.size, self.mass, self.friction, self.length, self.orientation)


@dataclass(frozen=True)
class BridgeConfig:
    """Every setting of the G20 simulation bridge (``python scripts/bridge.py key=value ...``)."""

    hand: str = "left"
    #: The simulation: ``mujoco`` or ``isaaclab`` (the Isaac Lab venv; ``scripts/bridge.py`` re-launches itself there).
    backend: str = "mujoco"
    #: DDS domain (ROS 2's ROS_DOMAIN_ID); None: ``ROS_DOMAIN_ID`` from the environment, else 0.
    domain_id: int | None = None
    #: None (or a name None): :meth:`Topics.for_hand` for the hand and backend.
    topics: Topics | None = None
    #: Take radians by joint name on ``topics.nominal`` instead of SDK values on ``topics.command``.
    plan_nominal: bool = False
    #: The vendor bridge's ``--pd-drive``: targets into the position actuators and ``mj_step`` (default: hard-write).
    #: (Not ``drive=pd``: ``drive`` is the training configs' group, which Hydra would look up.)
    pd_drive: bool = False
    #: Simulated seconds per wall-clock second.
    speed: float = 1.35
    #: None: the backend's (:data:`BACKEND_DEFAULTS`: MuJoCo 5.0, Isaac Lab 0 as the vendor's Isaac simulation).
    #: A slew other than 0 with ``track_test`` is refused (the track test jumps to each goal).
    slew_rad_s: float | None = None
    #: Hard-write only (PD has real contacts). None: the backend's (MuJoCo on; Isaac Lab has none: off).
    #: ``true`` with ``pd_drive`` or ``track_test`` is refused (it would change nothing).
    collision_projection: bool | None = None
    #: Projection off and slew 0: the hand jumps to each goal (acceptance of the mapping, vendor bridge §5.4).
    track_test: bool = False
    #: Simulation steps per simulated second (500: the vendor bridge's loop, one 2 ms physics step each); it must
    #: divide the model's physics rate (1 / 0.002 s), checked here, before any DDS participant exists.
    control_hz: float = 500.0
    #: State messages per wall-clock second.
    state_hz: float = 50.0
    #: When the loop falls further behind the wall clock than this (a stalled machine), it drops the
    #: backlog instead of running it in a burst.
    max_lag_s: float = 0.1
    #: None: the backend's (MuJoCo: the viewer opens; Isaac Lab: headless, false opens Newton's GL visualizer).
    headless: bool | None = None
    #: Stop after this many simulation steps (0: run until stopped).
    max_steps: int = 0
    timeout: SourceTimeout = field(default_factory=SourceTimeout)
    #: An object on the upturned palm (the in-hand scene, PD drive only); ``object.shape`` None: the hand alone.
    object: HandObject = field(default_factory=HandObject)
    #: At most one warning per source per this many seconds about rejected messages (each one is counted).
    warn_interval_s: float = 5.0
    frame_id: str = ""
    #: Bind Cyclone DDS to the loopback interface with multicast off (``dexwheel.bridge.loopback``).
    loopback_only: bool = False

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise _bad("backend", f"backend={self.backend!r} is not allowed; choose one of {list(BACKENDS)}")
        # typed, not the backend's default: a typed value the drive or track test would ignore is refused
        typed = {name for name in BACKEND_DEFAULTS[self.backend] if getattr(self, name) is not None}
        defaults = Topics.for_hand(str(self.hand), self.backend)
        if self.topics is None:
            object.__setattr__(self, "topics", defaults)
        else:
            given = {f.name: getattr(self.topics, f.name) for f in dataclasses.fields(Topics)}
            object.__setattr__(self, "topics", Topics(**{k: getattr(defaults, k) if v is None else v
                                                         for k, v in given.items()}))  # fmt: skip
        for name, value in BACKEND_DEFAULTS[self.backend].items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)
        if self.domain_id is None:
            object.__setattr__(self, "domain_id", ros_domain_id())
        check_types(self, env="bridge")
        self._check(typed)

    def _check(self, typed: set[str]) -> None:
        choices = {"hand": (self.hand, HANDS), "timeout.policy": (self.timeout.policy, TIMEOUT_POLICIES),
                   "timeout.fixed_target": (self.timeout.fixed_target, FIXED_TARGETS)}  # fmt: skip
        for name, (value, allowed) in choices.items():
            if value not in allowed:
                raise _bad(name, f"{name}={value!r} is not allowed; choose one of {list(allowed)}")
        positive = {"speed": self.speed, "control_hz": self.control_hz, "state_hz": self.state_hz,
                    "max_lag_s": self.max_lag_s, "timeout.timeout_s": self.timeout.timeout_s}  # fmt: skip
        for name, value in positive.items():
            if not (math.isfinite(value) and value > 0):
                raise _bad(name, f"{name} must be finite and > 0, got {value!r}")
        for name, value in {"slew_rad_s": self.slew_rad_s, "warn_interval_s": self.warn_interval_s}.items():
            if not (math.isfinite(value) and value >= 0):
                raise _bad(name, f"{name} must be finite and >= 0, got {value!r}")
        self._check_control_hz()
        self._refuse_ignored(typed)
        self._check_object()
        if self.backend == "isaaclab" and self.projection:
            raise _bad("collision_projection", ISAACLAB_REFUSED["collision_projection"])
        if self.max_steps < 0:
            raise _bad("max_steps", f"max_steps must be >= 0 (0: no limit), got {self.max_steps!r}")
        if not 0 <= self.domain_id <= MAX_DOMAIN_ID:  # type: ignore[operator]
            raise _bad("domain_id", f"domain_id must be between 0 and {MAX_DOMAIN_ID}, got {self.domain_id!r}")
        for f in dataclasses.fields(Topics):
            name = getattr(self.topics, f.name)
            if not isinstance(name, str) or not name.strip("/ "):
                raise _bad(f"topics.{f.name}", f"topics.{f.name} must be a ROS 2 topic name, got {name!r}")
        source = "nominal" if self.plan_nominal else "command"
        state, goals = self.topics.state, self.source_topic  # type: ignore[union-attr]
        if state.strip().lstrip("/") == goals.strip().lstrip("/"):  # one DDS topic (rt/<name>)
            raise _bad("topics.state", f"topics.state={state!r} is the topic goals come from (topics.{source}="
                       f"{goals!r}): the bridge would read its own joint state as commands; choose another")  # fmt: skip

    def _check_control_hz(self) -> None:
        """``control_hz`` against the G20 model's physics step (the task's check, here before the transport exists)."""
        control_substeps(self.control_hz, get_robot(f"g20_{self.hand}").timestep, "bridge")

    def _check_object(self) -> None:
        """An object the hand can hold, on the scene that has one: MuJoCo, the PD drive, no track test."""
        obj = self.object
        if obj.shape is None:
            for name in ("size", "mass", "friction", "length", "orientation"):
                if getattr(obj, name) != getattr(HandObject, name):
                    raise _bad(f"object.{name}", f"object.{name}={_show(getattr(obj, name))} does nothing without an "
                                                 f"object; set object.shape to one of {list(SHAPES)}")  # fmt: skip
            return
        try:
            validate_object(obj.spec, "object")
        except ConfigFieldError as exc:
            raise _bad(exc.field, exc.detail) from None
        needs = [("pd_drive", not self.pd_drive, "pd_drive=true: an object moves by contact forces, which a "
                  "hard-written pose has not (it moves the fingers through the object)"),
                 ("track_test", self.track_test, "track_test=false: the track test is the hand alone's"),
                 ("backend", self.backend != "mujoco", "backend=mujoco: the bridge's in-hand scene runs on MuJoCo only "
                  "(its Isaac Lab simulation is the hand alone)")]  # fmt: skip
        for name, bad, why in needs:
            if bad:
                raise _bad(name, f"object.shape={obj.shape} needs {why}")

    def _refuse_ignored(self, typed: set[str]) -> None:
        """A typed setting that the drive or the track test would ignore is refused, naming both."""
        projection = "collision_projection" in typed and self.collision_projection
        slew = "slew_rad_s" in typed and self.slew_rad_s != 0
        cases = [("collision_projection", "pd_drive", projection and self.pd_drive,
                  "the projection is the hard-write drive's; the PD drive has real contacts"),
                 ("collision_projection", "track_test", projection and self.track_test,
                  "the track test turns the projection off"),
                 ("slew_rad_s", "track_test", slew and self.track_test, "the track test jumps to each goal, slew 0")]  # fmt: skip
        for name, by, ignored, why in cases:
            if ignored:
                raise _bad(name, f"{name}={_show(getattr(self, name))} does nothing with {by}=true ({why}); "
                           "set one of the two")  # fmt: skip

    @property
    def slew(self) -> float:
        """The slew the simulation uses (0 under ``track_test``)."""
        return 0.0 if self.track_test else float(self.slew_rad_s)  # type: ignore[arg-type]

    @property
    def projection(self) -> bool:
        """Whether the collision projection runs: hard-write only, never under ``track_test``."""
        return bool(self.collision_projection) and self.drive == "hard_write" and not self.track_test

    @property
    def drive(self) -> str:
        """The env's drive: ``"pd"`` or ``"hard_write"``."""
        return "pd" if self.pd_drive else "hard_write"

    @property
    def hand_sections(self) -> dict[str, dict[str, Any]]:
        """The hand task's sections these switches set (:mod:`dexwheel.tasks.hand.config`): the radians a goal
        carries (``nominal``), the drive, the collision projection."""
        return {"actions": {"kind": "nominal"},
                "drive": {"kind": self.drive, "slew_rad_s": self.slew_rad_s, "track_test": self.track_test},
                "collision": {"projection": self.collision_projection}}  # fmt: skip

    @property
    def source_topic(self) -> str:
        """The topic goals come from: ``topics.nominal`` with ``plan_nominal``, else ``topics.command``."""
        assert self.topics is not None
        return self.topics.nominal if self.plan_nominal else self.topics.command

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> BridgeConfig:
        """From a plain mapping (a resolved Hydra config): unknown keys fail, naming them and the known ones."""
        sections = {"topics": Topics, "timeout": SourceTimeout, "object": HandObject}
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(known))
        if "drive" in unknown:
            raise _bad("drive", "drive: choose the PD drive with pd_drive=true (hard-write is the default)")
        if unknown:
            raise _bad(unknown[0], f"unknown settings {unknown}; known: {known}")
        kwargs = dict(values)
        if isinstance(kwargs.get("backend"), Mapping):  # Hydra's backend group (configs/backend/<name>.yaml)
            kwargs["backend"] = kwargs["backend"].get("name")
        for name, section in sections.items():
            if kwargs.get(name) is None:
                continue
            given = kwargs[name]
            if not isinstance(given, Mapping):
                raise _bad(name, f"{name} must be a mapping of {[f.name for f in dataclasses.fields(section)]}")
            fields_ = [f.name for f in dataclasses.fields(section)]
            extra = sorted(set(given) - set(fields_))
            if extra:
                raise _bad(f"{name}.{extra[0]}", f"unknown settings {[f'{name}.{k}' for k in extra]}; known: {fields_}")
            try:
                kwargs[name] = section(**given)
            except TypeError as exc:  # a missing field
                raise _bad(name, f"{name}: {exc}") from None
        return cls(**kwargs)
