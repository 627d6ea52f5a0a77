"""The committed USD equals a fresh conversion of the committed URDF, and describes the same robot."""

import math

import mujoco
import numpy as np
import pytest
from pxr import Usd, UsdPhysics

from dexwheel.isaaclab.usd import GROUND_USD, usd_path, usd_texts
from dexwheel.robots import ROBOTS, get_robot
from dexwheel.robots.assets import ASSETS_DIR


def test_committed_usd_equals_a_fresh_build():
    for path, text in usd_texts().items():
        assert path.exists(), f"{path} missing: run .venv-isaaclab/bin/python scripts/build_usd.py"
        assert path.read_text() == text, f"{path} differs from a fresh build: run scripts/build_usd.py"


def _stage(robot):
    return Usd.Stage.Open(str(usd_path(robot)))


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_usd_joints_bodies_and_fixes_follow_the_description(robot):
    desc = get_robot(robot)
    stage = _stage(robot)
    joints = {p.GetName(): p for p in stage.Traverse() if p.IsA(UsdPhysics.RevoluteJoint)}
    assert sorted(joints) == sorted(desc.joint_names)
    for j in desc.joints:
        prim = joints[j.name]
        if j.limits is None:
            assert not prim.GetAttribute("physics:lowerLimit").HasAuthoredValue(), j.name
        else:
            lo, hi = (math.radians(prim.GetAttribute(f"physics:{s}Limit").Get()) for s in ("lower", "upper"))
            np.testing.assert_allclose((lo, hi), j.limits, atol=1e-6, err_msg=j.name)
        assert "NewtonMimicAPI" not in prim.GetAppliedSchemas(), f"{j.name}: the MuJoCo model has no mimic equality"
    welds = [p for p in stage.Traverse() if p.IsA(UsdPhysics.FixedJoint)]
    assert len(welds) == (0 if desc.floating_base else 1), "only a fixed base keeps its weld to the world"
    bodies = {p.GetName(): p for p in stage.Traverse() if p.HasAPI(UsdPhysics.RigidBodyAPI)}
    assert sorted(bodies) == sorted(b.name for b in desc.bodies)
    mass = sum(UsdPhysics.MassAPI(p).GetMassAttr().Get() for p in bodies.values())
    assert mass == pytest.approx(desc.total_mass, rel=1e-6)
    filtered = {(p.GetName(), t.name) for p in bodies.values() if p.HasAPI(UsdPhysics.FilteredPairsAPI)
                for t in UsdPhysics.FilteredPairsAPI(p).GetFilteredPairsRel().GetTargets()}  # fmt: skip
    expected = {(a, b) for a, b in desc.contact_excludes if desc.body(a).collision and desc.body(b).collision}
    assert filtered == expected
    for p in stage.Traverse():
        if p.HasAPI(UsdPhysics.CollisionAPI):
            assert list(p.GetAttribute("mjc:solref").Get()) == pytest.approx(desc.contact.solref), p.GetName()


def test_ground_plane_is_one_collision_plane_at_zero():
    stage = Usd.Stage.Open(str(GROUND_USD))
    planes = [p for p in stage.Traverse() if p.GetTypeName() == "Plane"]
    assert len(planes) == 1 and planes[0].HasAPI(UsdPhysics.CollisionAPI)


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_usd_in_newton_has_the_urdf_kinematics_and_mass(robot):
    """Newton's import of the USD against MuJoCo's of the URDF (mujoco 3.12 here): FK at random poses."""
    import newton
    import warp as wp

    desc = get_robot(robot)
    builder = newton.ModelBuilder()
    builder.add_usd(str(usd_path(robot)))
    model = builder.finalize(device="cpu")
    labels = [label.rsplit("/", 1)[-1] for label in model.body_label]
    ur = mujoco.MjModel.from_xml_path(str(ASSETS_DIR / robot / f"{robot}.urdf"))
    assert model.body_mass.numpy().sum() == pytest.approx(ur.body_mass.sum(), rel=1e-6)
    du = mujoco.MjData(ur)
    jlabels = [label.rsplit("/", 1)[-1] for label in model.joint_label]
    q_start = model.joint_q_start.numpy()
    free = [i for i, t in enumerate(model.joint_type.numpy()) if t == int(newton.JointType.FREE)]
    assert len(free) == (1 if desc.floating_base else 0)
    rng = np.random.default_rng(3)
    state = model.state()
    for _ in range(5):
        q = np.zeros(model.joint_coord_count)
        for i in free:
            q[q_start[i] + 6] = 1.0  # identity orientation (x, y, z, w) at the origin, as MuJoCo's URDF root
        for j in desc.joints:
            lo, hi = j.limits or (-math.pi, math.pi)
            value = rng.uniform(lo, hi)
            q[q_start[jlabels.index(j.name)]] = value
            du.qpos[ur.jnt_qposadr[ur.joint(j.name).id]] = value
        newton.eval_fk(model, wp.array(q, dtype=wp.float32), model.joint_qd, state)
        mujoco.mj_kinematics(ur, du)
        body_q = state.body_q.numpy()
        for b in desc.bodies:
            np.testing.assert_allclose(body_q[labels.index(b.name), :3], du.xpos[ur.body(b.name).id], atol=2e-6,
                                       err_msg=f"{robot} {b.name}")  # fmt: skip
