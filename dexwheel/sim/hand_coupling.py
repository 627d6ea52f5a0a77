"""Active joints -> every model joint, batched: the mimic coupling the simulator does not do itself.

MuJoCo ignores URDF mimic tags, so the drives complete the mimic joints in software (seed 3.4 / 7.4):
``mimic = clip(ratio * source, mimic limits)`` after the active joints were clipped to theirs. This
is the same arithmetic as :class:`dexwheel.control.mappings.MimicCompletion`, vectorised over a
leading batch of envs (and physics substeps), so hard-write and PD drives and the action path agree
bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


class JointCoupling:
    """Index maps of a robot's active and mimic joints inside its full joint vector.

    ``full`` vectors are in ``all_joints`` order; ``active`` vectors in ``active_joints`` order.
    """

    def __init__(
        self,
        all_joints: Sequence[str],
        active_joints: Sequence[str],
        mimic_ratios: Mapping[str, tuple[str, float]],
        limits: Mapping[str, tuple[float, float]],
    ) -> None:
        self.all_joints = tuple(all_joints)
        self.active_joints = tuple(active_joints)
        index = {n: i for i, n in enumerate(self.all_joints)}
        active_index = {n: i for i, n in enumerate(self.active_joints)}
        unknown = [n for n in self.active_joints if n not in index]
        if unknown:
            raise ValueError(f"active joints {unknown} are not in the joint list {list(self.all_joints)}")
        self.mimic_joints = tuple(n for n in self.all_joints if n in mimic_ratios)
        loose = [n for n in self.all_joints if n not in active_index and n not in mimic_ratios]
        if loose:
            raise ValueError(f"joints {loose} are neither active nor mimic")
        self.nfull = len(self.all_joints)
        self.nactive = len(self.active_joints)
        self.active_idx = np.array([index[n] for n in self.active_joints], dtype=np.intp)
        self.mimic_idx = np.array([index[n] for n in self.mimic_joints], dtype=np.intp)
        self.mimic_src = np.array([active_index[mimic_ratios[n][0]] for n in self.mimic_joints], dtype=np.intp)
        self.mimic_ratio = np.array([mimic_ratios[n][1] for n in self.mimic_joints], dtype=np.float64)
        self.active_lower = np.array([limits[n][0] for n in self.active_joints], dtype=np.float64)
        self.active_upper = np.array([limits[n][1] for n in self.active_joints], dtype=np.float64)
        self.mimic_lower = np.array([limits[n][0] for n in self.mimic_joints], dtype=np.float64)
        self.mimic_upper = np.array([limits[n][1] for n in self.mimic_joints], dtype=np.float64)
        self.full_lower = np.array([limits[n][0] for n in self.all_joints], dtype=np.float64)
        self.full_upper = np.array([limits[n][1] for n in self.all_joints], dtype=np.float64)
        self._matrix = np.zeros((self.nactive, self.nfull))
        self._matrix[np.arange(self.nactive), self.active_idx] = 1.0
        self._matrix[self.mimic_src, self.mimic_idx] = self.mimic_ratio
        #: Per active joint: how much faster its fastest follower moves (>= 1). Slewing the source by
        #: ``step / speed_factor`` keeps every joint, mimic ones included, within ``step``.
        self.speed_factor = np.ones(self.nactive)
        for k, src in enumerate(self.mimic_src):
            self.speed_factor[src] = max(self.speed_factor[src], abs(float(self.mimic_ratio[k])))
        #: For each active joint: [(full index, ratio, lower, upper)] of itself (ratio None) and its mimics.
        self.followers: list[list[tuple[int, float | None, float, float]]] = []
        for a, name in enumerate(self.active_joints):
            entry: list[tuple[int, float | None, float, float]] = [(index[name], None, 0.0, 0.0)]
            for k in np.flatnonzero(self.mimic_src == a):
                entry.append(
                    (
                        int(self.mimic_idx[k]),
                        float(self.mimic_ratio[k]),
                        float(self.mimic_lower[k]),
                        float(self.mimic_upper[k]),
                    )
                )
            self.followers.append(entry)

    def complete(self, q_active: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``(..., nactive)`` active positions (already within limits) -> ``(..., nfull)``.

        One matrix product with a 0/1/ratio matrix, then the limits: every output is a single
        product plus exact zeros, so the result is the elementwise ``ratio * source`` bit for bit, for
        any batch size (active joints pass the clip unchanged, being within their limits).
        """
        out = np.matmul(q_active, self._matrix, out=out)
        np.maximum(out, self.full_lower, out=out)
        return np.minimum(out, self.full_upper, out=out)

    def clip_and_complete(self, q_active: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Clip the active joints to their limits, then :meth:`complete` from the clipped values."""
        return self.complete(np.clip(q_active, self.active_lower, self.active_upper), out)

    def slew_steps(self, slew_rad_s: float, dt: float) -> np.ndarray:
        """Per active joint max step for a slew of ``slew_rad_s`` over ``dt`` (inf when the slew is 0: jump)."""
        if slew_rad_s <= 0.0:
            return np.full(self.nactive, np.inf)
        return (slew_rad_s * dt) / self.speed_factor

    def set_joint(self, full: np.ndarray, a: int, value: float) -> None:
        """Set active joint ``a`` (and its mimic followers) in one full vector, in place (projection trials)."""
        for i, ratio, lo, hi in self.followers[a]:
            if ratio is None:
                full[i] = value
            else:
                v = value * ratio
                full[i] = lo if v < lo else hi if v > hi else v

    def active(self, full: np.ndarray) -> np.ndarray:
        """The active entries of ``(..., nfull)`` vectors."""
        return full[..., self.active_idx]
