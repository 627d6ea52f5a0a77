"""The object tasks' physics (dexwheel/tasks/in_hand/physics.py, the scene's contact model): the 10 ms step with the
armature that keeps a saturated finger from chattering, the fingers tracking as at the spec's 2 ms, the pads contact
model, and an object held still staying still."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from dexwheel.control import G20_MIMIC
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS
from dexwheel.tasks.in_hand import grasp_cache, grasps
from dexwheel.tasks.in_hand.config import rotate_cfg
from dexwheel.tasks.in_hand.objects import ObjectSpec
from dexwheel.tasks.in_hand.physics import LEGACY, InHandPhysicsCfg, min_armature
from dexwheel.tasks.in_hand.scene import OBJECT_GEOM, build_scene, object_addresses


def _chattering_closings(physics: InHandPhysicsCfg, tries: int = 20) -> int:
    """How many of the grasp sampler's first closings on the cube leave a hand joint faster than 1 rad/s at their end
    (a saturated finger's +-8 N m limit cycle: the hand at rest moves slower than 0.05 rad/s)."""
    scene = grasps._Scene("left", ObjectSpec(), physics)
    rng = np.random.default_rng(0)
    count = 0
    for _ in range(tries):
        command = grasps._closed_pose(rng)
        scene.start(np.zeros(len(ACTIVE_JOINTS)), grasps._drop_pose(ObjectSpec(), rng), command)
        scene.run(grasps.SETTLE_S)
        count += bool(np.abs(scene.data.qvel[: len(ALL_JOINTS)]).max() > 1.0)
    return count


def test_the_armature_ends_the_saturated_fingers_limit_cycle():
    """The spec's armature (0.01 kg m^2) below kv * timestep / 2 (0.02 at 5 ms, 0.04 at 10 ms) lets a saturated finger
    chatter after the sampler's closings (measured 13 and 19 of 20); 1.25 times it (the tasks' 0.025 at 5 ms, 0.05 at
    10 ms) does not, nor does the spec's 2 ms step with its own 0.01."""
    assert min_armature(0.005) == pytest.approx(0.02) and min_armature(0.002) == pytest.approx(0.008)
    assert InHandPhysicsCfg() == InHandPhysicsCfg(0.005, 0.025)
    assert _chattering_closings(InHandPhysicsCfg(0.005, 0.01)) >= 10
    assert _chattering_closings(InHandPhysicsCfg(0.01, 0.01)) >= 15
    assert _chattering_closings(InHandPhysicsCfg()) == 0
    assert _chattering_closings(InHandPhysicsCfg(0.01, 0.05)) == 0
    assert _chattering_closings(InHandPhysicsCfg(0.002, 0.01)) == 0


def _track(physics: InHandPhysicsCfg) -> np.ndarray:
    """The index finger's knuckle and middle joint following a 1.5 Hz ellipse for 3 s, the object out of reach,
    sampled every control step."""
    model = build_scene("left", ObjectSpec(), physics=physics)
    data = mujoco.MjData(model)
    qa, _ = object_addresses(model)
    data.qpos[qa : qa + 3] = (0.5, 0.5, 0.5)
    cols = [model.jnt_qposadr[model.joint(j).id] for j in ("index_mcp_pitch", "index_pip")]
    k_mcp, k_pip = ACTIVE_JOINTS.index("index_mcp_pitch"), ACTIVE_JOINTS.index("index_pip")
    out, command, nsub = [], np.zeros(16), round(0.05 / physics.timestep)
    for s in range(60):
        goal = np.zeros(16)
        goal[k_mcp] = 0.5 + 0.3 * math.sin(3.0 * math.pi * s * 0.05)
        goal[k_pip] = 0.8 + 0.3 * math.cos(3.0 * math.pi * s * 0.05)
        for _ in range(nsub):  # the PD drive's 5 rad/s ramp
            command = command + np.clip(goal - command, -5 * physics.timestep, 5 * physics.timestep)
            data.ctrl[:] = G20_MIMIC.complete(command, clip_mimic=True)
            mujoco.mj_step(model, data)
        out.append(data.qpos[cols].copy())
    return np.array(out)


def test_the_fingers_track_as_at_the_specs_2_ms():
    """Free of contact, the tasks' 5 ms step with its armature follows a finger's ellipse within 0.01 rad RMS of the
    spec's 2 ms step (measured 0.0056; 10 ms with 0.05: 0.017)."""
    reference = _track(InHandPhysicsCfg(0.002, 0.01))
    rms = float(np.sqrt(np.mean((_track(InHandPhysicsCfg()) - reference) ** 2)))
    assert 0.0 < rms < 0.01
    assert float(np.sqrt(np.mean((_track(InHandPhysicsCfg(0.01, 0.05)) - reference) ** 2))) < 0.025


def test_the_pads_contact_model_grips_with_the_pads_and_slides_elsewhere():
    obj = rotate_cfg().object
    model = build_scene("left", obj)
    pads = [model.geom(f"{f}_pad_col").id for f in ("thumb", "index", "middle", "ring", "pinky")]
    assert [model.body(model.geom_bodyid[g]).name for g in pads] == [f"{f}_distal" for f in
                                                                      ("thumb", "index", "middle", "ring", "pinky")]  # fmt: skip
    hand = [g for g in range(model.ngeom) if model.geom_contype[g] and model.geom(g).name != OBJECT_GEOM]
    assert all(model.geom_priority[g] == 1 and model.geom_condim[g] == 3 for g in hand)
    for g in hand:
        expected = obj.friction if g in pads else InHandPhysicsCfg().palm_friction
        assert tuple(model.geom_friction[g]) == (expected, 0.0, 0.0)
    assert model.opt.timestep == 0.005 and np.all(model.dof_armature[: len(ALL_JOINTS)] == 0.025)
    assert all(tuple(model.geom_solref[g]) == (0.02, 1.0) for g in hand)
    spec_model = build_scene("left", ObjectSpec(), physics=LEGACY)  # before issue 70: no pads, the spec's friction
    assert "index_pad_col" not in [spec_model.geom(g).name for g in range(spec_model.ngeom)]
    assert spec_model.geom_condim[spec_model.geom(OBJECT_GEOM).id] == 4 and spec_model.opt.timestep == 0.002


def test_the_rolling_object_held_still_stays_still():
    """The hand holding a cached grasp of the rolling task's capsule still for 3 s: the capsule turns by less than
    0.01 rad and moves less than 2 mm (a cylinder lying along the palm's edge creeps round there: the capsule's
    reason)."""
    cfg = rotate_cfg()
    cache = grasp_cache.load_for("left", cfg.object, physics=cfg.physics)
    scene = grasps._Scene("left", cfg.object, cfg.physics)
    for k in range(4):
        scene.start(cache.joints[k], cache.object_pose[k], cache.joints[k])
        scene.run(3.0)
        now = scene.object_pose()
        turned = 2.0 * math.acos(min(1.0, abs(float(now[3:] @ cache.object_pose[k, 3:]))))
        assert turned < 0.01 and np.linalg.norm(now[:3] - cache.object_pose[k, :3]) < 0.002
