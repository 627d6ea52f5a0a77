"""Mimic completion: active joints -> every joint, the coupling MuJoCo does not do itself (vendor bridge §3.4 / 7.4).

MuJoCo ignores URDF mimic tags, so the action path completes the mimic joints in software:
``mimic = ratio * source``. With clipping (what every drive commands), the active joints are clipped to
their limits first and each mimic joint is then clipped to its own: completing from an unclipped source
could put a mimic joint where its source can never be, and hard-write and PD drives would disagree.

One implementation, :func:`complete_into` (compiled), serves the action mappings (a single vector), the
envs (any leading batch, through :meth:`MimicCompletion.complete`) and the drives' and the projection's
own compiled steps, which call it directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from dexwheel.control import _xp
from dexwheel.control.errors import ActionError
from dexwheel.control.layout import JointLayout
from dexwheel.jit import kernel

#: :attr:`MimicCompletion.arrays`' attributes, in its order.
_ARRAYS = ("active_idx", "mimic_idx", "mimic_src", "mimic_ratio", "full_lower", "full_upper")
#: Per active joint: ``[(full index, ratio or None for the joint itself, lower, upper)]``.
Followers = list[list[tuple[int, float | None, float, float]]]


class MimicCompletion:
    """Index maps of a robot's active and mimic joints inside its full joint vector.

    ``full`` vectors are in ``all_joints`` order (:attr:`layout`); ``active`` vectors in ``active``
    order (:attr:`active_layout`). Every method accepts any leading batch shape.
    """

    def __init__(
        self,
        active: Sequence[str],
        all_joints: Sequence[str],
        ratios: Mapping[str, tuple[str, float]],
        limits: Mapping[str, tuple[float, float]],
    ) -> None:
        self.active_layout = JointLayout(active, "active")
        self.layout = JointLayout(all_joints, "all")
        unknown = [n for n in self.active_layout.names if n not in self.layout]
        if unknown:
            raise ValueError(f"active joints {unknown} are not in the joint list {list(self.layout.names)}")
        self.mimic_joints = tuple(n for n in self.layout.names if n in ratios)
        loose = [n for n in self.layout.names if n not in self.active_layout and n not in ratios]
        if loose:
            raise ValueError(f"joints {loose} are neither active nor mimic")
        missing = [n for n in self.layout.names if n not in limits]
        if missing:
            raise ValueError(f"no limits for joints {missing}")
        self.nfull = self.layout.dof
        self.nactive = self.active_layout.dof
        self.active_idx = self.layout.indices(self.active_layout.names)
        self.mimic_idx = self.layout.indices(self.mimic_joints)
        self.mimic_src = self.active_layout.indices([ratios[n][0] for n in self.mimic_joints])
        self.mimic_ratio = np.array([ratios[n][1] for n in self.mimic_joints], dtype=np.float64)
        self.full_lower = np.array([limits[n][0] for n in self.layout.names], dtype=np.float64)
        self.full_upper = np.array([limits[n][1] for n in self.layout.names], dtype=np.float64)
        bad = [n for n, lo, hi in zip(self.layout.names, self.full_lower, self.full_upper, strict=True)
               if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi)]  # fmt: skip
        if bad:
            raise ValueError(f"limits of joints {bad} must be finite with lower <= upper")
        self.active_lower = self.full_lower[self.active_idx]
        self.active_upper = self.full_upper[self.active_idx]
        #: Per active joint: how much faster its fastest follower moves (>= 1). Slewing the source by
        #: ``step / speed_factor`` keeps every joint, mimic ones included, within ``step``.
        self.speed_factor = np.ones(self.nactive)
        for k, src in enumerate(self.mimic_src):
            self.speed_factor[src] = max(self.speed_factor[src], abs(float(self.mimic_ratio[k])))
        #: For each active joint: itself (ratio None) and its mimic followers with their limits.
        self.followers: Followers = []
        for a in range(self.nactive):
            entry: list[tuple[int, float | None, float, float]] = [(int(self.active_idx[a]), None, 0.0, 0.0)]
            for k in np.flatnonzero(self.mimic_src == a):
                i = int(self.mimic_idx[k])
                entry.append((i, float(self.mimic_ratio[k]), float(self.full_lower[i]), float(self.full_upper[i])))
            self.followers.append(entry)

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(active_idx, mimic_idx, mimic_src, mimic_ratio, full_lower, full_upper)``: the completion as
        plain arrays, for compiled kernels (:func:`complete_into`)."""
        return self.active_idx, self.mimic_idx, self.mimic_src, self.mimic_ratio, self.full_lower, self.full_upper

    def _checked(self, q_active: ArrayLike) -> np.ndarray:
        q = np.asarray(q_active, dtype=np.float64)
        if q.shape[-1:] != (self.nactive,):
            raise ActionError(f"active joint positions must have shape (..., {self.nactive}), got {q.shape}")
        return q

    def complete(self, q_active: ArrayLike, out: np.ndarray | None = None, *, clip_mimic: bool = False) -> np.ndarray:
        """``(..., nactive)`` -> ``(..., nfull)``: mimic joints = ratio * source.

        With ``clip_mimic`` every joint is then clipped to its limits: the mimic joints to theirs, the
        active ones unchanged when they are within theirs (the drives' case; otherwise use
        :meth:`clip_and_complete`).
        """
        if not isinstance(q_active, np.ndarray) and _xp.namespace_or_none(q_active) is not None:
            return self._complete_array(q_active, out, clip_mimic)
        q = self._checked(q_active)
        shape = q.shape[:-1] + (self.nfull,)
        if out is None or out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
            result = np.empty(shape)  # (a given ``out`` of another layout is filled from it below)
        else:
            result = out
        _complete_rows(np.ascontiguousarray(q).reshape(-1, self.nactive), self.arrays, clip_mimic,
                       result.reshape(-1, self.nfull))  # fmt: skip
        if out is not None and result is not out:
            out[...] = result
            return out
        return result

    def _complete_array(self, q: ArrayLike, out, clip: bool):
        """:meth:`complete` of a torch tensor (any leading batch, its dtype and device): :func:`complete_into`'s
        arithmetic as array operations, the index maps and limits in the tensor's library
        (:mod:`dexwheel.control._xp`); the same numbers (min, max and one product per entry)."""
        if tuple(q.shape[-1:]) != (self.nactive,):
            raise ActionError(f"active joint positions must have shape (..., {self.nactive}), got {tuple(q.shape)}")
        xp = _xp.namespace(q)
        a, m, src, ratio, lower, upper = _xp.constants(self, q, _ARRAYS)
        full = xp.empty((*q.shape[:-1], self.nfull), dtype=q.dtype, device=q.device) if out is None else out
        mimic = q[..., src] * ratio.to(q.dtype)
        if clip:
            lo, hi = lower.to(q.dtype), upper.to(q.dtype)
            full[..., a] = xp.minimum(xp.maximum(q, lo[a]), hi[a])
            full[..., m] = xp.minimum(xp.maximum(mimic, lo[m]), hi[m])
        else:
            full[..., a] = q
            full[..., m] = mimic
        return full

    def clip_and_complete(self, q_active: ArrayLike, out: np.ndarray | None = None) -> np.ndarray:
        """Clip the active joints to their limits, then complete the mimic joints from the clipped values
        (numpy, or a torch tensor: :meth:`complete`)."""
        if not isinstance(q_active, np.ndarray) and _xp.namespace_or_none(q_active) is not None:
            lower, upper = _xp.constants(self, q_active, ("active_lower", "active_upper"))
            xp = _xp.namespace(q_active)
            q = xp.minimum(xp.maximum(q_active, lower.to(q_active.dtype)), upper.to(q_active.dtype))
            return self._complete_array(q, out, True)
        q = self._checked(q_active)
        return self.complete(np.minimum(np.maximum(q, self.active_lower), self.active_upper), out, clip_mimic=True)

    __call__ = clip_and_complete

    def slew_steps(self, slew_rad_s: float, dt: float) -> np.ndarray:
        """Per active joint max step for a slew of ``slew_rad_s`` over ``dt`` (inf when the slew is 0: jump)."""
        if slew_rad_s <= 0.0:
            return np.full(self.nactive, np.inf)
        return (slew_rad_s * dt) / self.speed_factor


@kernel
def complete_into(q: np.ndarray, completion: tuple, clip: bool, full: np.ndarray) -> None:
    """``full`` = active joints ``q`` with their mimic joints (``ratio * source``); with ``clip`` each is
    then clipped to its limits (the mimic joints completed from the unclipped source). ``completion`` is
    :attr:`MimicCompletion.arrays`."""
    active_idx, mimic_idx, mimic_src, ratio, lower, upper = completion
    for j in range(active_idx.shape[0]):
        f = active_idx[j]
        full[f] = min(max(q[j], lower[f]), upper[f]) if clip else q[j]
    for m in range(mimic_idx.shape[0]):
        f = mimic_idx[m]
        v = q[mimic_src[m]] * ratio[m]
        full[f] = min(max(v, lower[f]), upper[f]) if clip else v


@kernel
def _complete_rows(q: np.ndarray, completion: tuple, clip: bool, full: np.ndarray) -> None:
    for r in range(q.shape[0]):
        complete_into(q[r], completion, clip, full[r])
