"""The four robot models against the numbers of shared/spec (issue: foundation)."""

import itertools

import mujoco
import numpy as np
import pytest
import spec_tables as S
from mjutil import body_inertia_tensor, contacts, rpy_quat, same_rotation, tensor

from dexwheel.robots import get_robot
from dexwheel.robots.mjcf import build_spec, compile_model
from dexwheel.sim.model_checks import ModelError, check_robot_model

G20_HANDS = ["g20_left", "g20_right"]
FINGERS = ("index", "middle", "ring", "pinky")


def _mirror(v, hand):
    return (v[0], -v[1], v[2]) if hand == "g20_right" else tuple(v)


@pytest.fixture(scope="module", params=G20_HANDS)
def hand(request):
    return request.param, compile_model(get_robot(request.param))


# -- G20 --------------------------------------------------------------------------------------
def test_g20_bodies_and_joints_follow_the_spec_tree(hand):
    name, m = hand
    assert m.nbody - 1 == 22
    assert [m.joint(i).name for i in range(m.njnt)] == [row[0] for row in S.G20_JOINT_TREE]
    for joint, parent, child, xyz, rpy, axis in S.G20_JOINT_TREE:
        j = m.joint(joint)
        assert j.type[0] == mujoco.mjtJoint.mjJNT_HINGE
        assert m.body(j.bodyid[0]).name == child
        assert m.body(m.body(child).parentid[0]).name == parent
        np.testing.assert_allclose(m.body(child).pos, _mirror(xyz, name), atol=1e-12)
        r, p, y = rpy
        expected_rpy = (-r, p, -y) if name == "g20_right" else rpy
        assert same_rotation(m.body(child).quat, rpy_quat(expected_rpy)), joint
        # a mirrored hinge axis is (-ax, ay, -az): flexion keeps its sense, abduction/yaw reverse
        expected_axis = (-axis[0], axis[1], -axis[2]) if name == "g20_right" else axis
        np.testing.assert_allclose(j.axis, expected_axis, atol=1e-12)
        np.testing.assert_allclose(j.range, S.G20_LIMITS[joint], atol=0)
        assert j.limited[0] == 1


def test_g20_masses_coms_and_inertias_equal_the_spec(hand):
    name, m = hand
    assert abs(m.body_mass.sum() - S.G20_TOTAL_MASS) < 1e-3
    for body, (mass, com, inertia) in S.G20_MASS.items():
        assert m.body(body).mass[0] == pytest.approx(mass, abs=1e-12)
        np.testing.assert_allclose(m.body(body).ipos, _mirror(com, name), atol=1e-9)
        expected = tensor(inertia)
        if name == "g20_right":  # I -> M I M with M = diag(1, -1, 1)
            flip = np.diag([1.0, -1.0, 1.0])
            expected = flip @ expected @ flip
        np.testing.assert_allclose(body_inertia_tensor(m, body), expected, atol=1e-9, err_msg=body)


def test_g20_actuators_and_simulation_settings(hand):
    _, m = hand
    assert m.nu == 21
    for joint, limits in S.G20_LIMITS.items():
        a = m.actuator(f"{joint}_pos")
        assert m.joint(a.trnid[0]).name == joint
        np.testing.assert_allclose(a.ctrlrange, limits)
        assert a.gainprm[0] == S.G20_ACTUATOR["kp"]
        np.testing.assert_allclose(a.biasprm[:3], [0, -S.G20_ACTUATOR["kp"], -S.G20_ACTUATOR["kv"]])
        np.testing.assert_allclose(a.forcerange, S.G20_ACTUATOR["forcerange"])
        assert a.forcelimited[0] == 1
    assert m.opt.timestep == S.G20_OPTION["timestep"]
    np.testing.assert_allclose(m.opt.gravity, S.G20_OPTION["gravity"])
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    np.testing.assert_allclose(m.dof_damping, S.G20_OPTION["damping"])
    np.testing.assert_allclose(m.dof_armature, S.G20_OPTION["armature"])


def test_g20_collision_set_classes_and_excludes(hand):
    _, m = hand
    colliding = {m.body(m.geom_bodyid[g]).name for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g]}
    assert colliding == S.G20_COLLISION_BODIES
    for g in range(m.ngeom):
        if m.geom_contype[g] or m.geom_conaffinity[g]:
            assert m.geom_type[g] in (int(mujoco.mjtGeom.mjGEOM_CAPSULE), int(mujoco.mjtGeom.mjGEOM_BOX))
            assert m.geom_margin[g] == S.G20_COLLISION["margin"]
            np.testing.assert_allclose(m.geom_friction[g], S.G20_COLLISION["friction"])
            np.testing.assert_allclose(m.geom_solref[g], S.G20_COLLISION["solref"])
            np.testing.assert_allclose(m.geom_solimp[g][:3], S.G20_COLLISION["solimp"])
        else:  # visual class
            assert m.geom_group[g] == 2 and m.geom_conaffinity[g] == 0
    # the exclude list, spelled out from the spec's words
    thumb = [
        "thumb_metacarpals_base1",
        "thumb_metacarpals_base2",
        "thumb_metacarpals",
        "thumb_proximal",
        "thumb_distal",
    ]
    expected = {frozenset(("hand_base", b)) for b in thumb[:3]}
    expected |= {frozenset(("hand_base", f"{f}_{s}")) for f in FINGERS for s in ("metacarpals", "proximal")}
    expected |= {frozenset(p) for p in itertools.pairwise(thumb)}
    expected |= {frozenset((thumb[i], thumb[i + 2])) for i in range(3)}
    for f in FINGERS:
        chain = [f"{f}_metacarpals", f"{f}_proximal", f"{f}_middle", f"{f}_distal"]
        expected |= {frozenset(p) for p in itertools.pairwise(chain)}
    excluded = {frozenset((m.body(int(sig >> 16)).name, m.body(int(sig & 0xFFFF)).name)) for sig in m.exclude_signature}
    assert excluded == expected


def _sdk_pose(cmd) -> dict[str, float]:
    """Spec formula, written out independently of dexwheel.control: SDK 0..255 -> radians."""
    channel_joint = ["thumb_cmc_pitch", *(f"{f}_mcp_pitch" for f in FINGERS), "thumb_cmc_roll",
                     *(f"{f}_mcp_roll" for f in FINGERS), "thumb_cmc_yaw", None, None, None, None,
                     "thumb_mcp", *(f"{f}_pip" for f in FINGERS)]  # fmt: skip
    lo = [0, 0, 0, 0, 0, 0.0, -0.23, -0.23, -0.23, -0.23, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    hi = [0.84, 1.22, 1.22, 1.22, 1.22, 1.47, 0.23, 0.23, 0.23, 0.23, 1.57, 0, 0, 0, 0, 1.29, 1.55, 1.55, 1.55, 1.55]
    direction = [-1, -1, -1, -1, -1, -1, 1, 1, 1, 1, -1, 0, 0, 0, 0, -1, -1, -1, -1, -1]
    q = {}
    for ch, joint in enumerate(channel_joint):
        if joint is None:
            continue
        t = cmd[ch] / 255
        v = hi[ch] - (hi[ch] - lo[ch]) * t if direction[ch] < 0 else lo[ch] + (hi[ch] - lo[ch]) * t
        v = v / 1.02 if ch == 15 else v / 0.89 if ch >= 16 else v
        q[joint] = float(np.clip(v, *S.G20_LIMITS[joint]))
    q["thumb_ip"] = q["thumb_mcp"] * 1.02
    q.update({f"{f}_dip": q[f"{f}_pip"] * 0.89 for f in FINGERS})
    return q


def _posed(m, q):
    d = mujoco.MjData(m)
    for joint, v in q.items():
        d.qpos[m.joint(joint).qposadr[0]] = v
    mujoco.mj_forward(m, d)
    return d


@pytest.mark.parametrize("cmd", [S.G20_OPEN_CMD, S.G20_HALF_FIST_CMD], ids=["open", "half_fist"])
def test_g20_open_and_half_fist_do_not_penetrate(hand, cmd):
    _, m = hand
    d = _posed(m, _sdk_pose(cmd))
    deepest = min((c[2] for c in contacts(m, d)), default=np.inf)
    assert deepest >= -5e-4


def test_g20_full_fist_touches_the_palm(hand):
    _, m = hand
    full_fist = [0, 0, 0, 0, 0, 40, 193, 148, 105, 42, 0, 255, 255, 255, 255, 0, 0, 0, 0, 0]
    d = _posed(m, _sdk_pose(full_fist))
    tips = {"thumb_distal", *(f"{f}_distal" for f in FINGERS)}
    assert any({b1, b2} & tips and "hand_base" in (b1, b2) for b1, b2, _ in contacts(m, d))


def test_right_hand_is_the_mirror_image_of_the_left():
    left, right = compile_model(get_robot("g20_left")), compile_model(get_robot("g20_right"))
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = rng.uniform(left.jnt_range[:, 0], left.jnt_range[:, 1])
        dl, dr = mujoco.MjData(left), mujoco.MjData(right)
        dl.qpos[:] = dr.qpos[:] = q
        mujoco.mj_kinematics(left, dl)
        mujoco.mj_kinematics(right, dr)
        np.testing.assert_allclose(dr.xpos, dl.xpos * [1, -1, 1], atol=1e-12)


# -- Solenopsis and the legacy M20 ---------------------------------------------------------------
@pytest.fixture(scope="module")
def solenopsis():
    return compile_model(get_robot("solenopsis"), ground=True)


def test_solenopsis_joints_follow_the_spec(solenopsis):
    m = solenopsis
    assert m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert [m.joint(i).name for i in range(1, m.njnt)] == S.SOLENOPSIS_JOINT_ORDER
    for leg, hip in S.SOLENOPSIS_HIP.items():
        knee, wheel = m.joint(f"{leg}_knee_joint"), m.joint(f"{leg}_wheel_joint")
        np.testing.assert_allclose(m.body(f"{leg}_knee").pos, hip, atol=0)
        np.testing.assert_allclose(m.body(f"{leg}_wheel").pos, S.SOLENOPSIS_WHEEL_ORIGIN, atol=0)
        np.testing.assert_allclose(knee.axis, S.WHEEL_LEG_AXIS)
        np.testing.assert_allclose(wheel.axis, S.WHEEL_LEG_AXIS)
        np.testing.assert_allclose(knee.range, S.KNEE_RANGE)
        assert knee.limited[0] == 1 and wheel.limited[0] == 0
        np.testing.assert_allclose(m.actuator(f"{leg}_knee_joint_pos").forcerange, (-S.KNEE_EFFORT, S.KNEE_EFFORT))
        np.testing.assert_allclose(m.actuator(f"{leg}_wheel_joint_vel").forcerange, (-S.WHEEL_EFFORT, S.WHEEL_EFFORT))


def test_solenopsis_mass_properties_equal_the_spec(solenopsis):
    m = solenopsis
    assert abs(m.body_mass.sum() - S.SOLENOPSIS_TOTAL_MASS) < 1e-3
    assert m.body("base_link").mass[0] == pytest.approx(17.401, abs=1e-12)
    bodies = {"base_link": "base_link"}
    for leg in ("fl", "fr", "hl", "hr"):
        side = "left" if leg[1] == "l" else "right"
        bodies |= {f"{leg}_knee": f"{side}_knee", f"{leg}_wheel": f"{side}_wheel"}
    for body, key in bodies.items():
        mass, com, inertia = S.SOLENOPSIS_MASS[key]
        assert m.body(body).mass[0] == pytest.approx(mass, abs=1e-12)
        np.testing.assert_allclose(m.body(body).ipos, com, atol=1e-9)
        np.testing.assert_allclose(body_inertia_tensor(m, body), tensor(inertia), atol=1e-9, err_msg=body)


def test_solenopsis_collision_primitives(solenopsis):
    m = solenopsis
    box = m.geom("base_link_col")
    np.testing.assert_allclose(2 * box.size, S.SOLENOPSIS_BASE_BOX)
    np.testing.assert_allclose(2 * m.geom("fl_knee_col").size, S.SOLENOPSIS_KNEE_BOX)
    wheel = m.geom("fl_wheel_col")
    assert wheel.type[0] == mujoco.mjtGeom.mjGEOM_CYLINDER
    np.testing.assert_allclose([wheel.size[0], 2 * wheel.size[1]], S.SOLENOPSIS_WHEEL)
    for g in range(m.ngeom):
        if m.geom_contype[g]:
            assert m.geom_type[g] in {
                int(t) for t in (mujoco.mjtGeom.mjGEOM_BOX, mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_PLANE)
            }


def test_solenopsis_settles_at_the_spec_height_at_q0(solenopsis):
    m = solenopsis
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
    for _ in range(int(2.0 / m.opt.timestep)):
        mujoco.mj_step(m, d)
    assert abs(d.qpos[2] - S.SOLENOPSIS_STANCE_HEIGHT_Q0) <= 0.005
    assert np.linalg.norm(d.qvel[:3]) < 1e-3


def test_m20_legacy_follows_the_legacy_table():
    m = compile_model(get_robot("m20_legacy"))
    assert abs(m.body_mass.sum() - S.M20_TOTAL_MASS) < 1e-3
    assert m.body("base_link").mass[0] == pytest.approx(S.M20_MASS["base_link"], abs=1e-12)
    np.testing.assert_allclose(m.body("base_link").ipos, S.M20_BASE_COM, atol=1e-9)
    np.testing.assert_allclose(body_inertia_tensor(m, "base_link"), tensor(S.M20_BASE_INERTIA), atol=1e-9)
    assert [m.joint(i).name for i in range(1, m.njnt)] == S.SOLENOPSIS_JOINT_ORDER
    for leg in ("fl", "fr", "hl", "hr"):
        sx, sy = (1 if leg[0] == "f" else -1), (1 if leg[1] == "l" else -1)
        hx, hy, hz = S.M20_HIP
        np.testing.assert_allclose(m.body(f"{leg}_knee").pos, (sx * hx, sy * hy, hz))
        ax, ay, az = S.M20_KNEE_TO_AXLE
        np.testing.assert_allclose(m.body(f"{leg}_wheel").pos, (ax, sy * ay, az))
        assert m.body(f"{leg}_knee").mass[0] == pytest.approx(S.M20_MASS["knee"])
        np.testing.assert_allclose(body_inertia_tensor(m, f"{leg}_wheel"), tensor(S.M20_WHEEL_INERTIA), atol=1e-9)
    assert np.linalg.norm(m.body("fl_wheel").pos) == pytest.approx(0.237065, abs=1e-6)


# -- startup checks ----------------------------------------------------------------------------
def test_a_model_missing_a_joint_fails_naming_it():
    desc = get_robot("g20_left")
    spec = build_spec(desc)
    spec.delete(spec.actuator("index_pip_pos"))
    spec.delete(spec.joint("index_pip"))
    model = spec.compile()
    with pytest.raises(ModelError, match="index_pip"):
        check_robot_model(model, desc.joint_names, [a.name for a in desc.actuators])


def test_a_model_missing_an_actuator_fails_naming_it():
    desc = get_robot("solenopsis")
    spec = build_spec(desc)
    spec.delete(spec.actuator("hr_wheel_joint_vel"))
    model = spec.compile()
    with pytest.raises(ModelError, match="hr_wheel_joint_vel"):
        check_robot_model(model, desc.joint_names, [a.name for a in desc.actuators])
