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
from typing import Any, Literal

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


def _is_number(value: Any) -> bool:
    """A real number (bool, integer or float, numpy's too), the kinds the envs' batched actions take: a
    string is no number, a complex would lose its imaginary part."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # a ragged list
        return False
    return arr.ndim == 0 and arr.dtype.kind in "biuf"


def _not_a_number(values: Sequence[Any], lo: np.ndarray | float, hi: np.ndarray | float,
                  label: Callable[[int], str]) -> str:  # fmt: skip
    """``<label> = <value> is not a number; allowed range [lo, hi]`` for the first entry that is not one."""
    i = next((i for i, v in enumerate(values) if not _is_number(v)), 0)
    lo_i, hi_i = (float(b[i] if np.ndim(b) else b) for b in (lo, hi))
    return f"{label(i)} = {values[i]!r} is not a number; allowed range [{_fmt(lo_i)}, {_fmt(hi_i)}]"


class BoundedMapping:
    """Shared input checking: shape, finiteness, range, and the raise/clip policy."""

    #: Set by each mapping: the joints of the returned buffer, that buffer (``out=None``) and, for a mapping
    #: that takes a value per joint, the action's joints (which its messages name).
    layout: JointLayout
    _out: np.ndarray
    action_layout: JointLayout

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

    def _vector(
        self, action: ArrayLike, n: int, what: str = "action", bounds: tuple[Any, Any] = (-1.0, 1.0)
    ) -> np.ndarray:
        """``action`` as ``n`` float64 values; an entry that is not a number raises naming it and ``bounds``."""
        try:
            arr = np.asarray(action)
        except (TypeError, ValueError) as exc:
            raise ActionError(f"{what} must be numeric with shape ({n},): {exc}") from None
        if arr.shape != (n,):
            raise ActionError(f"{what} must have shape ({n},), got {arr.shape}")
        if arr.dtype.kind not in "biuf":  # strings, None, complex: refused, as the envs' batched actions are
            names = self.action_layout.names
            raise ActionError(_not_a_number(arr.tolist(), *bounds, lambda i: f"{what}[{i}] ({names[i]})"))
        return arr.astype(np.float64, copy=False)

    def _target(self, out: np.ndarray | None) -> np.ndarray:
        """Where a call writes: ``out``, checked before the call changes any state, or the mapping's buffer."""
        target = self._out if out is None else out
        if target.shape != (self.layout.dof,):
            raise ActionError(f"out must have shape ({self.layout.dof},), got {target.shape}")
        return target

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

    def _given(self, goal: ArrayLike, what: str) -> np.ndarray:
        """A goal given as configuration, a value per action joint (a copy: the caller keeps its array)."""
        row = np.array(self._vector(goal, self.action_dim, what, (self.lower, self.upper)))
        return self._in_limits(row, lambda i: f"{what}[{i}] ({self.action_layout.names[i]})")

    def _in_limits(self, row: np.ndarray, label: Callable[[int], str]) -> np.ndarray:
        """``row`` if every entry is within its joint's limits, else an :class:`ActionError` naming the entry,
        the joint and the range: clipping is for action streams, a configured goal is meant as given."""
        bad = invalid_entries(row, self.lower, self.upper)
        if bad.any():
            raise ActionError(describe_invalid(row, self.lower, self.upper, bad, label))
        return row

    def _emit(self, target: np.ndarray) -> np.ndarray:
        """Write the goal into ``target`` (from :meth:`_target`) and return it."""
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
        target = self._target(out)
        a = self._sanitize(self._vector(action, self.action_dim), -1.0, 1.0, self._last, self._label)
        self._last[:] = a
        self._goal[:] = self.goals(a)
        return self._emit(target)


class DeltaMapping(_GoalMapping):
    """Relative action: ``goal += scale * action`` (action in ``[-1, 1]``), clipped to the limits.

    ``scale`` (scalar or per joint) is the largest step per call, in radians. ``initial`` is the
    starting goal (default: 0 clipped into the limits); :meth:`reset` sets it again. A given ``initial``
    or reset goal outside the limits (or NaN, inf) is refused naming the joint and its range, never clipped.
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
        zero = np.clip(self._zero, self.lower, self.upper)
        self._initial = zero if initial is None else self._given(initial, "initial")
        self.reset()

    def reset(self, goal: ArrayLike | None = None) -> None:
        """Back to the initial goal, or to ``goal`` (a value per action joint, checked as ``initial`` is)."""
        self._goal[:] = self._initial if goal is None else self._given(goal, "goal")

    def goals(self, actions: np.ndarray, previous: np.ndarray) -> np.ndarray:
        """Checked actions ``(..., A)`` and the previous goals -> new goals within the limits; pure, any batch;
        numpy or torch (float64)."""
        (scale,) = _xp.constants(self, actions, ("scale",))
        return self._clip_to_limits(previous + scale * actions)

    def __call__(self, action: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        target = self._target(out)
        a = self._sanitize(self._vector(action, self.action_dim), -1.0, 1.0, self._zero, self._label)
        self._goal[:] = self.goals(a, self._goal)
        return self._emit(target)


class NominalMapping(_GoalMapping):
    """Radians by joint name: any subset per call; joints not named keep their previous goal.

    An unknown name is an :class:`UnknownJointError` naming it and listing the valid names. With a
    ``completion``, naming one of its mimic joints is an :class:`ActionError`: a mimic joint is coupled
    to its source and follows it, it is not a separate command (the message names the source).
    ``initial`` (default: 0 clipped into the limits) and a :meth:`reset` goal are checked as
    :meth:`checked` checks a configured goal: out of range is refused, never clipped.
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
        zero = np.clip(np.zeros(self.action_dim), self.lower, self.upper)
        self._initial = zero if initial is None else self.checked(initial, zero, "initial")
        self.reset()

    def reset(self, goal: Mapping[str, float] | ArrayLike | None = None) -> None:
        """Back to the initial goal, or to ``goal`` (a ``{joint: radians}`` dict, joints not named at their
        initial goal, or a value per action joint), checked by :meth:`checked` before anything changes."""
        self._goal[:] = self._initial if goal is None else self.checked(goal, self._initial)

    def goals(self, actions: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
        """Checked radians ``(..., A)`` for every action joint -> goals within the limits; pure, any batch;
        numpy or torch (float64)."""
        return self._clip_to_limits(_xp.float64(actions))

    def _named(self, targets: Mapping[str, float], what: str = "target") -> tuple[list[str], np.ndarray, np.ndarray]:
        """``(names, indices, values)`` of a ``{joint: radians}`` dict; raises for anything but a dict, an
        unknown or mimic joint name, or a value that is not a number (naming ``what`` and the joint; ranges
        are not checked here)."""
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
        raw = [targets[n] for n in names]
        try:
            values = np.array(raw)
        except (TypeError, ValueError):  # a ragged entry
            values = np.array(None)
        idx = valid.indices(names)
        if values.shape != (len(names),) or values.dtype.kind not in "biuf":  # as the envs' batched actions
            label = lambda i: f"{what}[{names[i]!r}]"  # noqa: E731
            raise ActionError(f"NominalMapping: {_not_a_number(raw, self.lower[idx], self.upper[idx], label)}")
        return names, idx, values.astype(np.float64, copy=False)

    def row(self, targets: Mapping[str, float], previous: ArrayLike, what: str = "target") -> np.ndarray:
        """A ``{joint: radians}`` dict -> a value for every action joint, those not named from ``previous``;
        names and numbers checked, ranges not (a stream's ``out_of_range`` policy applies to them later)."""
        _, idx, values = self._named(targets, what)
        row = np.array(previous, dtype=np.float64)
        row[idx] = values
        return row

    def checked(self, goal: Mapping[str, float] | ArrayLike, previous: ArrayLike, what: str = "goal") -> np.ndarray:
        """A goal given as configuration (a ``{joint: radians}`` dict, joints not named from ``previous``, or a
        value per action joint) -> its values. An entry out of range, NaN or inf raises :class:`ActionError`
        naming ``what``, the joint, the value and the range, whatever ``out_of_range`` says: clipping is for
        action streams, a configured goal is meant as given."""
        if not isinstance(goal, Mapping):
            return self._given(goal, what)
        names = self.action_layout.names
        return self._in_limits(self.row(goal, previous, what), lambda i: f"{what}[{names[i]!r}]")

    def __call__(self, targets: Mapping[str, float], out: np.ndarray | None = None) -> np.ndarray:
        target = self._target(out)
        names, idx, values = self._named(targets)
        values = self._sanitize(
            values, self.lower[idx], self.upper[idx], self._goal[idx], lambda i: f"target[{names[i]!r}]"
        )
        self._goal[idx] = values
        return self._emit(target)
