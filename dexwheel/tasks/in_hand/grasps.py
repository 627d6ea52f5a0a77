"""The grasp cache: start states of the in-hand tasks, sampled and verified once, stored small beside this module.

A grasp is the G20's 16 active joint positions and the object's pose (position, quaternion w x y z) at rest on the
palm with at least two fingers touching it. It is made by closing the hand on the object (:func:`sample`): from the
open hand, the PD actuators driven toward a random closed pose (fingers flexed 0.8-1.22 rad at the knuckle, the
thumb opposed) with the object dropped a few millimetres onto the palm near the fingers (random yaw, +-8 mm), for
1.5 s; the settled state is kept when the object lies on the palm (within 6 mm of its resting height, tilted less
than 0.15 rad), at least two fingers or the thumb touch it and everything has stopped (every joint slower than 0.05
rad/s). Kept grasps are then verified as the tasks use them (:func:`holds`): started at rest in that state with the
fingers commanded to hold it, the object stays within 5 mm and 0.05 rad of where it started for a second. Reset
draws one uniformly (as HORA's and the LEAP hand's grasp caches).

The cache's files (:class:`~dexwheel.tasks.in_hand.grasp_cache.GraspCache`, stored small beside this module) are
:mod:`dexwheel.tasks.in_hand.grasp_cache`'s, which both backends read without MuJoCo.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from dexwheel.control import G20_MIMIC
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS
from dexwheel.tasks.in_hand.grasp_cache import GraspCache
from dexwheel.tasks.in_hand.objects import DROP_POINT, PALM_CENTRE, ObjectSpec
from dexwheel.tasks.in_hand.scene import OBJECT_GEOM, build_scene, object_addresses

SETTLE_S, HOLD_S = 1.5, 1.0
#: What a verified grasp keeps over HOLD_S at rest (m, rad).
HOLD_DRIFT_M, HOLD_TILT_RAD = 0.005, 0.05
#: Closed poses the hand is driven toward, per joint kind (rad): (low, high).
CLOSE_RANGES = {"mcp_pitch": (0.8, 1.22), "pip": (0.6, 1.5), "mcp_roll": (-0.15, 0.15), "thumb_cmc_yaw": (0.8, 1.57),
                "thumb_cmc_roll": (0.0, 1.2), "thumb_cmc_pitch": (0.2, 0.84), "thumb_mcp": (0.2, 1.0)}  # fmt: skip


class _Scene:
    """One MjData on the scene, with the addresses the sampling reads."""

    def __init__(self, hand: str, obj: ObjectSpec) -> None:
        self.model = m = build_scene(hand, obj)
        self.data = mujoco.MjData(m)
        self.qadr = m.jnt_qposadr[[m.joint(j).id for j in ALL_JOINTS]]
        self.obj_adr, _ = object_addresses(m)
        self.obj_geom = m.geom(OBJECT_GEOM).id
        self.palm_geom = m.geom("hand_base_col").id
        self.rest_z = PALM_CENTRE[2] + obj.half_height

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds / self.model.opt.timestep)):
            mujoco.mj_step(self.model, self.data)

    def touching(self) -> set[int]:
        d, g = self.data, self.obj_geom
        return {c.geom1 if c.geom2 == g else c.geom2 for c in d.contact[: d.ncon] if g in (c.geom1, c.geom2)}

    def object_pose(self) -> np.ndarray:
        return self.data.qpos[self.obj_adr : self.obj_adr + 7].copy()

    def start(self, joints: np.ndarray, pose: np.ndarray, command: np.ndarray) -> None:
        """At rest: the hand at ``joints``, the object at ``pose``, the actuators commanded to ``command``."""
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        d.qpos[self.qadr] = G20_MIMIC.complete(joints, clip_mimic=True)
        d.qpos[self.obj_adr : self.obj_adr + 7] = pose
        d.ctrl[:] = G20_MIMIC.complete(command, clip_mimic=True)
        mujoco.mj_forward(m, d)


def _tilt(quat: np.ndarray) -> float:
    """The angle (rad) between the object's z axis and the world's (its tilt off the palm)."""
    w, x, y, z = quat
    return float(np.arccos(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0)))


def _closed_pose(rng: np.random.Generator) -> np.ndarray:
    q = np.zeros(len(ACTIVE_JOINTS))
    for i, j in enumerate(ACTIVE_JOINTS):
        kind = next((k for k in CLOSE_RANGES if j == k or j.endswith(k)), None)
        if kind is not None:
            q[i] = rng.uniform(*CLOSE_RANGES[kind])
    return np.clip(q, G20_MIMIC.active_lower, G20_MIMIC.active_upper)


def holds(scene: _Scene, joints: np.ndarray, pose: np.ndarray) -> bool:
    """Whether the grasp holds: started at rest with the fingers commanded to ``joints``, the object stays within
    :data:`HOLD_DRIFT_M` and :data:`HOLD_TILT_RAD` of ``pose`` for :data:`HOLD_S`."""
    scene.start(joints, pose, joints)
    scene.run(HOLD_S)
    now = scene.object_pose()
    drift = float(np.linalg.norm(now[:3] - pose[:3]))
    turned = 2.0 * float(np.arccos(min(1.0, abs(float(np.dot(now[3:], pose[3:]))))))
    return drift < HOLD_DRIFT_M and turned < HOLD_TILT_RAD


def sample(hand: str, obj: ObjectSpec, count: int, seed: int = 0, max_tries: int = 100_000,
           progress: Callable[[int, int], None] | None = None) -> GraspCache:  # fmt: skip
    """``count`` verified grasps (fewer if ``max_tries`` closings are not enough), drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    scene = _Scene(hand, obj)
    active = G20_MIMIC.active_idx
    joints, poses, tries = [], [], 0
    while len(joints) < count and tries < max_tries:
        tries += 1
        command = _closed_pose(rng)
        yaw = rng.uniform(-np.pi, np.pi)
        pos = DROP_POINT + np.array([rng.uniform(-0.008, 0.008), rng.uniform(-0.01, 0.01),
                                                    obj.half_height + 0.0005])  # fmt: skip
        pose = np.array([*pos, np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
        scene.start(np.zeros(len(ACTIVE_JOINTS)), pose, command)
        scene.run(SETTLE_S)
        settled = scene.object_pose()
        touching = scene.touching()
        ok = (abs(settled[2] - scene.rest_z) < 0.006 and _tilt(settled[3:]) < 0.15 and scene.palm_geom in touching
              and len(touching - {scene.palm_geom}) >= 2 and np.abs(scene.data.qvel).max() < 0.05)  # fmt: skip
        if not ok:
            continue
        q = scene.data.qpos[scene.qadr][active].copy()
        if holds(scene, q, settled):
            joints.append(q)
            poses.append(settled)
            if progress is not None:
                progress(len(joints), tries)
    return GraspCache(hand, obj, np.array(joints).reshape(-1, len(ACTIVE_JOINTS)), np.array(poses).reshape(-1, 7),
                      seed, tries)  # fmt: skip
