"""The G20's action term: batched actions in any of the four mappings -> goals of the 16 active joints.

``action`` (:data:`~dexwheel.tasks.hand_pose.config.ACTIONS`): ``normalized`` ([-1, 1] over each joint's
range), ``sdk255`` (the vendor SDK's 20 channels, integers 0..255), ``nominal`` (radians) and ``delta``
(``delta_scale`` rad per step at 1). The arithmetic is :mod:`dexwheel.control`'s mappings'; this module
batches their checks and keeps their state (the previous goal) in the task, so a rejected action changes
nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from dexwheel.control import (
    ActionClipWarning,
    ActionError,
    G20SdkMapping,
    g20_delta_mapping,
    g20_nominal_mapping,
    g20_normalized_mapping,
)
from dexwheel.control.coupling import MimicCompletion
from dexwheel.control.mappings import invalid_entries
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, GOAL_PRESETS, SDK_CHANNEL_JOINTS, SDK_CHANNELS, SDK_MAX_VALUE
from dexwheel.tasks.spaces import IntegerBox


class G20ActionMap:
    """Batched actions -> commanded active-joint positions, ``(N, A) -> (N, 16)``.

    The arithmetic is the G20 mappings' of :mod:`dexwheel.control` (their pure, batch-capable
    ``goals()``, the one implementation every drive, the vector env and the bridge use); their state (the
    previous goal) lives in the task's ``command`` array instead, so that a rejected action changes nothing.
    Input checks run batched here with the mappings' own rule (:func:`~dexwheel.control.mappings.invalid_entries`);
    an invalid row is handed to the mapping itself, which raises with its own message (field, joint, range).
    """

    def __init__(self, kind: str, hand: str, coupling: MimicCompletion, num_envs: int, *, out_of_range: str,
                 delta_scale: float) -> None:  # fmt: skip
        """``kind`` of :data:`~dexwheel.tasks.hand_pose.config.ACTIONS` for the ``hand`` ("left"/"right": the SDK's
        channel order); ``out_of_range`` "clip" or "raise"; ``delta_scale`` rad per step at 1 (``delta``)."""
        self.kind = kind
        self.num_envs = num_envs
        self.clip = out_of_range == "clip"
        self.lower = coupling.active_lower.copy()
        self.upper = coupling.active_upper.copy()
        self.half_span = 0.5 * (self.upper - self.lower)
        self.delta_scale = np.full(len(ACTIVE_JOINTS), float(delta_scale))
        self._sdk = G20SdkMapping(hand)
        #: {joint: radians} actions and configured goals check their names and values here, whatever the kind
        self.nominal = g20_nominal_mapping()
        if self.kind == "sdk255":
            self.dim = SDK_CHANNELS
            self.space = IntegerBox(0, SDK_MAX_VALUE, (SDK_CHANNELS,))  # the protocol's integers: samples are valid
            self.low = np.zeros(SDK_CHANNELS)
            self.high = np.full(SDK_CHANNELS, float(SDK_MAX_VALUE))
            self.reference: Any = self._sdk
        elif self.kind == "nominal":
            self.dim = len(ACTIVE_JOINTS)
            # float32 bounds rounded inward, so every sample of the space is within the joint limits
            low = self.lower.astype(np.float32)
            high = self.upper.astype(np.float32)
            low = np.where(low.astype(np.float64) < self.lower, np.nextafter(low, np.float32(np.inf)), low)
            high = np.where(high.astype(np.float64) > self.upper, np.nextafter(high, np.float32(-np.inf)), high)
            self.space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
            self.low, self.high = self.lower, self.upper
            self.reference = self.nominal
        else:
            self.dim = len(ACTIVE_JOINTS)
            self.space = spaces.Box(-1.0, 1.0, (self.dim,), np.float32)
            self.low = np.full(self.dim, -1.0)
            self.high = np.full(self.dim, 1.0)
            self.reference = (
                g20_normalized_mapping() if self.kind == "normalized" else g20_delta_mapping(self.delta_scale)
            )
        self.integer = self.reference.integer  # whole numbers only (sdk255): the control mapping's rule
        self.batch_shape = (num_envs, self.dim)
        #: ``normalize(raw) = (raw - sub) / div - one``
        if self.kind == "sdk255":
            self.norm_params = (np.zeros(self.dim), np.full(self.dim, 0.5 * SDK_MAX_VALUE), 1.0)
        elif self.kind == "nominal":
            self.norm_params = (self.lower.copy(), self.half_span.copy(), 1.0)
        else:  # already in [-1, 1]: the identity, exactly (x - 0 = x, x / 1 = x)
            self.norm_params = (np.zeros(self.dim), np.ones(self.dim), 0.0)

    # -- representation helpers ------------------------------------------------------------------
    def normalize(self, raw: np.ndarray) -> np.ndarray:
        """Actions in their own units -> [-1, 1] (for the observation and the action-rate term)."""
        sub, div, one = self.norm_params
        return (raw - sub) / div - one

    def hold_action(self, q_active: np.ndarray) -> np.ndarray:
        """The action that commands (about) ``q_active``: the 'previous action' of a fresh episode."""
        if self.kind == "normalized":
            return np.clip((q_active - self.lower) / self.half_span - 1.0, -1.0, 1.0)
        if self.kind == "nominal":
            return np.clip(q_active, self.lower, self.upper)
        if self.kind == "sdk255":
            return self._sdk.to_sdk(q_active).astype(np.float64)
        return np.zeros(self.dim)

    def preset(self, name: str) -> np.ndarray:
        """Active joint positions of a goal preset (its SDK command through the hand's table)."""
        return self._sdk(GOAL_PRESETS[name])[list(ALL_JOINTS.index(j) for j in ACTIVE_JOINTS)].copy()

    # -- mapping ---------------------------------------------------------------------------------
    def nominal_dict(self, targets: Mapping[str, float], previous: np.ndarray) -> np.ndarray:
        """A ``{joint: radians}`` action -> a full nominal action row; joints not named keep ``previous``
        (an unknown or mimic joint raises; ranges are checked with the step's ``out_of_range`` policy)."""
        return self.nominal.row(targets, previous)

    def as_batch(self, actions: Any) -> np.ndarray:
        """``actions`` as a C-contiguous float64 ``(N, A)`` array; a clear error for anything else."""
        try:
            raw = np.asarray(actions)
        except (TypeError, ValueError) as exc:
            raise ActionError(f"action ({self.kind}) must be numeric with shape {self._shape_text()}: {exc}") from None
        if raw.dtype.kind not in "biuf":  # complex would lose its imaginary part, objects turn None into NaN
            raise ActionError(f"action ({self.kind}) must be numeric with shape {self._shape_text()}, "
                              f"got dtype {raw.dtype}")  # fmt: skip
        arr = np.ascontiguousarray(raw, dtype=np.float64)
        if arr.shape != self.batch_shape:
            raise ActionError(self._shape_error(arr.shape))
        return arr

    def _shape_error(self, shape: tuple[int, ...]) -> str:
        got = shape[1:] if self.num_envs == 1 and len(shape) >= 1 else shape
        return f"action ({self.kind}) must have shape {self._shape_text()}, got {got}"

    def _shape_text(self) -> str:
        return f"({self.dim},)" if self.num_envs == 1 else f"({self.num_envs}, {self.dim})"

    def _raise_for_row(self, i: int, row: np.ndarray) -> None:
        """Let the control mapping produce its message for an invalid row (it raises before any change)."""
        try:
            if self.kind == "nominal":
                self.reference({n: float(v) for n, v in zip(ACTIVE_JOINTS, row, strict=True)})
            else:
                self.reference(row)
        except ActionError as exc:
            if self.num_envs > 1:
                raise type(exc)(f"env {i}: {exc}") from None
            raise
        bad = np.flatnonzero(~((row >= self.low) & (row <= self.high)))
        raise ActionError(
            f"env {i}: action[{int(bad[0])}] = {row[bad[0]]!r} is outside [{self.low[bad[0]]}, {self.high[bad[0]]}]"
        )

    def map(self, actions: Any, command: np.ndarray, stacklevel: int = 3,
            delay: Callable[[np.ndarray], np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """``(new command (N, 16), accepted raw action (N, A), clipped entries per env)``; no input is modified.
        With ``delay`` (:class:`~dexwheel.tasks.action_delay.ActionDelay`) the command maps the action it returns
        for the accepted one (a rejected action reaches it never)."""
        a = self.as_batch(actions)
        clipped = np.zeros(self.num_envs, dtype=np.int64)
        if invalid_entries(a, self.low, self.high, self.integer).any():  # the control mappings' rule
            self._refuse_non_finite(a)
            a, clipped = self.repair(a, stacklevel=stacklevel + 1)
        # the control mappings' own arithmetic, batched; their state (previous goal) is the task's `command`
        new = self.reference.goals(a if delay is None else delay(a), command)
        return new, a, clipped

    def _refuse_non_finite(self, a: np.ndarray) -> None:
        """A NaN or inf entry is refused whatever ``out_of_range`` says (there is no value to clip it to), naming the
        env, the entry and its joint or SDK channel, as every registered env does."""
        bad = ~np.isfinite(a)
        if not bad.any():
            return
        i, j = (int(k) for k in np.argwhere(bad)[0])
        env = f"env {i}: " if self.num_envs > 1 else ""
        joint = SDK_CHANNEL_JOINTS[j] or "reserved" if self.kind == "sdk255" else ACTIVE_JOINTS[j]
        field = f"SDK channel {j} ({joint})" if self.kind == "sdk255" else f"action[{j}] ({joint})"
        raise ActionError(f"{env}{field} = {float(a[i, j])} is not finite; {self.kind} actions are in "
                          f"[{self.low[j]:g}, {self.high[j]:g}] (a non-finite action is refused, not clipped)")  # fmt: skip

    def repair(self, a: np.ndarray, stacklevel: int = 4) -> tuple[np.ndarray, np.ndarray]:
        """Actions with an out-of-range entry (finite: :meth:`map` refuses NaN and inf first): raise
        :class:`ActionError` naming it, or with ``out_of_range="clip"`` return ``(clipped copy, clipped entries per
        env)``.
        ``stacklevel``: the warning's, pointing at the caller of ``env.step``. sdk255: fractions are
        invalid too, and clipping rounds them to the nearest integer."""
        bad = invalid_entries(a, self.low, self.high, self.integer)
        if not self.clip:
            i = int(np.flatnonzero(bad.any(axis=1))[0])
            self._raise_for_row(i, a[i])
        a = np.clip(a, self.low, self.high)  # a copy
        if self.integer:
            np.rint(a, out=a)
        clipped = bad.sum(axis=1)
        what = "out-of-range/fractional" if self.integer else "out-of-range"
        warnings.warn(
            f"G20Hand ({self.kind} action): clipped {int(clipped.sum())} {what} entries",
            ActionClipWarning,
            stacklevel=stacklevel,
        )
        return a, clipped
