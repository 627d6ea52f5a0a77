"""Map a state's natural motor frame onto the current robot's joints, by name.

A composer's output is the state's semantics and does not change with the hardware. The resolver
adapts it: source joints the robot lacks are dropped (one warning per binding); robot joints the
source lacks take fixed :class:`JointDefault` values, and a robot joint with neither is an error when
the binding is made. Dynamic targets (topics, trajectories) are command sources, never defaults.

A resolver's frames live in numpy (the default) or, with ``xp=torch``, as torch tensors on ``device``
(:mod:`dexwheel.control._xp`); it resolves frames of that library and device.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from dexwheel.control import _xp
from dexwheel.control._copyplan import Op, compile_copy
from dexwheel.control.errors import JointCommandError, JointDroppedWarning
from dexwheel.control.layout import JointLayout
from dexwheel.control.targets import MotorFrame
from dexwheel.uncopyable import Uncopyable


@dataclass(frozen=True)
class JointDefault:
    """A fixed command for a robot joint that a state does not drive (finite; kp, kd >= 0)."""

    position: float
    kp: float
    kd: float

    def __post_init__(self) -> None:
        for field in ("position", "kp", "kd"):
            value = getattr(self, field)
            if not isinstance(value, numbers.Real) or not math.isfinite(value):
                raise ValueError(f"JointDefault.{field} must be a finite number, got {value!r}")
        if self.kp < 0 or self.kd < 0:
            raise ValueError(f"JointDefault gains must be >= 0, got kp={self.kp}, kd={self.kd}")


class JointCommandDefaults(Mapping[str, JointDefault]):
    """Joint name -> :class:`JointDefault`, the platform's fixed commands for joints a state omits."""

    def __init__(self, defaults: Mapping[str, JointDefault] | Iterable[tuple[str, JointDefault]] = ()) -> None:
        items = dict(defaults)
        for name, default in items.items():
            if not isinstance(default, JointDefault):
                raise TypeError(f"default for joint {name!r} must be a JointDefault, got {default!r}")
        self._defaults = items

    @classmethod
    def uniform(cls, names: Iterable[str], default: JointDefault) -> JointCommandDefaults:
        return cls({n: default for n in names})

    def __getitem__(self, name: str) -> JointDefault:
        return self._defaults[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._defaults)

    def __len__(self) -> int:
        return len(self._defaults)

    def __repr__(self) -> str:
        return f"JointCommandDefaults({self._defaults!r})"


class _Binding:
    """The compiled map from one source layout to the robot layout, with its own output frame."""

    def __init__(self, source: JointLayout, robot: JointLayout, defaults: Mapping[str, JointDefault],
                 xp: ModuleType, device: Any) -> None:  # fmt: skip
        self.source = source
        self.dropped = source.missing_from(robot)
        self.defaulted = robot.missing_from(source)
        lacking = [n for n in self.defaulted if n not in defaults]
        if lacking:
            raise JointCommandError(
                f"robot {robot.describe()} has joints {lacking} that source layout {source.describe()} does "
                f"not command and that have no JointCommandDefaults; give them defaults or command them"
            )
        self.out = MotorFrame(robot, xp=xp, device=device)
        for name in self.defaulted:  # pre-filled once; vel and torque stay zero
            i = robot.index(name)
            d = defaults[name]
            self.out.qpos[i], self.out.kp[i], self.out.kd[i] = d.position, d.kp, d.kd
        kept = [n for n in source.names if n in robot]
        self.src_idx = source.indices(kept)
        self.dst_idx = robot.indices(kept)
        self.identity = source == robot
        self._ops: dict[int, tuple[MotorFrame, tuple[Op, ...]]] = {}

    def ops_for(self, frame: MotorFrame) -> tuple[Op, ...]:
        """The copies bound to ``frame``'s arrays (compiled on first sight of that frame object)."""
        entry = self._ops.get(id(frame))
        if entry is None or entry[0] is not frame:
            if _xp.where(frame.block) != _xp.where(self.out.block):
                raise TypeError(f"resolve_into: the frame of {self.source.describe()} is {_xp.where(frame.block)}, "
                                f"the resolver's frames are {_xp.where(self.out.block)}")  # fmt: skip
            ops = tuple(compile_copy(self.out.block, self.dst_idx, frame.block, self.src_idx))
            entry = self._ops[id(frame)] = (frame, ops)
        return entry[1]


class JointCommandResolver(Uncopyable):
    """Resolve frames of any source layout onto ``robot_layout``.

    Bindings are compiled and cached per source layout (pass ``sources`` to compile them during
    preparation); each binding owns a robot-order :class:`MotorFrame` that :meth:`resolve_into`
    overwrites and returns. When the source layout equals the robot layout the binding is a single
    block copy (the identity fast path). ``xp`` (numpy, the default, or torch) and ``device`` (torch) say
    where its frames live. A resolver cannot be copied or pickled (TypeError): build another.
    """

    _why_uncopyable = (
        "its copies are compiled against the frames it resolves; build another JointCommandResolver with the "
        "same robot layout and defaults"
    )

    def __init__(
        self,
        robot_layout: JointLayout,
        defaults: Mapping[str, JointDefault] | None = None,
        *,
        sources: Iterable[JointLayout] = (),
        xp: ModuleType | None = None,
        device: Any = None,
    ) -> None:
        self._xp = _xp.resolve(xp)
        self._device = _xp.device(self._xp, device)
        if not isinstance(robot_layout, JointLayout):
            robot_layout = JointLayout(robot_layout)
        self._robot = robot_layout
        self._defaults = (
            defaults if isinstance(defaults, JointCommandDefaults) else JointCommandDefaults(defaults or {})
        )
        foreign = [n for n in self._defaults if n not in robot_layout]
        if foreign:
            raise JointCommandError(
                f"JointCommandDefaults name joints {foreign} that robot {robot_layout.describe()} does not have; "
                f"robot joints: {list(robot_layout.names)}"
            )
        self._bindings: dict[JointLayout, _Binding] = {}
        self._last_frame: MotorFrame | None = None
        self._last_ops: tuple[Op, ...] = ()
        self._last_out: MotorFrame | None = None
        for layout in sources:
            self.bind(layout)

    @property
    def robot_layout(self) -> JointLayout:
        return self._robot

    @property
    def defaults(self) -> JointCommandDefaults:
        return self._defaults

    def _binding(self, source: JointLayout) -> _Binding:
        binding = self._bindings.get(source)
        if binding is None:
            binding = _Binding(source, self._robot, self._defaults, self._xp, self._device)
            self._bindings[source] = binding
            if binding.dropped:
                warnings.warn(
                    f"robot {self._robot.describe()} has no joints {list(binding.dropped)} of source layout "
                    f"{source.describe()}; their commands are dropped",
                    JointDroppedWarning,
                    stacklevel=3,
                )
        return binding

    def bind(self, source_layout: JointLayout) -> MotorFrame:
        """Compile (once) the binding for ``source_layout``; returns the frame it resolves into.

        Raises :class:`JointCommandError` naming robot joints with neither a source nor a default.
        """
        if not isinstance(source_layout, JointLayout):
            source_layout = JointLayout(source_layout)
        return self._binding(source_layout).out

    def dropped(self, source_layout: JointLayout) -> tuple[str, ...]:
        """Source joints the robot does not have (their commands are dropped)."""
        return self._binding(source_layout).dropped

    def defaulted(self, source_layout: JointLayout) -> tuple[str, ...]:
        """Robot joints the source does not command (they take their defaults)."""
        return self._binding(source_layout).defaulted

    def is_identity(self, source_layout: JointLayout) -> bool:
        return self._binding(source_layout).identity

    def resolve_into(self, frame: MotorFrame) -> MotorFrame:
        """Write ``frame`` into the cached robot-order frame of its layout's binding and return that.

        Steady state (the same source frame every cycle, as a composer gives) runs only precompiled
        copies. The returned frame is overwritten by the next call with the same source layout.
        """
        if frame is self._last_frame:
            for op in self._last_ops:
                op()
            return self._last_out  # type: ignore[return-value]
        if not isinstance(frame, MotorFrame):
            raise TypeError(f"resolve_into expects a MotorFrame, got {type(frame).__name__}")
        binding = self._binding(frame.layout)
        ops = binding.ops_for(frame)
        self._last_frame, self._last_ops, self._last_out = frame, ops, binding.out
        for op in ops:
            op()
        return binding.out

    def resolve(self, frame: MotorFrame) -> MotorFrame:
        """Like :meth:`resolve_into` but returns a new frame the caller owns (allocates)."""
        return self.resolve_into(frame).copy()
