"""Collision projection for kinematic (hard-write) drives, as the vendor bridge does it (vendor bridge §5.4).

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

A trial costs ``mj_kinematics`` plus collision (no full ``mj_forward``), on the MjData the drive
writes anyway, all inside one compiled call (:func:`project_pose`). Which joints touch a too-deep
contact comes from one contact sensor per active joint over the subtree it moves
(:func:`add_chain_contact_sensors`), evaluated in C. From a safe start only the geom pairs of the
moved subtrees can decide (every other contact is the start's), so a trial measures just those:
``mj_geomDistance`` for each pair whose bounding spheres overlap (:func:`moved_pairs`), after
``mj_kinematics`` for a joint's whole move (:func:`moved_depth`) and for the free joints' group
(:func:`group_depth`, each pair once). Once a joint's whole move failed, its smallest-step check and
bisection need no kinematics either: the joint turns its subtree (and its mimic followers theirs)
rigidly about its axis, so those trials turn the whole move's geom poses (:func:`rotated_depth`).
These decide as ``mj_collision`` and the contact sensors would, bit for bit for the kinematic trials
(tested) and to rounding (1e-17 m) for the turned ones. A start that may penetrate runs
``mj_collision`` and the sensors. A joint that is already against a contact is detected with one
check at the smallest bisection step (``2**-iters`` of its move) instead of running all bisection
iterations.
"""

from __future__ import annotations

import copy
import math

import mujoco
import numpy as np

from dexwheel.control.coupling import MimicCompletion, complete_into
from dexwheel.jit import kernel
from dexwheel.sim.mujoco_c import mj_collision, mj_geomDistance, mj_kinematics, mj_sensorPos

Array = np.ndarray


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
    return _sensor_adr(model, DEEPEST_CONTACT_SENSOR, "add_deepest_contact_sensor(spec)")


def sensor_depth(dist: float) -> float:
    """Penetration (m, >= 0) from the sensor's smallest contact distance (0 when no contact)."""
    return -float(dist) if dist < 0.0 else 0.0


#: Per active joint, a contact sensor over the subtree its joint moves (``<DEEPEST_CONTACT_SENSOR>:<joint>``):
#: which joints touch a too-deep contact, read in C after each trial's collision pass.
CHAIN_SENSOR_FORMAT = DEEPEST_CONTACT_SENSOR + ":{}"


def add_chain_contact_sensors(spec: mujoco.MjSpec, joints: tuple[str, ...] | list[str]) -> None:
    """Add, for each of ``joints``, a deepest-contact sensor over the subtree of the joint's body."""
    for name in joints:
        spec.add_sensor(
            name=CHAIN_SENSOR_FORMAT.format(name),
            type=mujoco.mjtSensor.mjSENS_CONTACT,
            objtype=mujoco.mjtObj.mjOBJ_XBODY,  # the body's subtree
            objname=spec.joint(name).parent.name,
            intprm=[1 << int(mujoco.mjtConDataField.mjCONDATA_DIST), 1, 1],
        )


def _sensor_adr(model: mujoco.MjModel, name: str, fix: str) -> int:
    try:
        return int(model.sensor_adr[model.sensor(name).id])
    except KeyError:
        raise ValueError(f"model has no sensor {name!r}; add it with {fix}") from None


def _subtrees(model: mujoco.MjModel) -> np.ndarray:
    """``(nbody, nbody)``: row ``r`` marks the bodies in the subtree of body ``r``."""
    inside = np.eye(model.nbody, dtype=bool)
    for b in range(1, model.nbody):  # parents precede children in MuJoCo's body order
        c = int(model.body_parentid[b])
        while c > 0:
            inside[c, b] = True
            c = int(model.body_parentid[c])
    inside[0] = True
    return inside


def contact_pairs(model: mujoco.MjModel) -> np.ndarray:
    """``(P, 2)`` geom pairs (ascending) that ``mj_collision`` tests for contact, as MuJoCo filters them.

    MuJoCo decides itself: on a copy of the model whose geoms all have a 1 km margin, every pair that
    passes its filters (contype/conaffinity, same or welded body, parent-child, excluded body pairs)
    reports a contact; contacts MuJoCo marks excluded (bodies without dofs) are left out.
    """
    probe = copy.deepcopy(model)
    probe.geom_margin[:] = 1e3
    probe.geom_gap[:] = 0.0
    data = mujoco.MjData(probe)
    mujoco.mj_kinematics(probe, data)
    mujoco.mj_collision(probe, data)
    if data.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL].number:
        raise RuntimeError("contact_pairs: MuJoCo's contact buffer overflowed while listing the geom pairs")
    contacts = data.contact
    live = contacts.exclude == 0
    pairs = np.unique(np.sort(contacts.geom[live], axis=1), axis=0)
    return pairs.astype(np.intp).reshape(-1, 2)


def moved_pairs(model: mujoco.MjModel, bodies: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per body of ``bodies`` (each an active joint's body), the :func:`contact_pairs` with a geom in
    its subtree: ``(start, pairs, reach)``, joint ``a``'s pairs being ``pairs[start[a]:start[a + 1]]``
    and ``reach`` the sum of their bounding radii (``inf`` for a plane: no bounding sphere)."""
    every = contact_pairs(model)
    subtree = _subtrees(model)
    rows, start = [], [0]
    for body in bodies:
        inside = subtree[body][model.geom_bodyid[every]].any(axis=1)
        rows.append(every[inside])
        start.append(start[-1] + int(inside.sum()))
    pairs = np.concatenate(rows) if rows else np.zeros((0, 2), dtype=np.intp)
    rbound = model.geom_rbound[pairs]
    reach = np.where((rbound > 0.0).all(axis=1), rbound.sum(axis=1), np.inf)
    return np.asarray(start, dtype=np.intp), pairs.astype(np.intp), reach


def _full_joint_ids(model: mujoco.MjModel, qpos_adr: np.ndarray) -> np.ndarray:
    """The model joint of each entry of a full joint vector whose qpos addresses are ``qpos_adr``."""
    jnt_of_qpos = {int(model.jnt_qposadr[k]): k for k in range(model.njnt)}
    return np.array([jnt_of_qpos[int(adr)] for adr in qpos_adr], dtype=np.intp)


def rigid_movers(model: mujoco.MjModel, coupling: MimicCompletion, qpos_adr: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per active joint, the hinges that turn when it moves alone (itself and its mimic followers),
    each with the geoms of its subtree: ``(start, full_idx, jnt, geom_start, geoms)``.

    Joint ``a``'s movers are ``start[a]:start[a + 1]``, deepest body first (MuJoCo numbers a child
    after its parent), so the joint itself comes last (its geoms: the whole subtree); mover ``m`` is
    entry ``full_idx[m]`` of the full joint vector and model joint ``jnt[m]``, its geoms
    ``geoms[geom_start[m]:geom_start[m + 1]]``. A joint with a mover that is not a hinge gets none
    (its trials then run the kinematics: :func:`moved_depth`).
    """
    subtree = _subtrees(model)
    joint_of = _full_joint_ids(model, qpos_adr)
    start, full_idx, jnt, geom_start, geoms = [0], [], [], [0], []
    for followers in coupling.followers:
        movers = sorted(((-model.jnt_bodyid[joint_of[i]], i, joint_of[i]) for i, *_ in followers))
        if all(model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE for *_, j in movers):
            for _, i, j in movers:
                full_idx.append(i)
                jnt.append(j)
                geoms.extend(np.flatnonzero(subtree[model.jnt_bodyid[j]][model.geom_bodyid]).tolist())
                geom_start.append(len(geoms))
        start.append(len(full_idx))
    return tuple(np.asarray(x, dtype=np.intp) for x in (start, full_idx, jnt, geom_start, geoms))


class CollisionProjector:
    """Per-joint collision projection of candidate poses (see module docstring), for a compiled step.

    ``qpos_adr`` maps the coupling's full joint vector into ``data.qpos``. The model needs the
    :data:`DEEPEST_CONTACT_SENSOR` and a :data:`CHAIN_SENSOR_FORMAT` sensor per active joint
    (:func:`add_deepest_contact_sensor`, :func:`add_chain_contact_sensors`). The projector keeps no
    per-env state: :func:`project_pose` gets the start pose, the last safe pose and the MjData.
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
        self.group_free = bool(group_free)
        self.qpos_adr = np.asarray(qpos_adr, dtype=np.intp)
        joints = coupling.active_layout.names
        fix = "add_deepest_contact_sensor(spec) and add_chain_contact_sensors(spec, active joints)"
        #: sensordata addresses: the deepest contact overall, then one per active joint's subtree
        self.sensor_adr = np.array(
            [_sensor_adr(model, DEEPEST_CONTACT_SENSOR, fix)]
            + [_sensor_adr(model, CHAIN_SENSOR_FORMAT.format(j), fix) for j in joints],
            dtype=np.intp,
        )
        # A joint's sensor stands for "a contact touches a body this joint moves": its mimic followers
        # must sit in its own subtree (true of finger chains).
        subtree = _subtrees(model)
        body_of = model.jnt_bodyid[_full_joint_ids(model, self.qpos_adr)]
        roots = [int(body_of[i]) for i in coupling.active_idx]
        for a, followers in enumerate(coupling.followers):
            for i, *_ in followers:
                if not subtree[roots[a], body_of[i]]:
                    raise ValueError(
                        f"collision projection: joint {coupling.layout.names[i]} follows {joints[a]} but is not "
                        f"in its subtree; the per-joint contact sensors cannot attribute its contacts"
                    )
        #: Per active joint, the geom pairs its subtree is part of (:func:`moved_pairs`): what a trial
        #: moving that joint alone measures.
        self.pair_start, self.pairs, self.pair_reach = moved_pairs(model, roots)
        #: Per active joint, the hinges its move turns and their geoms (:func:`rigid_movers`): how a
        #: bisection's trials pose that joint's subtree without kinematics.
        self.movers = rigid_movers(model, coupling, self.qpos_adr)

    def trial_tables(self, data: mujoco.MjData) -> tuple[tuple, tuple]:
        """``(pair_tables, rigid_tables)`` of :func:`project_pose` for trials on ``data``."""
        pair_tables = (data.geom_xpos.ravel(), self.pair_start, self.pairs, self.pair_reach)
        return pair_tables, (data.geom_xmat.ravel(), data.xanchor.ravel(), data.xaxis.ravel(), *self.movers)

    def depth(self, data: mujoco.MjData, full: np.ndarray) -> float:
        """Deepest active penetration (m) of pose ``full``: kinematics + collision only."""
        return pose_depth(
            self.model._address, data._address, data.qpos, data.sensordata, self.qpos_adr, self.sensor_adr[0], full
        )


@kernel
def _write_qpos(qpos: Array, qpos_adr: Array, full: Array) -> None:
    """Write the full joint vector ``full`` into ``qpos`` (at ``qpos_adr``)."""
    for k in range(full.shape[0]):
        qpos[qpos_adr[k]] = full[k]


@kernel
def pose_depth(model: int, data: int, qpos: Array, sensors: Array, qpos_adr: Array, adr: int, full: Array) -> float:
    """Write ``full`` into ``qpos`` and return the deepest penetration of that pose (``>= 0``).

    ``mj_kinematics`` + ``mj_collision`` + the position sensors (the contact sensors; nothing else
    is evaluated): a trial, not a forward pass.
    """
    _write_qpos(qpos, qpos_adr, full)
    mj_kinematics(model, data)
    mj_collision(model, data)
    mj_sensorPos(model, data)
    d = sensors[adr]
    return -d if d < 0.0 else 0.0


@kernel
def moved_depth(model: int, data: int, qpos: Array, qpos_adr: Array, full: Array, a: int, pair_tables: tuple) -> float:
    """Write ``full`` into ``qpos``; the deepest penetration (``>= 0``) among the geom pairs that
    active joint ``a``'s subtree is part of (``pair_tables`` = ``(geom_xpos, start, pairs, reach)``, see
    :func:`moved_pairs`): ``mj_kinematics``, then :func:`pairs_depth`. The trial of a move of joint
    ``a`` alone.
    """
    _write_qpos(qpos, qpos_adr, full)
    mj_kinematics(model, data)
    return pairs_depth(model, data, a, pair_tables, None)


@kernel
def pairs_depth(model: int, data: int, a: int, pair_tables: tuple, measured: Array | None = None) -> float:
    """The deepest penetration (``>= 0``) among joint ``a``'s geom pairs at the geom poses in ``data``:
    ``mj_geomDistance`` for each pair whose bounding spheres overlap (one that does not is apart).
    ``measured``: per geom, whether its pairs were measured already (those pairs are skipped)."""
    xpos, start, pairs, reach = pair_tables
    deepest = 0.0
    for k in range(start[a], start[a + 1]):
        g, h = pairs[k, 0], pairs[k, 1]
        if measured is not None and (measured[g] or measured[h]):
            continue
        dx = xpos[3 * g] - xpos[3 * h]
        dy = xpos[3 * g + 1] - xpos[3 * h + 1]
        dz = xpos[3 * g + 2] - xpos[3 * h + 2]
        r = reach[k]
        if dx * dx + dy * dy + dz * dz > r * r:
            continue
        dist = mj_geomDistance(model, data, g, h, 0.0, 0)
        if -dist > deepest:
            deepest = -dist
    return deepest


@kernel
def group_depth(model: int, data: int, qpos: Array, qpos_adr: Array, full: Array, joints: Array,
                pair_tables: tuple, rigid_tables: tuple) -> float:  # fmt: skip
    """Write ``full`` into ``qpos``; the deepest penetration (``>= 0``) among the geom pairs that the
    subtrees of active ``joints`` are part of, each pair measured once: ``mj_kinematics``, then
    :func:`pairs_depth` per joint, skipping the pairs of the geoms of the joints before it. The trial
    of a move of these joints from a safe pose (each needs rigid movers: :func:`rigid_movers` lists
    the geoms of its subtree)."""
    _write_qpos(qpos, qpos_adr, full)
    mj_kinematics(model, data)
    movers, geom_start, geoms = rigid_tables[3], rigid_tables[6], rigid_tables[7]
    measured = np.zeros(pair_tables[0].shape[0] // 3, dtype=np.bool_)
    deepest = 0.0
    for a in joints:
        deepest = max(deepest, pairs_depth(model, data, a, pair_tables, measured))
        whole = movers[a + 1] - 1  # the joint itself: its geoms are the whole subtree
        for k in range(geom_start[whole], geom_start[whole + 1]):
            measured[geoms[k]] = True
    return deepest


@kernel
def _swap_frames(a: int, xpos: Array, rigid_tables: tuple, frames: Array, capture: bool) -> None:
    """Copy the poses of the geoms of joint ``a``'s subtree from ``data`` into ``frames`` (``capture``)
    or back (12 per geom: position, then orientation)."""
    xmat, start, geom_start, geoms = rigid_tables[0], rigid_tables[3], rigid_tables[6], rigid_tables[7]
    whole = start[a + 1] - 1  # the joint itself, last: its geoms are the whole subtree
    n = 0
    for k in range(geom_start[whole], geom_start[whole + 1]):
        g = geoms[k]
        for c in range(3):
            if capture:
                frames[n + c] = xpos[3 * g + c]
            else:
                xpos[3 * g + c] = frames[n + c]
        for c in range(9):
            if capture:
                frames[n + 3 + c] = xmat[9 * g + c]
            else:
                xmat[9 * g + c] = frames[n + 3 + c]
        n += 12


@kernel
def capture_frames(a: int, full: Array, pair_tables: tuple, rigid_tables: tuple, base: Array, frames: Array) -> None:
    """Keep what :func:`rotated_depth` rotates from: the values in ``full`` of joint ``a``'s movers
    (into ``base``) and the poses in ``data`` of the geoms of its subtree (into ``frames``, 12 per
    geom: position, then orientation), both as ``data``'s kinematics of ``full`` left them."""
    xpos = pair_tables[0]
    start, full_idx = rigid_tables[3], rigid_tables[4]
    for m in range(start[a], start[a + 1]):
        base[m - start[a]] = full[full_idx[m]]
    _swap_frames(a, xpos, rigid_tables, frames, True)


@kernel
def rotated_depth(model: int, data: int, a: int, full: Array, pair_tables: tuple, rigid_tables: tuple, base: Array,
                  frames: Array) -> float:  # fmt: skip
    """The trial of pose ``full``, which differs from the captured one (:func:`capture_frames`) in
    active joint ``a`` and its mimic followers only, without kinematics: each mover's subtree turns
    rigidly about the mover's axis through its anchor (deepest mover first, all about the captured
    poses), then :func:`pairs_depth`. Equal to :func:`moved_depth` up to rounding (~1e-17 m).

    ``rigid_tables``: ``(geom_xmat, xanchor, xaxis, start, full_idx, jnt, geom_start, geoms)`` (the
    first three ``data``'s arrays, flat; the rest :func:`rigid_movers`).
    """
    xpos = pair_tables[0]
    xmat, xanchor, xaxis, start, full_idx, jnt, geom_start, geoms = rigid_tables
    _swap_frames(a, xpos, rigid_tables, frames, False)  # back to the captured poses
    for m in range(start[a], start[a + 1]):
        angle = full[full_idx[m]] - base[m - start[a]]
        if angle == 0.0:
            continue
        j = jnt[m]
        x, y, z = xaxis[3 * j], xaxis[3 * j + 1], xaxis[3 * j + 2]
        px, py, pz = xanchor[3 * j], xanchor[3 * j + 1], xanchor[3 * j + 2]
        c, s = math.cos(angle), math.sin(angle)
        t = 1.0 - c  # Rodrigues: R = c I + s [axis]x + t axis axis^T
        r00, r01, r02 = t * x * x + c, t * x * y - s * z, t * x * z + s * y
        r10, r11, r12 = t * x * y + s * z, t * y * y + c, t * y * z - s * x
        r20, r21, r22 = t * x * z - s * y, t * y * z + s * x, t * z * z + c
        for k in range(geom_start[m], geom_start[m + 1]):
            g = geoms[k]
            vx, vy, vz = xpos[3 * g] - px, xpos[3 * g + 1] - py, xpos[3 * g + 2] - pz
            xpos[3 * g] = r00 * vx + r01 * vy + r02 * vz + px
            xpos[3 * g + 1] = r10 * vx + r11 * vy + r12 * vz + py
            xpos[3 * g + 2] = r20 * vx + r21 * vy + r22 * vz + pz
            for col in range(3):  # row-major 3x3: R @ xmat, column by column
                m0, m1, m2 = xmat[9 * g + col], xmat[9 * g + 3 + col], xmat[9 * g + 6 + col]
                xmat[9 * g + col] = r00 * m0 + r01 * m1 + r02 * m2
                xmat[9 * g + 3 + col] = r10 * m0 + r11 * m1 + r12 * m2
                xmat[9 * g + 6 + col] = r20 * m0 + r21 * m1 + r22 * m2
    return pairs_depth(model, data, a, pair_tables, None)


@kernel
def _set_joint(full: Array, a: int, value: float, completion: tuple) -> None:
    """Active joint ``a`` (unclipped) and its mimic followers (clipped) in ``full``: one projection trial's move."""
    active_idx, mimic_idx, mimic_src, ratio, lower, upper = completion
    full[active_idx[a]] = value
    for m in range(mimic_idx.shape[0]):
        if mimic_src[m] == a:
            f = mimic_idx[m]
            full[f] = min(max(value * ratio[m], lower[f]), upper[f])


@kernel
def _moving_joints_by_size(dq: Array) -> Array:
    """The joints with ``dq != 0``, largest ``|dq|`` first, ties in joint order (an insertion sort:
    16 entries at most, and stable)."""
    order = np.empty(dq.shape[0], dtype=np.intp)
    n = 0
    for j in range(dq.shape[0]):
        if dq[j] == 0.0:
            continue
        k = n
        while k > 0 and abs(dq[order[k - 1]]) < abs(dq[j]):
            order[k] = order[k - 1]
            k -= 1
        order[k] = j
        n += 1
    return order[:n]


@kernel
def _joint_depth(model: int, data: int, qpos: Array, sensors: Array, qpos_adr: Array, adr: int, full: Array,
                 a: int, pair_tables: tuple, from_safe: bool) -> float:  # fmt: skip
    """The trial of pose ``full``, which differs from the accepted pose in joint ``a`` only: that
    joint's pairs when the accepted pose is known safe, else every contact."""
    if from_safe:
        return moved_depth(model, data, qpos, qpos_adr, full, a, pair_tables)
    return pose_depth(model, data, qpos, sensors, qpos_adr, adr, full)


@kernel
def project_pose(model: int, data: int, qpos: Array, sensors: Array, qpos_adr: Array, sensor_adr: Array,
                 completion: tuple, pair_tables: tuple, rigid_tables: tuple, tol: float, iters: int,
                 group_free: bool, start: Array, candidate: Array, start_is_safe: bool, last_safe: Array,
                 out: Array, full: Array) -> tuple[int, int, bool]:  # fmt: skip
    """Write into ``out`` the accepted pose on the way from ``start`` to a penetrating ``candidate``.

    Called once the candidate (active joints) has been evaluated on ``data`` and found deeper than
    ``tol``: ``sensors`` still hold its contacts (which joints touch a too-deep one). Returns
    ``(checks, limited, fallback)``: collision evaluations (the candidate's included), joints not
    accepted whole and whether the result penetrated (possible only from a penetrating start) so that
    ``last_safe`` was used. ``data`` is scratch (its kinematics and contacts are the last trial's), so
    is ``full``. ``pair_tables``: those of :func:`moved_depth`, used for the trials of one joint
    from a safe start (each accepted pose is safe, so the contacts that move are the only question);
    ``rigid_tables``: those of :func:`rotated_depth`, for the trials after a joint's whole move failed
    (the smallest step and the bisection turn the whole move's geom poses: no kinematics).
    """
    # Element loops rather than array expressions throughout: those carry numba's shape-mismatch
    # errors, whose message formatting alone tripled this kernel's compile time.
    adr = sensor_adr[0]
    na = start.shape[0]
    movers = rigid_tables[3]
    checks, limited = 1, 0
    q = start.copy()
    dq = np.empty(na)
    for j in range(na):
        dq[j] = candidate[j] - q[j]
    order = _moving_joints_by_size(dq)
    moving = order.shape[0]
    moved = False
    if group_free and moving > 1:
        # joints whose subtree touches no too-deep contact of the candidate move together, in one check
        free = np.empty(moving, dtype=np.bool_)
        for k in range(moving):
            free[k] = sensors[sensor_adr[1 + order[k]]] >= -tol
        nfree = 0
        for k in range(moving):
            nfree += free[k]
        if 0 < nfree < moving:
            trial = q.copy()
            joints = np.empty(nfree, dtype=order.dtype)
            f = 0
            listed = start_is_safe  # and the free joints' subtree geoms are listed
            for k in range(moving):
                if free[k]:
                    trial[order[k]] = candidate[order[k]]
                    joints[f] = order[k]
                    f += 1
                    listed = listed and movers[order[k]] < movers[order[k] + 1]
            complete_into(trial, completion, True, full)
            checks += 1
            if listed:  # from a safe start only the moved subtrees' pairs can decide
                depth = group_depth(model, data, qpos, qpos_adr, full, joints, pair_tables, rigid_tables)
            else:
                depth = pose_depth(model, data, qpos, sensors, qpos_adr, adr, full)
            if depth <= tol:
                q = trial
                moved = True
                rest = np.empty(moving - nfree, dtype=order.dtype)
                r = 0
                for k in range(moving):
                    if not free[k]:
                        rest[r] = order[k]
                        r += 1
                order = rest
    complete_into(q, completion, True, full)
    smallest = 2.0**-iters
    base = np.empty(full.shape[0])  # what rotated_depth turns from: movers' values, geom poses
    frames = np.empty(4 * pair_tables[0].shape[0])
    for a in order:
        origin = q[a]
        step = dq[a]
        _set_joint(full, a, candidate[a], completion)
        checks += 1
        if _joint_depth(model, data, qpos, sensors, qpos_adr, adr, full, a, pair_tables, start_is_safe) <= tol:
            q[a] = candidate[a]
            moved = True
            continue
        limited += 1
        # The rest of this joint's trials turn its subtree from the whole move's kinematics.
        rigid = start_is_safe and movers[a] < movers[a + 1]
        if rigid:
            capture_frames(a, full, pair_tables, rigid_tables, base, frames)
        # The smallest step first (a joint already against a contact costs one check, not a whole
        # bisection), then the bisection on the fraction of the move; one trial call site keeps the
        # compiled kernel small.
        lo, hi, frac = 0.0, 1.0, smallest
        for k in range(iters + 1):
            _set_joint(full, a, origin + frac * step, completion)
            checks += 1
            if rigid:
                depth = rotated_depth(model, data, a, full, pair_tables, rigid_tables, base, frames)
            else:
                depth = _joint_depth(model, data, qpos, sensors, qpos_adr, adr, full, a, pair_tables, start_is_safe)
            if depth <= tol:
                lo = frac
            elif k == 0:
                break
            else:
                hi = frac
            frac = 0.5 * (lo + hi)
        q[a] = origin + lo * step
        _set_joint(full, a, q[a], completion)
        moved = moved or lo > 0.0
    if not moved and not start_is_safe:
        checks += 1
        if pose_depth(model, data, qpos, sensors, qpos_adr, adr, full) > tol:
            for j in range(na):
                out[j] = last_safe[j]
            return checks, limited, True
    for j in range(na):
        out[j] = q[j]
    return checks, limited, False
