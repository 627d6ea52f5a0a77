"""Action mappings: turn an action (policy output, teleoperation message) into joint goals.

Each mapping is a small object built once, with ``__call__(action, out=None)`` writing the goal for
every joint of its output ``layout`` into a preallocated float64 buffer (or into ``out``, e.g. a
float32 ``JointTargetBuffer.position``) and returning it. The returned buffer is reused by the
next call; copy it to keep it.

Out-of-range input is a configuration choice, ``out_of_range``:

* ``"raise"`` (default): an entry outside its range, NaN or +-inf raises :class:`ActionError`
  naming the field (``action[3]``, ``SDK channel 15``), the joint and the allowed range; the mapping's
  state is unchanged.
* ``"clip"``: out-of-range and infinite entries are clipped to the range; a NaN entry holds its
  joint's previous goal. Each clipped or held entry adds one to ``clip_count`` (cumulative;
  ``last_clip_count`` is the last call's), and a call that clipped anything emits one
  :class:`ActionClipWarning` with the count.

Goals are also always clipped to the joint limits (a delta action walking past a limit, the G20 SDK
tables overshooting): that is the mapping's definition, not an input error, so it is not counted.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from dexwheel.control import _xp
from dexwheel.control.coupling import MimicCompletion
from dexwheel.control.errors import ActionClipWarning, ActionError, UnknownJointError
from dexwheel.control.layout import JointLayout

OutOfRange = Literal["raise", "clip"]
Limits = Mapping[str, tuple[float, float]] | ArrayLike


def _limits(limits: Limits, names: Sequence[str] | JointLayout | None) -> tuple[JointLayout, np.ndarray, np.ndarray]:
    """``(layout, lower, upper)`` from a name -> (lo, hi) mapping or an ``(n, 2)`` array plus names."""
    if isinstance(limits, Mapping):
        layout = names if isinstance(names, JointLayout) else JointLayout(names if names is not None else limits)
        missing = [n for n in layout.names if n not in limits]
        if missing:
            raise ValueError(f"no limits for joints {missing}")
        arr = np.array([limits[n] for n in layout.names], dtype=np.float64).reshape(-1, 2)
    else:
        arr = np.array(limits, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"limits must be a mapping or an (n, 2) array, got shape {arr.shape}")
        if names is None:
            names = [f"joint{i}" for i in range(arr.shape[0])]
        layout = names if isinstance(names, JointLayout) else JointLayout(names)
        if layout.dof != arr.shape[0]:
            raise ValueError(f"{layout.dof} names for {arr.shape[0]} limit rows")
    bad = [
        n
        for n, (lo, hi) in zip(layout.names, arr, strict=True)
        if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi)
    ]
    if bad:
        raise ValueError(f"limits of joints {bad} must be finite with lower <= upper")
    return layout, arr[:, 0].copy(), arr[:, 1].copy()


def _fmt(x: float) -> str:
    return f"{x:g}"


def invalid_entries(
    values: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float, integer: bool = False
) -> np.ndarray:
    """The one rule for input values: inside ``[lo, hi]`` (NaN and +-inf fail), and whole numbers where
    ``integer`` (the G20 SDK protocol); True where an entry breaks it. Every mapping, the envs' batched
    actions and the bridge's messages are checked with it."""
    bad = ~((values >= lo) & (values <= hi))  # NaN compares False: caught here too
    if integer:
        bad |= np.floor(values) != values
    return bad


def describe_invalid(
    values: np.ndarray,
    lo: np.ndarray | float,
    hi: np.ndarray | float,
    bad: np.ndarray,
    label: Callable[[int], str],
) -> str:
    """``<label> = <value> <what is wrong> <what is allowed>`` for the first entry ``bad`` marks (and how many more)."""
    idx = np.flatnonzero(bad)
    i = int(idx[0])
    lo_i = float(lo[i] if np.ndim(lo) else lo)
    hi_i = float(hi[i] if np.ndim(hi) else hi)
    value = float(values[i])
    if not np.isfinite(value):
        detail = f"is not finite; allowed range [{_fmt(lo_i)}, {_fmt(hi_i)}]"
    elif not lo_i <= value <= hi_i:
        detail = f"is outside the allowed range [{_fmt(lo_i)}, {_fmt(hi_i)}]"
    else:
        detail = f"is not an integer; allowed: integers {_fmt(lo_i)}..{_fmt(hi_i)}"
    more = f" (and {idx.size - 1} more)" if idx.size > 1 else ""
    return f"{label(i)} = {value!r} {detail}{more}"


class BoundedMapping:
    """Shared input checking: shape, finiteness, range, and the raise/clip policy."""

    #: Inputs must be whole numbers (the G20 SDK protocol): a fraction is invalid, and ``"clip"`` rounds it.
    integer = False
    #: What the refusal of an invalid input suggests (``{how}``: clip, or clip and round); a user of the
    #: mapping with its own settings (the bridge) names those instead.
    raise_hint = "set out_of_range='clip' to {how} instead"

    def __init__(self, out_of_range: OutOfRange = "raise") -> None:
        if out_of_range not in ("raise", "clip"):
            raise ValueError(f"out_of_range must be 'raise' or 'clip', got {out_of_range!r}")
        self.out_of_range: OutOfRange = out_of_range
        self.clip_count = 0
        self.last_clip_count = 0

    def _vector(self, action: ArrayLike, n: int, what: str = "action") -> np.ndarray:
        try:
            arr = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ActionError(f"{what} must be numeric with shape ({n},): {exc}") from None
        if arr.shape != (n,):
            raise ActionError(f"{what} must have shape ({n},), got {arr.shape}")
        return arr

    def _sanitize(
        self,
        values: np.ndarray,
        lo: np.ndarray | float,
        hi: np.ndarray | float,
        hold: np.ndarray,
        label: Callable[[int], str],
    ) -> np.ndarray:
        """Check ``values`` against ``[lo, hi]`` (and :attr:`integer`); raise, or clip (and round) in place
        (NaN -> ``hold``)."""
        bad = invalid_entries(values, lo, hi, self.integer)
        if not bad.any():
            self.last_clip_count = 0
            return values
        first = describe_invalid(values, lo, hi, bad, label)
        if self.out_of_range == "raise":
            how = "clip and round" if self.integer else "clip"
            raise ActionError(f"{type(self).__name__}: {first}; {self.raise_hint.format(how=how)}")
        values = values.copy()  # never modify the caller's array
        nan = np.isnan(values)
        values[nan] = hold[nan]
        np.clip(values, lo, hi, out=values)
        if self.integer:
            np.rint(values, out=values)
        count = int(np.count_nonzero(bad))
        self.last_clip_count = count
        self.clip_count += count
        what = "out-of-range/non-finite/fractional" if self.integer else "out-of-range/non-finite"
        warnings.warn(
            f"{type(self).__name__}: clipped {count} {what} entries (total {self.clip_count}); first: {first}",
            ActionClipWarning,
            stacklevel=3,
        )
        return values


class _GoalMapping(BoundedMapping):
    """A mapping whose goal lives on ``layout`` (optionally completed to a larger layout)."""

    def __init__(
        self,
        limits: Limits,
        names: Sequence[str] | JointLayout | None,
        completion: MimicCompletion | None,
        out_of_range: OutOfRange,
    ) -> None:
        super().__init__(out_of_range)
        self.action_layout, self.lower, self.upper = _limits(limits, names)
        if completion is not None and completion.active_layout != self.action_layout:
            raise ValueError(
                f"completion's active joints {completion.active_layout.names} differ from the mapping's "
                f"{self.action_layout.names}"
            )
        self.completion = completion
        #: The joints the returned goal covers (all joints when there is a completion).
        self.layout = completion.layout if completion is not None else self.action_layout
        self._goal = np.zeros(self.action_layout.dof, dtype=np.float64)
        self._out = np.zeros(self.layout.dof, dtype=np.float64)

    @property
    def action_dim(self) -> int:
        return self.action_layout.dof

    @property
    def goal(self) -> np.ndarray:
        """A copy of the current goal of the action joints."""
        return self._goal.copy()

    def _label(self, i: int) -> str:
        return f"action[{i}] ({self.action_layout.names[i]})"

    def _clip_to_limits(self, goal: np.ndarray) -> np.ndarray:
        # np.minimum(np.maximum(...)) is np.clip for finite values, without np.clip's Python overhead;
        # numpy or torch (the limits in ``goal``'s library and device: dexwheel.control._xp)
        xp = _xp.namespace(goal)
        lower, upper = _xp.constants(self, goal, ("lower", "upper"))
        return xp.minimum(xp.maximum(goal, lower, out=goal), upper, out=goal)

    def _emit(self, out: np.ndarray | None) -> np.ndarray:
        target = self._out if out is None else out
        if target.shape != (self.layout.dof,):
            raise ActionError(f"out must have shape ({self.layout.dof},), got {target.shape}")
        if self.completion is not None:
            if target is self._out:
                self.completion.clip_and_complete(self._goal, out=target)
            else:
                target[...] = self.completion.clip_and_complete(self._goal, out=self._out)
        else:
            target[...] = self._goal
        return target


class NormalizedMapping(_GoalMapping):
    """``[-1, 1]`` per action joint -> its range, linearly (-1 -> lower, +1 -> upper).

    ``limits``: ``{joint: (lower, upper)}`` (order = action order) or an ``(n, 2)`` array with
    ``names``. With ``completion`` the goal is completed to all joints (G20: 16 -> 21).
    """

    def __init__(
        self,
        limits: Limits,
        *,
        names: Sequence[str] | JointLayout | None = None,
        completion: MimicCompletion | None = None,
        out_of_range: OutOfRange = "raise",
    ) -> None:
        super().__init__(limits, names, completion, out_of_range)
        self._last = np.zeros(self.action_dim, dtype=np.float64)
        self.half_span = 0.5 * (self.upper - self.lower)
        self._goal[:] = self.lower + self.half_span

    def goals(self, actions: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
        """Checked actions ``(..., A)`` -> goals ``(..., A)`` within the limits; pure (no state), any batch;
        numpy or torch (float64)."""
        lower, half_span = _xp.constants(self, actions, ("lower", "half_span"))
        return self._clip_to_limits(lower + (actions + 1.0) * half_span)

    def __call__(self, action: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        a = self._sanitize(self._vector(action, self.action_dim), -1.0, 1.0, self._last, self._label)
        self._last[:] = a
        self._goal[:] = self.goals(a)
        return self._emit(out)


class DeltaMapping(_GoalMapping):
    """Relative action: ``goal += scale * action`` (action in ``[-1, 1]``), clipped to the limits.

    ``scale`` (scalar or per joint) is the largest step per call, in radians. ``initial`` is the
    starting goal (default: 0 clipped into the limits); :meth:`reset` sets it again.
    """

    def __init__(
        self,
        limits: Limits,
        scale: float | ArrayLike,
        *,
        names: Sequence[str] | JointLayout | None = None,
        initial: ArrayLike | None = None,
        completion: MimicCompletion | None = None,
        out_of_range: OutOfRange = "raise",
    ) -> None:
        super().__init__(limits, names, completion, out_of_range)
        scale_arr = np.broadcast_to(np.asarray(scale, dtype=np.float64), (self.action_dim,)).copy()
        if not (np.all(np.isfinite(scale_arr)) and np.all(scale_arr > 0)):
            raise ValueError(f"scale must be finite and > 0, got {scale!r}")
        self.scale = scale_arr
        self._zero = np.zeros(self.action_dim, dtype=np.float64)
        self._initial = (
            np.zeros(self.action_dim) if initial is None else self._vector(initial, self.action_dim, "initial")
        )
        self.reset()

    def reset(self, goal: ArrayLike | None = None) -> None:
        g = self._initial if goal is None else self._vector(goal, self.action_dim, "goal")
        if not np.all(np.isfinite(g)):
            raise ActionError(f"DeltaMapping: goal must be finite, got {g}")
        np.clip(g, self.lower, self.upper, out=self._goal)

    def goals(self, actions: np.ndarray, previous: np.ndarray) -> np.ndarray:
        """Checked actions ``(..., A)`` and the previous goals -> new goals within the limits; pure, any batch;
        numpy or torch (float64)."""
        (scale,) = _xp.constants(self, actions, ("scale",))
        return self._clip_to_limits(previous + scale * actions)

    def __call__(self, action: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        a = self._sanitize(self._vector(action, self.action_dim), -1.0, 1.0, self._zero, self._label)
        self._goal[:] = self.goals(a, self._goal)
        return self._emit(out)


class NominalMapping(_GoalMapping):
    """Radians by joint name: any subset per call; joints not named keep their previous goal.

    An unknown name is an :class:`UnknownJointError` naming it and listing the valid names. With a
    ``completion``, naming one of its mimic joints is an :class:`ActionError`: a mimic joint is coupled
    to its source and follows it, it is not a separate command (the message names the source).
    """

    def __init__(
        self,
        layout: JointLayout | Sequence[str],
        limits: Limits,
        initial: Mapping[str, float] | ArrayLike | None = None,
        *,
        completion: MimicCompletion | None = None,
        out_of_range: OutOfRange = "raise",
    ) -> None:
        if not isinstance(layout, JointLayout):
            layout = JointLayout(layout)
        super().__init__(limits, layout, completion, out_of_range)
        names = self.action_layout.names
        #: mimic joint -> why it cannot be commanded
        self._mimic: dict[str, str] = (
            {}
            if completion is None
            else {
                m: f"{m} is a mimic joint: it follows {names[s]} (x {r:g}); command {names[s]}"
                for m, s, r in zip(completion.mimic_joints, completion.mimic_src, completion.mimic_ratio, strict=True)
            }
        )
        self._initial = np.clip(np.zeros(self.action_dim), self.lower, self.upper)
        if isinstance(initial, Mapping):
            for name, value in initial.items():
                self._initial[self.action_layout.index(name)] = value
        elif initial is not None:
            self._initial = self._vector(initial, self.action_dim, "initial").copy()
        self.reset()

    def reset(self, goal: Mapping[str, float] | ArrayLike | None = None) -> None:
        if not np.all(np.isfinite(self._initial)):
            raise ActionError(f"NominalMapping: initial goal must be finite, got {self._initial}")
        np.clip(self._initial, self.lower, self.upper, out=self._goal)
        if goal is not None:
            if isinstance(goal, Mapping):
                self(goal)
            else:
                np.clip(self._vector(goal, self.action_dim, "goal"), self.lower, self.upper, out=self._goal)

    def goals(self, actions: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
        """Checked radians ``(..., A)`` for every action joint -> goals within the limits; pure, any batch;
        numpy or torch (float64)."""
        return self._clip_to_limits(_xp.float64(actions))

    def _named(self, targets: Mapping[str, float]) -> tuple[list[str], np.ndarray, np.ndarray]:
        """``(names, indices, values)`` of a ``{joint: radians}`` dict; raises for anything but a dict, an
        unknown or mimic joint name, or a value that is not a number (ranges are not checked here)."""
        if not isinstance(targets, Mapping):
            raise ActionError(f"NominalMapping expects {{joint name: radians}}, got {type(targets).__name__}")
        valid = self.action_layout
        unknown = [n for n in targets if n not in valid and n not in self._mimic]
        if unknown:
            raise UnknownJointError(f"unknown joint names {unknown}; valid names: {list(valid.names)}")
        mimic = [n for n in targets if n in self._mimic]
        if mimic:
            raise ActionError(f"NominalMapping: {self._mimic[mimic[0]]}")
        names = list(targets)
        try:
            values = np.array([targets[n] for n in names], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ActionError(f"NominalMapping: joint values must be numbers: {exc}") from None
        return names, valid.indices(names), values

    def row(self, targets: Mapping[str, float], previous: ArrayLike) -> np.ndarray:
        """A ``{joint: radians}`` dict -> a value for every action joint, those not named from ``previous``;
        names and numbers checked, ranges not (a stream's ``out_of_range`` policy applies to them later)."""
        _, idx, values = self._named(targets)
        row = np.array(previous, dtype=np.float64)
        row[idx] = values
        return row

    def checked(self, goal: Mapping[str, float] | ArrayLike, previous: ArrayLike, what: str = "goal") -> np.ndarray:
        """A goal given as configuration (a ``{joint: radians}`` dict, joints not named from ``previous``, or a
        value per action joint) -> its values. An entry out of range, NaN or inf raises :class:`ActionError`
        naming ``what``, the joint, the value and the range, whatever ``out_of_range`` says: clipping is for
        action streams, a configured goal is meant as given."""
        names = self.action_layout.names
        if isinstance(goal, Mapping):
            row = self.row(goal, previous)
            label: Callable[[int], str] = lambda i: f"{what}[{names[i]!r}]"  # noqa: E731
        else:
            row = np.array(self._vector(goal, self.action_dim, what))  # a copy: the caller keeps its array
            label = lambda i: f"{what}[{i}] ({names[i]})"  # noqa: E731
        bad = invalid_entries(row, self.lower, self.upper)
        if bad.any():
            raise ActionError(describe_invalid(row, self.lower, self.upper, bad, label))
        return row

    def __call__(self, targets: Mapping[str, float], out: np.ndarray | None = None) -> np.ndarray:
        names, idx, values = self._named(targets)
        values = self._sanitize(
            values, self.lower[idx], self.upper[idx], self._goal[idx], lambda i: f"target[{names[i]!r}]"
        )
        self._goal[idx] = values
        return self._emit(out)


class WheelVelocityMapping(BoundedMapping):
    """``[-1, 1]`` per wheel -> velocity target ``scale * action`` in rad/s (for ``vel``, not ``qpos``)."""

    def __init__(
        self,
        scale: float | ArrayLike,
        names: Sequence[str] | JointLayout,
        *,
        out_of_range: OutOfRange = "raise",
    ) -> None:
        super().__init__(out_of_range)
        self.layout = names if isinstance(names, JointLayout) else JointLayout(names, "wheels")
        self.action_layout = self.layout
        scale_arr = np.broadcast_to(np.asarray(scale, dtype=np.float64), (self.layout.dof,)).copy()
        if not (np.all(np.isfinite(scale_arr)) and np.all(scale_arr > 0)):
            raise ValueError(f"scale must be finite and > 0, got {scale!r}")
        self.scale = scale_arr
        self._last = np.zeros(self.layout.dof, dtype=np.float64)
        self._out = np.zeros(self.layout.dof, dtype=np.float64)

    @property
    def action_dim(self) -> int:
        return self.layout.dof

    def __call__(self, action: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        a = self._sanitize(
            self._vector(action, self.layout.dof),
            -1.0,
            1.0,
            self._last,
            lambda i: f"action[{i}] ({self.layout.names[i]})",
        )
        self._last[:] = a
        target = self._out if out is None else out
        np.multiply(self.scale, a, out=self._out)
        if target is not self._out:
            target[...] = self._out
        return target
