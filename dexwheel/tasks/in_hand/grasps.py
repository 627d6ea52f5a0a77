"""The grasp cache: start states of the in-hand tasks, sampled and verified once, stored small beside this module.

A grasp is the G20's 16 active joint positions and the object's pose (position, quaternion w x y z) at rest in the
hand. It is made by closing the hand on the object (:func:`sample`), with the task's physics (the config's
``physics``): an upright object (a cube, an upright cylinder, a sphere) is dropped a few millimetres onto the palm near
the fingers (random yaw, +-8 mm) while the PD actuators drive the open hand toward a random closed pose (fingers
flexed 0.8-1.22 rad at the knuckle, the thumb opposed) for 1.5 s; an object ``across`` (a cylinder or capsule lying
across the fingers) is laid, turned at random about its axis, +-5 mm, by the knuckles into a hand already at rest in
a random hooked pose (the fingers hooked over it, the thumb's tip low on the palm behind it: the rolling gait's
poses, :data:`ACROSS_CLOSE_RANGES`), since closing fingers bat a lying object off the palm, and settles for 1.5 s. The
settled state is kept when the object rests where it should (within 6 mm of its resting height, its axis within 0.15
rad of its resting direction), it touches the palm and two more of the hand's bodies, and everything has stopped
(every joint slower than 0.05 rad/s). Kept grasps are then verified as the tasks use them (:func:`holds`): started at
rest in that state with the fingers commanded to hold it, the object stays within 5 mm and 0.05 rad of where it
started for a second. Reset draws one uniformly (as HORA's and the LEAP hand's grasp caches).

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
from dexwheel.tasks.in_hand.objects import DROP_POINT, PALM_CENTRE, PALM_NORMAL, ObjectSpec
from dexwheel.tasks.in_hand.physics import InHandPhysicsCfg
from dexwheel.tasks.in_hand.scene import OBJECT_GEOM, build_scene, object_addresses

SETTLE_S, HOLD_S = 1.5, 1.0
#: What a verified grasp keeps over HOLD_S at rest (m, rad).
HOLD_DRIFT_M, HOLD_TILT_RAD = 0.005, 0.05
#: Closed poses the hand is driven toward, per joint kind (rad): (low, high); an upright object is gripped by the
#: flexed fingers against the opposed thumb.
CLOSE_RANGES = {"mcp_pitch": (0.8, 1.22), "pip": (0.6, 1.5), "mcp_roll": (-0.15, 0.15), "thumb_cmc_yaw": (0.8, 1.57),
                "thumb_cmc_roll": (0.0, 1.2), "thumb_cmc_pitch": (0.2, 0.84), "thumb_mcp": (0.2, 1.0)}  # fmt: skip
#: An object across the fingers: the fingers hooked over it, the thumb's tip low on the palm behind it (toward the
#: wrist), its stop: the poses the rolling gait passes through.
ACROSS_CLOSE_RANGES = {"mcp_pitch": (0.35, 0.6), "pip": (0.8, 1.05), "mcp_roll": (-0.15, -0.08),
                       "thumb_cmc_yaw": (0.65, 0.8), "thumb_cmc_roll": (1.15, 1.3), "thumb_cmc_pitch": (0.5, 0.65),
                       "thumb_mcp": (1.1, 1.26)}  # fmt: skip
#: Where an object across is laid: 57 mm from the palm's centre toward the fingers, by the knuckles (the fingertips
#: reach no further toward the wrist than 127 mm from the wrist's origin, docs/how-to/in-hand.md).
ACROSS_DROP_POINT = PALM_CENTRE + np.array([-0.057, 0.0, 0.0])


class _Scene:
    """One MjData on the scene (with ``physics``, None: the tasks' default), with the addresses the sampling reads."""

    def __init__(self, hand: str, obj: ObjectSpec, physics: InHandPhysicsCfg | None = None) -> None:
        self.model = m = build_scene(hand, obj, physics=physics)
        self.data = mujoco.MjData(m)
        self.qadr = m.jnt_qposadr[[m.joint(j).id for j in ALL_JOINTS]]
        self.obj_adr, _ = object_addresses(m)
        self.obj_geom = m.geom(OBJECT_GEOM).id
        self.palm_geom = m.geom("hand_base_col").id
        self.palm = int(m.geom_bodyid[self.palm_geom])
        self.rest_z = PALM_CENTRE[2] + obj.half_height
        self.axis = obj.symmetry_axis

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds / self.model.opt.timestep)):
            mujoco.mj_step(self.model, self.data)

    def touching_bodies(self) -> set[int]:
        """The bodies whose geoms touch the object (a fingertip's pad and capsule are one)."""
        return {int(self.model.geom_bodyid[g]) for g in self.touching()}

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


def _tilt(quat: np.ndarray, axis: np.ndarray = PALM_NORMAL) -> float:
    """The angle (rad) between the object's z axis and the world ``axis`` it rests along (its tilt off its rest)."""
    w, x, y, z = quat
    body_z = np.array([2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)])
    return float(np.arccos(np.clip(body_z @ axis, -1.0, 1.0)))


def _closed_pose(rng: np.random.Generator, ranges: dict[str, tuple[float, float]] = CLOSE_RANGES) -> np.ndarray:
    q = np.zeros(len(ACTIVE_JOINTS))
    for i, j in enumerate(ACTIVE_JOINTS):
        kind = next((k for k in ranges if j == k or j.endswith(k)), None)
        if kind is not None:
            q[i] = rng.uniform(*ranges[kind])
    return np.clip(q, G20_MIMIC.active_lower, G20_MIMIC.active_upper)


def _drop_pose(obj: ObjectSpec, rng: np.random.Generator) -> np.ndarray:
    """Where the object is dropped: near the fingers, a few millimetres above its resting height, turned at random
    about its symmetry axis (upright: yaw; across: about the cylinder's own axis)."""
    across = obj.orientation == "across"
    angle = rng.uniform(-np.pi, np.pi)
    point = ACROSS_DROP_POINT if across else DROP_POINT
    dx, dy = (0.005, 0.005) if across else (0.008, 0.01)
    pos = point + np.array([rng.uniform(-dx, dx), rng.uniform(-dy, dy), obj.half_height + 0.0005])
    spin = np.array([np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)])
    if not across:
        return np.array([*pos, *spin])
    quat = np.zeros(4)
    mujoco.mju_mulQuat(quat, np.array(obj.rest_quat), spin)
    return np.array([*pos, *quat])


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
           progress: Callable[[int, int], None] | None = None,
           physics: InHandPhysicsCfg | None = None) -> GraspCache:  # fmt: skip
    """``count`` verified grasps (fewer if ``max_tries`` closings are not enough), drawn from ``seed``, simulated with
    ``physics`` (None: the tasks' default)."""
    rng = np.random.default_rng(seed)
    physics = physics or InHandPhysicsCfg()
    scene = _Scene(hand, obj, physics)
    active = G20_MIMIC.active_idx
    joints, poses, tries = [], [], 0
    across = obj.orientation == "across"
    ranges = ACROSS_CLOSE_RANGES if across else CLOSE_RANGES
    while len(joints) < count and tries < max_tries:
        tries += 1
        command = _closed_pose(rng, ranges)
        pose = _drop_pose(obj, rng)
        # upright: the hand closes from open onto the object; across: the hand is closed first and the object laid
        # into it (closing fingers bat a lying cylinder off the palm)
        scene.start(command if across else np.zeros(len(ACTIVE_JOINTS)), pose, command)
        scene.run(SETTLE_S)
        settled = scene.object_pose()
        touching = scene.touching_bodies()
        ok = (abs(settled[2] - scene.rest_z) < 0.006 and _tilt(settled[3:], scene.axis) < 0.15 and scene.palm in touching
              and len(touching - {scene.palm}) >= 2 and np.abs(scene.data.qvel).max() < 0.05)  # fmt: skip
        if not ok:
            continue
        q = scene.data.qpos[scene.qadr][active].copy()
        if holds(scene, q, settled):
            joints.append(q)
            poses.append(settled)
            if progress is not None:
                progress(len(joints), tries)
    return GraspCache(hand, obj, np.array(joints).reshape(-1, len(ACTIVE_JOINTS)), np.array(poses).reshape(-1, 7),
                      seed, tries, physics)  # fmt: skip
