"""The LinkerHand G20 SDK protocol (20 channels, 0..255) and the G20 helpers of the action path.

Protocol (``docs/spec/g20.md``, "SDK channel protocol"; tables in :mod:`dexwheel.robots.g20`):

* channels 0-10 map linearly onto one active joint each: ``DIR = -1``: 0 -> MAX, 255 -> MIN;
  ``DIR = +1``: 0 -> MIN, 255 -> MAX;
* channels 11-14 are reserved and skipped (reported back as 255);
* channels 15-19 give the motor/tip *arc*; the joint is ``arc / ratio`` (thumb_mcp: 1.02, pip: 0.89),
  the "divide by mimic" rule, and the mimic joints are completed (``thumb_ip = thumb_mcp * 1.02``,
  ``*_dip = *_pip * 0.89``);
* a command shorter than 20 values is padded with 255; a longer one uses its first 20 values.

Clip-then-complete: the vendor SDK tables overshoot two limits by a few milliradians. Channel 15 = 0 gives
arc 1.29, thumb_mcp = 1.29 / 1.02 = 1.2647 > 1.26; channels 16-19 = 0 give pip = 1.55 / 0.89 = 1.7416 >
1.74. Active joints are clipped to their limits after the division and the mimic joints are completed
from the clipped values (thumb_ip = 1.26 * 1.02 = 1.2852, dip = 1.74 * 0.89 = 1.5486), so hard-write and
PD drives command the same, reachable pose. Hence SDK -> radians -> SDK is exact (to rounding) except at
those clipped ends.

Right hand: the same tables (see ``G20_R_*`` in :mod:`dexwheel.robots.g20` for why no direction flips).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from dexwheel.control import _xp
from dexwheel.control.coupling import MimicCompletion
from dexwheel.control.errors import ActionError
from dexwheel.control.mappings import (
    BoundedMapping,
    DeltaMapping,
    NominalMapping,
    NormalizedMapping,
    OutOfRange,
)
from dexwheel.robots.g20 import (
    ACTIVE_JOINTS,
    ALL_JOINTS,
    G20_L_DIR,
    G20_L_MAX,
    G20_L_MIN,
    G20_R_DIR,
    G20_R_MAX,
    G20_R_MIN,
    JOINT_LIMITS,
    MIMIC_RATIOS,
    SDK_ARC_CHANNELS,
    SDK_CHANNEL_JOINTS,
    SDK_CHANNELS,
    SDK_MAX_VALUE,
    SDK_PAD_VALUE,
)

Hand = Literal["left", "right"]

#: Clip-then-complete for the G20: 16 active joints (ACTIVE_JOINTS order) -> 21 (ALL_JOINTS order).
G20_MIMIC = MimicCompletion(ACTIVE_JOINTS, ALL_JOINTS, MIMIC_RATIOS, JOINT_LIMITS)
G20_ACTIVE_LIMITS: dict[str, tuple[float, float]] = {j: JOINT_LIMITS[j] for j in ACTIVE_JOINTS}

#: :meth:`G20SdkMapping.goals`' table attributes (:attr:`G20SdkMapping.table`'s order)
_SDK_TABLE = ("channels", "_active_pos", "_dir", "_min", "_max", "_span", "_div")
_TABLES = {"left": (G20_L_MIN, G20_L_MAX, G20_L_DIR), "right": (G20_R_MIN, G20_R_MAX, G20_R_DIR)}


def complete_mimic(q_active: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
    """16 active joint positions (ACTIVE_JOINTS order) -> 21 (ALL_JOINTS order); no clipping."""
    return G20_MIMIC.complete(q_active, out)


def clip_and_complete(q_active: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
    """Clip the 16 active joints to their limits, then complete the mimic joints from the clipped values."""
    return G20_MIMIC.clip_and_complete(q_active, out)


class G20SdkMapping(BoundedMapping):
    """SDK command (20 channels, 0..255) <-> G20 joint positions, for one hand.

    ``mapping(cmd)`` / :meth:`to_joint_positions` return the 21 joint goals in ``ALL_JOINTS`` order,
    mimic joints completed; :meth:`to_sdk` is the inverse, for state reporting. The protocol takes
    integers 0..255: a value outside that range, a fraction (3.7), NaN or inf raises, or with
    ``out_of_range="clip"`` is clipped and rounded to the nearest integer (NaN holds the channel's
    previous value) and counted in ``clip_count``.
    """

    integer = True

    def __init__(self, hand: Hand = "left", out_of_range: OutOfRange = "raise") -> None:
        super().__init__(out_of_range)
        if hand not in _TABLES:
            raise ValueError(f"hand must be 'left' or 'right', got {hand!r}")
        self.hand: Hand = hand
        self.layout = G20_MIMIC.layout
        lo_t, hi_t, dir_t = _TABLES[hand]
        ratio_of = {src: ratio for src, ratio in MIMIC_RATIOS.values()}
        self.channels = np.array([c for c, j in enumerate(SDK_CHANNEL_JOINTS) if j is not None], dtype=np.intp)
        self.reserved = np.array([c for c, j in enumerate(SDK_CHANNEL_JOINTS) if j is None], dtype=np.intp)
        joints = [SDK_CHANNEL_JOINTS[c] for c in self.channels]
        self._active_pos = G20_MIMIC.active_layout.indices(joints)  # type: ignore[arg-type]
        self._min = np.array([lo_t[c] for c in self.channels], dtype=np.float64)
        self._max = np.array([hi_t[c] for c in self.channels], dtype=np.float64)
        self._dir = np.array([dir_t[c] for c in self.channels], dtype=np.float64)
        if not np.all(np.abs(self._dir) == 1) or not np.all(self._max > self._min):
            raise ValueError(f"G20 {hand} SDK table: used channels need DIR +-1 and MAX > MIN")
        self._div = np.array(
            [ratio_of[SDK_CHANNEL_JOINTS[c]] if c in SDK_ARC_CHANNELS else 1.0 for c in self.channels],
            dtype=np.float64,
        )
        self._span = self._max - self._min
        self._last = np.full(SDK_CHANNELS, float(SDK_PAD_VALUE))
        self._cmd = np.empty(SDK_CHANNELS, dtype=np.float64)
        self._out = np.empty(len(ALL_JOINTS), dtype=np.float64)

    @property
    def table(self) -> tuple[np.ndarray, ...]:
        """``(channels, active_pos, dir, min, max, span, div)``: per mapped channel ``e``, joint
        ``active_pos[e]`` = ``(min + t * span if dir > 0 else max - t * span) / div`` with ``t`` =
        value / 255 (what :meth:`goals` computes; compiled kernels take it as plain arrays)."""
        return self.channels, self._active_pos, self._dir, self._min, self._max, self._span, self._div

    def _label(self, c: int) -> str:
        joint = SDK_CHANNEL_JOINTS[c]
        return f"SDK channel {c} ({joint if joint is not None else 'reserved'})"

    def to_joint_positions(self, cmd: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        """20 SDK values -> 21 joint goals (ALL_JOINTS order), clipped then mimic-completed."""
        target = self._target(out)  # checked before the held values change
        try:
            arr = np.asarray(cmd, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ActionError(f"SDK command must be numeric with shape (<= {SDK_CHANNELS},): {exc}") from None
        if arr.ndim != 1:
            raise ActionError(f"SDK command must be 1-D with up to {SDK_CHANNELS} values, got shape {arr.shape}")
        n = min(arr.size, SDK_CHANNELS)
        self._cmd[:n] = arr[:n]
        self._cmd[n:] = SDK_PAD_VALUE
        v = self._sanitize(self._cmd, 0.0, float(SDK_MAX_VALUE), self._last, self._label)
        self._last[:] = v
        full = G20_MIMIC.complete(self.goals(v), out=self._out, clip_mimic=True)
        if target is not self._out:
            target[...] = full
        return target

    def goals(self, values: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
        """Checked SDK values ``(..., 20)`` -> active joint goals ``(..., 16)``, ACTIVE_JOINTS order, clipped
        to the joint limits (clip-then-complete's first half); pure (no state), any batch; numpy or torch
        (float64; the tables in ``values``' library and device: :mod:`dexwheel.control._xp`)."""
        xp = _xp.namespace(values)
        channels, active_pos, sign, lo, hi, span, div = _xp.constants(self, values, _SDK_TABLE)
        lower, upper = _xp.constants(G20_MIMIC, values, ("active_lower", "active_upper"))
        t = values[..., channels] / SDK_MAX_VALUE
        value = xp.where(sign > 0, lo + t * span, hi - t * span)
        q = _xp.empty64(values, (*values.shape[:-1], len(ACTIVE_JOINTS)))
        q[..., active_pos] = value / div
        return xp.minimum(xp.maximum(q, lower, out=q), upper, out=q)

    __call__ = to_joint_positions

    def to_sdk(self, q: ArrayLike) -> np.ndarray:
        """Joint positions -> 20 SDK values (int64; reserved channels 255).

        ``q`` is 21 values (ALL_JOINTS order; mimic joints are ignored, they follow their sources) or
        16 (ACTIVE_JOINTS order). Values beyond a channel's range saturate at 0 or 255.
        """
        arr = np.asarray(q, dtype=np.float64)
        if arr.shape == (len(ALL_JOINTS),):
            active = arr[G20_MIMIC.layout.indices(ACTIVE_JOINTS)]
        elif arr.shape == (len(ACTIVE_JOINTS),):
            active = arr
        else:
            raise ActionError(
                f"joint positions must have shape ({len(ALL_JOINTS)},) (ALL_JOINTS) or "
                f"({len(ACTIVE_JOINTS)},) (ACTIVE_JOINTS), got {arr.shape}"
            )
        bad = np.flatnonzero(~np.isfinite(active))
        if bad.size:
            i = int(bad[0])
            raise ActionError(f"joint position {ACTIVE_JOINTS[i]} = {active[i]!r} is not finite")
        value = active[self._active_pos] * self._div
        t = np.where(self._dir > 0, value - self._min, self._max - value) / self._span
        out = np.full(SDK_CHANNELS, SDK_PAD_VALUE, dtype=np.int64)
        out[self.channels] = np.clip(np.rint(t * SDK_MAX_VALUE), 0, SDK_MAX_VALUE).astype(np.int64)
        return out


def g20_normalized_mapping(out_of_range: OutOfRange = "raise") -> NormalizedMapping:
    """[-1, 1] per active joint (ACTIVE_JOINTS order) -> 21 G20 joint goals."""
    return NormalizedMapping(G20_ACTIVE_LIMITS, completion=G20_MIMIC, out_of_range=out_of_range)


def g20_delta_mapping(scale: float | ArrayLike, out_of_range: OutOfRange = "raise") -> DeltaMapping:
    """Relative [-1, 1] actions over the 16 active joints, ``scale`` rad per step -> 21 G20 joint goals."""
    return DeltaMapping(G20_ACTIVE_LIMITS, scale, completion=G20_MIMIC, out_of_range=out_of_range)


def g20_nominal_mapping(
    initial: Mapping[str, float] | ArrayLike | None = None, out_of_range: OutOfRange = "raise"
) -> NominalMapping:
    """Radians by G20 joint name (the nominal retarget topic) -> 21 G20 joint goals."""
    return NominalMapping(ACTIVE_JOINTS, G20_ACTIVE_LIMITS, initial, completion=G20_MIMIC, out_of_range=out_of_range)
