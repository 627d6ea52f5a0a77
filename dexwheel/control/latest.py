"""A thread-safe latest-value slot between an asynchronous source and the control cycle.

A callback (topic, SDK, teleoperation) must never rewrite an array while the composer reads it.
The callback writes a complete sample into the slot under a lock; once per cycle the state copies the
whole snapshot, under the same lock, into its :class:`~dexwheel.control.targets.JointTargetBuffer`
and only then calls ``compose()``. What happens when the source goes quiet is an explicit choice of
the state (:class:`TimeoutPolicy`); nothing silently falls back to another layer or to zeros.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from dexwheel.control.errors import ActionError, SourceTimeoutError
from dexwheel.control.layout import JointLayout
from dexwheel.control.targets import FIELDS, JointTargetBuffer, JointTargetView
from dexwheel.uncopyable import Uncopyable


class TimeoutPolicy(str, enum.Enum):
    """What a stale (or never written) slot gives the control cycle."""

    HOLD_LAST = "hold_last"  # keep the last valid sample (the fixed target before the first one)
    FIXED_TARGET = "fixed_target"  # switch to the slot's fixed target
    RAISE = "raise"  # raise SourceTimeoutError: the state must go to a safe state


class SlotState(str, enum.Enum):
    """Which data :meth:`LatestValueSlot.copy_into` delivered."""

    FRESH = "fresh"  # a sample no older than the timeout
    HELD = "held"  # stale: the last valid sample, held
    FIXED = "fixed"  # stale or never written: the fixed target


class LatestValueSlot(Uncopyable):
    """The latest complete joint-target sample of one asynchronous source.

    ``kp`` and ``kd`` (scalars or ``(dof,)``) are the gains used until a write brings its own: the
    composer never guesses gains, so the slot must be complete from the start. A write that omits
    ``vel`` or ``torque`` sets them to zero (each write is a whole sample; no stale velocity survives).
    ``fixed_target`` (a buffer or view of the same layout, copied once) is required by
    ``FIXED_TARGET`` and is what ``HOLD_LAST`` gives before the first sample. ``clock`` is injectable
    for tests; it must be monotonic, in seconds. A slot cannot be copied or pickled (TypeError): a copy
    would not receive its source's writes.
    """

    _why_uncopyable = (
        "a copy would not receive the writes of the source that writes this one; build another LatestValueSlot "
        "and give it to the source that should write it"
    )

    def __init__(
        self,
        layout: JointLayout,
        *,
        timeout_s: float,
        kp: ArrayLike,
        kd: ArrayLike,
        policy: TimeoutPolicy | str = TimeoutPolicy.HOLD_LAST,
        fixed_target: JointTargetBuffer | JointTargetView | None = None,
        name: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(layout, JointLayout):
            layout = JointLayout(layout)
        if not (timeout_s > 0 and np.isfinite(timeout_s)):
            raise ValueError(f"slot {name!r}: timeout_s must be a positive finite number, got {timeout_s!r}")
        self.layout = layout
        self.name = name or layout.label or "slot"
        self.timeout_s = float(timeout_s)
        self.policy = TimeoutPolicy(policy)
        self._clock = clock
        self._lock = threading.Lock()
        self._latest = JointTargetBuffer(layout, kp=kp, kd=kd)
        self._check_gains(self._latest.kp, self._latest.kd)
        self._fixed: JointTargetBuffer | None = None
        if fixed_target is not None:
            if fixed_target.layout != layout:
                raise ValueError(
                    f"slot {self.name!r}: fixed_target layout {fixed_target.layout.names} differs from {layout.names}"
                )
            self._fixed = JointTargetBuffer(layout)
            for field in FIELDS:
                src = getattr(fixed_target, field)
                if src is not None:
                    getattr(self._fixed, field)[:] = src
        elif self.policy is TimeoutPolicy.FIXED_TARGET:
            raise ValueError(f"slot {self.name!r}: policy FIXED_TARGET needs a fixed_target")
        self._stamp: float | None = None
        self.write_count = 0
        #: Age in seconds of the sample seen by the last copy_into (inf before the first sample).
        self.last_age = float("inf")

    def _as_row(self, value: ArrayLike, field: str) -> np.ndarray:
        arr = np.asarray(value, dtype=np.float64)
        shape = (self.layout.dof,)
        if arr.ndim == 0 and field in ("kp", "kd"):
            arr = np.full(shape, float(arr))
        if arr.shape != shape:
            raise ActionError(f"slot {self.name!r}: {field} must have shape {shape}, got {arr.shape}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            i = int(bad[0])
            raise ActionError(f"slot {self.name!r}: {field}[{i}] ({self.layout.names[i]}) = {arr[i]} is not finite")
        return arr

    def _check_gains(self, kp: np.ndarray, kd: np.ndarray) -> None:
        for field, arr in (("kp", kp), ("kd", kd)):
            neg = np.flatnonzero(~(arr >= 0))
            if neg.size:
                i = int(neg[0])
                raise ActionError(f"slot {self.name!r}: {field}[{i}] ({self.layout.names[i]}) = {arr[i]} must be >= 0")

    def write(
        self,
        position: ArrayLike,
        *,
        vel: ArrayLike | None = None,
        torque: ArrayLike | None = None,
        kp: ArrayLike | None = None,
        kd: ArrayLike | None = None,
        stamp: float | None = None,
    ) -> None:
        """Store a complete sample (callback side). Invalid samples raise and leave the slot as it was."""
        rows = {"position": self._as_row(position, "position")}
        rows["vel"] = self._as_row(vel, "vel") if vel is not None else None
        rows["torque"] = self._as_row(torque, "torque") if torque is not None else None
        if kp is not None:
            rows["kp"] = self._as_row(kp, "kp")
        if kd is not None:
            rows["kd"] = self._as_row(kd, "kd")
        self._check_gains(rows.get("kp", self._latest.kp), rows.get("kd", self._latest.kd))
        now = self._clock() if stamp is None else float(stamp)
        with self._lock:
            for field, arr in rows.items():
                target = getattr(self._latest, field)
                if arr is None:
                    target.fill(0.0)
                else:
                    target[:] = arr
            self._stamp = now
            self.write_count += 1

    def copy_into(self, target: JointTargetBuffer) -> SlotState:
        """Copy the whole snapshot into ``target`` (control side) following the timeout policy.

        Raises :class:`SourceTimeoutError` when the policy is ``RAISE`` and the sample is stale or
        missing, or when ``HOLD_LAST`` has neither a sample nor a fixed target to hold.
        """
        if target.layout is not self.layout and target.layout != self.layout:
            raise ValueError(
                f"slot {self.name!r}: target layout {target.layout.names} differs from {self.layout.names}"
            )
        now = self._clock()
        with self._lock:
            stamp = self._stamp
            age = float("inf") if stamp is None else now - stamp
            self.last_age = age
            if age <= self.timeout_s:
                target.block[...] = self._latest.block
                return SlotState.FRESH
            if self.policy is TimeoutPolicy.HOLD_LAST and stamp is not None:
                target.block[...] = self._latest.block
                return SlotState.HELD
            if self.policy is not TimeoutPolicy.RAISE and self._fixed is not None:
                target.block[...] = self._fixed.block
                return SlotState.FIXED
        what = "no sample yet" if stamp is None else f"last sample {age:.3f} s old (timeout {self.timeout_s} s)"
        hint = "" if self.policy is TimeoutPolicy.RAISE else " and no fixed_target to fall back to"
        raise SourceTimeoutError(f"source {self.name!r} is stale: {what}{hint}; policy {self.policy.name}")

    def age(self) -> float:
        """Seconds since the last sample (inf before the first)."""
        with self._lock:
            return float("inf") if self._stamp is None else self._clock() - self._stamp
