"""Collision projection for kinematic (hard-write) drives, as the seed's bridge does it (seed 5.4).

Hard-writing qpos ignores contacts, so fingers would pass through each other and the palm. Before a
pose is written, the projector turns the slewed candidate into the closest pose it can accept:

* criterion (absolute): a pose penetrates when any active contact is deeper than ``tol``
  (``dist < -tol``); how deep the previous pose was does not matter;
* the candidate is first tried whole (one check: the common, contact-free case);
* otherwise each active joint is moved on its own, largest ``|dq|`` first, accepted whole or bisected
  (``iters`` iterations on the fraction of its move), so a thumb pressing into the palm does not
  freeze the other fingers. With ``group_free`` (default), the joints that move none of the bodies in
  a too-deep contact of the candidate are first tried together in one check and, if that pose is
  safe, accepted together; the per-joint pass then only runs for the joints of the colliding chains.
  A blocked thumb thus costs two checks plus the thumb's own, not one per joint of the hand;
* if the result still penetrates (only possible when the start pose did), fall back to the last safe pose.

Each trial costs ``mj_kinematics`` + ``mj_collision`` (no full ``mj_forward``), on the MjData the
drive writes anyway. A joint that is already against a contact is detected with one check at the
smallest bisection step (``2**-iters`` of its move) instead of running all bisection iterations.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from dexwheel.control.coupling import MimicCompletion


@dataclass(slots=True)
class ProjectionResult:
    """What one projection did: ``checks`` collision evaluations, ``limited`` joints not accepted whole,
    ``fallback`` whether the last safe pose was used, ``safe`` whether the result is known not to penetrate."""

    checks: int = 0
    limited: int = 0
    fallback: bool = False
    safe: bool = True


def contact_depth(data: mujoco.MjData) -> float:
    """Deepest penetration (m, >= 0) among the active contacts in ``data`` (after ``mj_collision``)."""
    n = data.ncon
    if n == 0:
        return 0.0
    contact = data.contact
    dist = contact.dist
    dmin = float(dist.min())
    if dmin >= 0.0:
        return 0.0
    exclude = contact.exclude
    if exclude.any():  # contacts in the margin gap, fused bodies or without dofs are not active
        live = dist[exclude == 0]
        if live.size == 0:
            return 0.0
        dmin = float(live.min())
    return -dmin if dmin < 0.0 else 0.0


#: A contact sensor over every contact reporting the smallest distance (MuJoCo computes it in C,
#: where a batch of simulations exposes no contact list): ``-min(dist)`` is :func:`contact_depth`.
DEEPEST_CONTACT_SENSOR = "deepest_contact"


def add_deepest_contact_sensor(spec: mujoco.MjSpec) -> None:
    """Add :data:`DEEPEST_CONTACT_SENSOR` (data ``dist``, reduce ``mindist``, one slot) to ``spec``."""
    dist = 1 << int(mujoco.mjtConDataField.mjCONDATA_DIST)
    mindist = 1
    spec.add_sensor(name=DEEPEST_CONTACT_SENSOR, type=mujoco.mjtSensor.mjSENS_CONTACT, intprm=[dist, mindist, 1])


def deepest_contact_adr(model: mujoco.MjModel) -> int:
    """Where :data:`DEEPEST_CONTACT_SENSOR` sits in ``sensordata`` (a clear error if the model lacks it)."""
    try:
        return int(model.sensor_adr[model.sensor(DEEPEST_CONTACT_SENSOR).id])
    except KeyError:
        raise ValueError(
            f"model has no sensor {DEEPEST_CONTACT_SENSOR!r}; add it with add_deepest_contact_sensor(spec)"
        ) from None


def sensor_depth(dist: float) -> float:
    """Penetration (m, >= 0) from the sensor's smallest contact distance (0 when no contact)."""
    return -float(dist) if dist < 0.0 else 0.0


class CollisionProjector:
    """Per-joint collision projection of one candidate pose (see module docstring).

    ``qpos_adr`` maps the coupling's full joint vector into ``data.qpos``. The projector keeps no
    per-env state; the caller owns the start pose (assumed safe unless told otherwise) and the data.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        coupling: MimicCompletion,
        qpos_adr: np.ndarray,
        tol: float = 5e-4,
        iters: int = 12,
        group_free: bool = True,
    ) -> None:
        if not (np.isfinite(tol) and tol >= 0.0):
            raise ValueError(f"penetration_tol must be finite and >= 0 (m), got {tol!r}")
        if int(iters) != iters or iters < 1:
            raise ValueError(f"projection_iters must be an integer >= 1, got {iters!r}")
        self.model = model
        self.coupling = coupling
        self.tol = float(tol)
        self.iters = int(iters)
        adr = np.asarray(qpos_adr, dtype=np.intp)
        self._contiguous = bool(np.array_equal(adr, np.arange(adr[0], adr[0] + adr.size)))
        self._q0 = int(adr[0])
        self._q1 = int(adr[0] + adr.size)
        self.qpos_adr = adr
        self._smallest = 2.0**-self.iters
        self.group_free = bool(group_free)
        # moves[a, b]: active joint a (with its mimic followers) moves body b.
        jnt_of_full = np.full(model.nq, -1, dtype=np.intp)
        for k in range(model.njnt):
            jnt_of_full[model.jnt_qposadr[k]] = k
        self.moves = np.zeros((coupling.nactive, model.nbody), dtype=bool)
        for a, followers in enumerate(coupling.followers):
            for i, *_ in followers:
                jnt = jnt_of_full[adr[i]]
                root = model.jnt_bodyid[jnt]
                for b in range(model.nbody):
                    c = b
                    while c > root:
                        c = model.body_parentid[c]
                    if c == root:
                        self.moves[a, b] = True
        self._geom_body = model.geom_bodyid.copy()

    def _write(self, data: mujoco.MjData, full: np.ndarray) -> None:
        if self._contiguous:
            data.qpos[self._q0 : self._q1] = full
        else:
            data.qpos[self.qpos_adr] = full

    def depth(self, data: mujoco.MjData, full: np.ndarray) -> float:
        """Deepest active penetration (m) of pose ``full``: kinematics + collision only."""
        self._write(data, full)
        mujoco.mj_kinematics(self.model, data)
        mujoco.mj_collision(self.model, data)
        return contact_depth(data)

    def _deep_bodies(self, data: mujoco.MjData) -> np.ndarray:
        """Bodies in a contact deeper than ``tol`` (from the last check on ``data``)."""
        n = data.ncon
        if n == 0:
            return np.zeros(0, dtype=np.intp)
        contact = data.contact
        deep = (contact.dist < -self.tol) & (contact.exclude == 0)
        return np.unique(self._geom_body[contact.geom[deep]])

    def penetrates(self, data: mujoco.MjData, full: np.ndarray) -> bool:
        return self.depth(data, full) > self.tol

    def project(
        self,
        data: mujoco.MjData,
        start: np.ndarray,
        candidate: np.ndarray,
        out: np.ndarray,
        *,
        start_is_safe: bool = True,
        last_safe: np.ndarray | None = None,
        full: np.ndarray | None = None,
    ) -> ProjectionResult:
        """Write into ``out`` (active joints) the accepted pose on the way from ``start`` to ``candidate``.

        ``data`` is used as scratch: its kinematics and contacts are those of the last trial.
        ``full`` may pass the completed candidate (all joints) when the caller has it.
        """
        coupling = self.coupling
        full = coupling.complete(candidate, clip_mimic=True) if full is None else full.copy()
        res = ProjectionResult(checks=1)
        if self.depth(data, full) <= self.tol:
            out[:] = candidate
            return res
        q = np.array(start, dtype=np.float64)
        dq = candidate - q
        moving = int(np.count_nonzero(dq))
        order = np.argsort(-np.abs(dq), kind="stable")[:moving]
        tol = self.tol
        moved = False
        if self.group_free and moving > 1:
            deep = self._deep_bodies(data)
            free = ~self.moves[order][:, deep].any(axis=1)
            if free.any() and not free.all():
                trial = q.copy()
                trial[order[free]] = candidate[order[free]]
                coupling.complete(trial, full, clip_mimic=True)
                res.checks += 1
                if self.depth(data, full) <= tol:
                    q = trial
                    moved = True
                    order = order[~free]
        coupling.complete(q, full, clip_mimic=True)
        for a in order.tolist():
            origin = q[a]
            step = dq[a]
            coupling.set_joint(full, a, candidate[a])
            res.checks += 1
            if self.depth(data, full) <= tol:
                q[a] = candidate[a]
                moved = True
                continue
            res.limited += 1
            # Already against a contact? One check at the smallest step instead of a full bisection.
            lo = self._smallest
            coupling.set_joint(full, a, origin + lo * step)
            res.checks += 1
            if self.depth(data, full) > tol:
                coupling.set_joint(full, a, origin)
                continue
            hi = 1.0
            for _ in range(self.iters):
                mid = 0.5 * (lo + hi)
                coupling.set_joint(full, a, origin + mid * step)
                res.checks += 1
                if self.depth(data, full) <= tol:
                    lo = mid
                else:
                    hi = mid
            q[a] = origin + lo * step
            coupling.set_joint(full, a, q[a])
            moved = True
        if not moved and not start_is_safe:
            res.checks += 1
            if self.depth(data, full) > tol:
                if last_safe is None:
                    res.safe = False
                    out[:] = q
                else:
                    out[:] = last_safe
                    res.fallback = True
                return res
        out[:] = q
        return res
