"""Committed assets equal a fresh build; the URDF and the MJCF describe the same robot."""

import mujoco
import numpy as np
import pytest

from dexwheel.atomic import atomic_open, write_atomic
from dexwheel.robots import ROBOTS, get_robot
from dexwheel.robots.assets import ASSETS_DIR, asset_texts
from dexwheel.sim.model_checks import ModelError, load_checked


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_committed_assets_equal_a_fresh_build(robot):
    for rel, text in asset_texts(robot).items():
        path = ASSETS_DIR / rel
        assert path.exists(), f"{path} missing: run python scripts/build_assets.py"
        assert path.read_text() == text, f"{path} differs from a fresh build: run python scripts/build_assets.py"


def _hinge_names(m):
    return [m.joint(i).name for i in range(m.njnt) if m.jnt_type[i] == mujoco.mjtJoint.mjJNT_HINGE]


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_urdf_and_mjcf_give_the_same_kinematics_and_mass(robot):
    desc = get_robot(robot)
    actuators = [a.name for a in desc.actuators]
    mj = load_checked(ASSETS_DIR / robot / f"{robot}.xml", desc.joint_names, actuators)
    ur = mujoco.MjModel.from_xml_path(str(ASSETS_DIR / robot / f"{robot}.urdf"))
    assert _hinge_names(ur) == _hinge_names(mj) == list(desc.joint_names)
    assert ur.body_mass.sum() == pytest.approx(mj.body_mass.sum(), abs=1e-9)
    dm, du = mujoco.MjData(mj), mujoco.MjData(ur)
    rng = np.random.default_rng(7)
    lo = np.array([j.limits[0] if j.limits else -np.pi for j in desc.joints])
    hi = np.array([j.limits[1] if j.limits else np.pi for j in desc.joints])
    free = 7 if desc.floating_base else 0  # the URDF root is fixed at the origin: compare in the base frame
    for _ in range(20):
        q = rng.uniform(lo, hi)
        dm.qpos[:] = 0
        if free:
            dm.qpos[3] = 1.0
        dm.qpos[free:] = q
        du.qpos[:] = q
        mujoco.mj_kinematics(mj, dm)
        mujoco.mj_kinematics(ur, du)
        for b in desc.bodies:
            np.testing.assert_allclose(
                dm.xpos[mj.body(b.name).id], du.xpos[ur.body(b.name).id], atol=1e-6, err_msg=b.name
            )


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path):
    target = tmp_path / "robot.xml"
    write_atomic(target, "<mujoco/>")
    with pytest.raises(KeyboardInterrupt), atomic_open(target) as f:
        f.write(b"<mujoco><half")
        raise KeyboardInterrupt
    assert target.read_text() == "<mujoco/>"
    assert list(tmp_path.iterdir()) == [target]


def test_loading_a_file_without_a_joint_names_it(tmp_path):
    desc = get_robot("solenopsis")
    text = (ASSETS_DIR / "solenopsis" / "solenopsis.xml").read_text()
    broken = tmp_path / "broken.xml"
    broken.write_text(text.replace('"hl_wheel_joint"', '"hl_wheel_renamed"'))
    with pytest.raises(ModelError, match="hl_wheel_joint"):
        load_checked(broken, desc.joint_names, [])


def test_atomic_files_get_ordinary_permissions(tmp_path):
    import os

    write_atomic(tmp_path / "a.txt", "x")
    plain = tmp_path / "b.txt"
    plain.write_text("x")
    assert os.stat(tmp_path / "a.txt").st_mode == os.stat(plain).st_mode
