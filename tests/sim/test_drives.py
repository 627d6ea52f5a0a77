"""The drives (:mod:`dexwheel.sim.drive`) on small inline models: a palm and one finger whose distal joint
follows its proximal one (``dip = 0.89 x pip``), as the G20's fingers do, and a two-joint wheel-leg arm.

The full robots are not the point here: the drives' contract is (hard-write) slew, project out of a
too-deep contact, write the completed pose, ``qvel = 0``, one ``mj_forward``; (PD) ramped, coupled targets
into force-limited position actuators; (motor frame) affine-PD controls from a frame's gains, then the
physics' control step. All three are one interface, ``step(targets)``.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from dexwheel.control.coupling import MimicCompletion
from dexwheel.sim.drive import Drive
from dexwheel.sim.hand_drive import (
    HardWriteDrive,
    PDDrive,
    hard_write_env,
)
from dexwheel.sim.physics import BatchPhysics, SerialPhysics
from dexwheel.sim.projection import CollisionProjector, add_chain_contact_sensors, add_deepest_contact_sensor
from dexwheel.sim.wheel_leg_drive import MotorFrameDrive, make_pd_actuators

FINGER = """
<mujoco>
  <compiler angle="radian"/>
  <option timestep="0.002" integrator="implicitfast"/>
  <default>
    <joint damping="0.15" armature="0.01"/>
    <position kp="200" kv="8" forcelimited="true" forcerange="-8 8"/>
  </default>
  <worldbody>
    <body name="palm">
      <geom name="palm" type="box" size="0.012 0.03 0.05" pos="0.035 0 0.06"/>
      <body name="proximal" pos="0 0 0.1">
        <joint name="pip" axis="0 1 0" range="0 1.74"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.045" size="0.008"/>
        <body name="distal" pos="0 0 0.045">
          <joint name="dip" axis="0 1 0" range="0 1.55"/>
          <geom type="capsule" fromto="0 0 0 0 0 0.025" size="0.008"/>
        </body>
      </body>
    </body>
  </worldbody>
  <contact><exclude body1="palm" body2="proximal"/><exclude body1="proximal" body2="distal"/></contact>
  <actuator>
    <position name="pip_pos" joint="pip" ctrlrange="0 1.74"/>
    <position name="dip_pos" joint="dip" ctrlrange="0 1.55"/>
  </actuator>
</mujoco>
"""
COUPLING = MimicCompletion(["pip"], ["pip", "dip"], {"dip": ("pip", 0.89)}, {"pip": (0.0, 1.74), "dip": (0.0, 1.55)})
TOL = 5e-4


def finger() -> tuple[mujoco.MjModel, mujoco.MjData]:
    spec = mujoco.MjSpec.from_string(FINGER)
    add_deepest_contact_sensor(spec)
    add_chain_contact_sensors(spec, ("pip",))
    model = spec.compile()
    return model, mujoco.MjData(model)


def deepest(model: mujoco.MjModel, data: mujoco.MjData) -> float:
    return max([-c.dist for c in data.contact[: data.ncon]] + [0.0])


@pytest.mark.parametrize("project", [True, False])
@pytest.mark.slow
def test_hard_write_slews_writes_the_completed_pose_and_projects_out_of_the_palm(project: bool) -> None:
    model, data = finger()
    adr = np.array([model.joint(j).qposadr[0] for j in ("pip", "dip")])
    ctrl = np.array([model.actuator(f"{j}_pos").id for j in ("pip", "dip")])
    projector = CollisionProjector(model, COUPLING, adr, TOL, 12)
    dt, slew = 0.02, 5.0
    drive = HardWriteDrive(model, [data], COUPLING, adr, ctrl, slew_rad_s=slew, dt=dt, projector=projector,
                           project=project)  # fmt: skip
    state, params = drive.state, drive.params
    drive.reset_env(0, np.zeros(2), np.zeros(1), np.zeros(1))
    fist = np.array([1.74])  # the finger curls into the palm long before its limit
    poses = []
    for _ in range(60):
        before = data.qpos[adr[0]]
        hard_write_env(state[0], params[0], fist)
        pip, dip = data.qpos[adr]
        assert abs(pip - before) <= slew * dt + 1e-12  # slew (dip moves 0.89x as far)
        assert dip == 0.89 * pip  # mimic completed exactly
        assert np.all(data.qvel == 0.0) and np.array_equal(data.ctrl[ctrl], data.qpos[adr])
        poses.append(pip)
    assert data.time == pytest.approx(60 * dt)  # one step of length dt each, no mj_step
    if project:
        assert deepest(model, data) <= TOL  # stopped at the palm
        assert 0.2 < poses[-1] < 1.74
        assert poses[-1] == poses[-2]  # resting on the contact boundary
    else:
        assert poses[-1] == 1.74  # through the palm
        assert deepest(model, data) > 10 * TOL


def test_pd_ramps_coupled_targets_into_force_limited_actuators() -> None:
    model, data = finger()
    adr = np.array([model.joint(j).qposadr[0] for j in ("pip", "dip")])
    ctrl = np.array([model.actuator(f"{j}_pos").id for j in ("pip", "dip")])
    nsub, slew = 10, 5.0
    drive = PDDrive(model, [data], COUPLING, adr, ctrl, slew_rad_s=slew, timestep=model.opt.timestep, nsub=nsub)
    drive.set_pose(0, np.zeros(2))
    target, command = drive.q, np.array([[1.0]])
    for _ in range(30):
        previous = target[0, 0]
        drive.step(command)
        rows = drive.control[0]  # (nsub, nu): each physics step's actuator targets
        pip, dip = rows[:, ctrl[0]], rows[:, ctrl[1]]
        assert np.all(np.diff(np.concatenate(([previous], pip))) <= slew * model.opt.timestep + 1e-12)
        np.testing.assert_array_equal(dip, np.minimum(0.89 * pip, 1.55))  # coupled targets
        assert np.all(np.abs(data.actuator_force) <= 8.0)
    assert target[0, 0] == 1.0  # the ramp reached the command
    assert abs(data.qpos[adr[0]] - 1.0) < 0.05 and abs(data.qpos[adr[1]] - 0.89) < 0.05  # and the finger follows


def _hard_write_drive(n: int, threads: int = 1) -> HardWriteDrive:
    model, _ = finger()
    adr = np.array([model.joint(j).qposadr[0] for j in ("pip", "dip")])
    ctrl = np.array([model.actuator(f"{j}_pos").id for j in ("pip", "dip")])
    projector = CollisionProjector(model, COUPLING, adr, TOL, 12)
    datas = [mujoco.MjData(model) for _ in range(n)]
    drive = HardWriteDrive(model, datas, COUPLING, adr, ctrl, slew_rad_s=5.0, dt=0.02, projector=projector,
                           project=True, num_threads=threads)  # fmt: skip
    for i in range(n):
        drive.reset_env(i, np.zeros(2), np.zeros(1), np.zeros(1))
    return drive


def test_hard_write_step_is_the_per_env_kernel_for_every_env() -> None:
    """``step(targets)`` (the Drive interface) gives each env exactly what :func:`hard_write_env` gives it."""
    drive, threaded, reference = _hard_write_drive(3), _hard_write_drive(3, threads=2), _hard_write_drive(3)
    targets = np.array([[0.3], [1.74], [1.0]])
    for _ in range(20):
        before = drive.qpos.copy()
        drive.step(targets)
        threaded.step(targets)
        for i in range(3):
            hard_write_env(reference.state[i], reference.params[0], targets[i])
        np.testing.assert_array_equal(drive.qvel, (drive.qpos - before) * (1.0 / 0.02))  # the motion over dt
    for i in range(3):
        np.testing.assert_array_equal(drive.datas[i].qpos, reference.datas[i].qpos)
        np.testing.assert_array_equal(threaded.datas[i].qpos, reference.datas[i].qpos)  # on worker threads too
    np.testing.assert_array_equal(drive.qpos, drive.state["full"])
    assert drive.q[0, 0] == 0.3 and 0.2 < drive.q[1, 0] < 1.74  # reached / stopped at the palm


ARM = """
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <body name="knee">
      <joint name="knee_joint" axis="0 -1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" mass="1"/>
      <body name="wheel" pos="0 0 -0.3">
        <joint name="wheel_joint" axis="0 -1 0"/>
        <geom type="cylinder" size="0.1 0.02" euler="90 0 0" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="knee_act" joint="knee_joint" kp="80" kv="2" forcelimited="true" forcerange="-30 30"/>
    <velocity name="wheel_act" joint="wheel_joint" kv="0.6"/>
  </actuator>
</mujoco>
"""
JOINTS = ("knee_joint", "wheel_joint")


def _arm() -> mujoco.MjModel:
    spec = mujoco.MjSpec.from_string(ARM)
    make_pd_actuators(spec)
    return spec.compile()


def _frame(n: int) -> np.ndarray:
    """``(5, N, 2)`` rows q*, kp, kd, v*, tau: the knee held at 0.4 rad, the wheel at 3 rad/s."""
    block = np.zeros((5, n, 2), dtype=np.float32)
    block[0, :, 0], block[1, :, 0], block[2, :, 0] = 0.4, 80.0, 2.0
    block[2, :, 1], block[3, :, 1] = 0.6, 3.0
    return block


@pytest.mark.parametrize("backend", ["serial", "batch"])
def test_motor_frame_step_is_the_pd_controls_then_the_physics_control_step(backend: str) -> None:
    model, n, decimation = _arm(), 2, 4
    physics = (SerialPhysics if backend == "serial" else BatchPhysics)([model] * n, decimation)
    drive = MotorFrameDrive([model] * n, JOINTS, physics)
    for i in range(n):
        physics.reset_env(i, np.zeros(model.nq), np.zeros(model.nv))
    reference = mujoco.MjData(model)  # the same law by hand: ctrl = kp q* + kd v* + tau, then mj_step x decimation
    block = _frame(n)
    for _ in range(50):
        drive.step(block)
        reference.ctrl[:] = (80.0 * np.float64(np.float32(0.4)), np.float64(np.float32(0.6)) * 3.0)
        for _ in range(decimation):
            mujoco.mj_step(model, reference)
    assert model.actuator_biasprm[0, 1:3].tolist() == [-80.0, -2.0]  # the frame's gains, written once
    for i in range(n):
        np.testing.assert_array_equal(physics.qpos[i], reference.qpos)
        assert drive.sync_data(i).time == pytest.approx(50 * decimation * model.opt.timestep)
    assert abs(reference.qpos[0] - 0.4) < 0.02 and abs(reference.qvel[1] - 3.0) < 0.1  # the law does its job


def test_every_drive_is_one_interface() -> None:
    model, data = finger()
    adr = np.array([model.joint(j).qposadr[0] for j in ("pip", "dip")])
    ctrl = np.array([model.actuator(f"{j}_pos").id for j in ("pip", "dip")])
    pd = PDDrive(model, [data], COUPLING, adr, ctrl, slew_rad_s=5.0, timestep=model.opt.timestep, nsub=10)
    arm = _arm()
    frame = MotorFrameDrive([arm], JOINTS, SerialPhysics([arm], 4))
    for drive in (_hard_write_drive(1), pd, frame):
        assert isinstance(drive, Drive) and drive.num_envs == 1
        drive.step(_frame(1) if drive is frame else np.array([[0.5]]))
        assert drive.sync_data(0).time > 0.0
