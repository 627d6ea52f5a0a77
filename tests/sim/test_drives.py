"""The hand drives and collision projection on a small inline model: a palm and one finger whose distal
joint follows its proximal one (``dip = 0.89 x pip``), as the G20's fingers do.

The full robot is not the point here: the drives' contract is (hard-write) slew, project out of a
too-deep contact, write the completed pose, ``qvel = 0``, one ``mj_forward``; (PD) ramped, coupled targets
into force-limited position actuators.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from dexwheel.control.coupling import MimicCompletion
from dexwheel.sim.hand_drive import (
    HardWriteDrive,
    PDDrive,
    hard_write_dtype,
    hard_write_env,
    hard_write_params_dtype,
    hard_write_sizes,
)
from dexwheel.sim.projection import CollisionProjector, add_chain_contact_sensors, add_deepest_contact_sensor

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
def test_hard_write_slews_writes_the_completed_pose_and_projects_out_of_the_palm(project: bool) -> None:
    model, data = finger()
    adr = np.array([model.joint(j).qposadr[0] for j in ("pip", "dip")])
    ctrl = np.array([model.actuator(f"{j}_pos").id for j in ("pip", "dip")])
    projector = CollisionProjector(model, COUPLING, adr, TOL, 12)
    state = np.zeros(1, dtype=hard_write_dtype(1, 2))
    params = np.zeros(1, dtype=hard_write_params_dtype(*hard_write_sizes(COUPLING, projector)))
    dt, slew = 0.02, 5.0
    drive = HardWriteDrive(model, [data], COUPLING, adr, ctrl, slew_rad_s=slew, dt=dt, projector=projector,
                           project=project, state=state, params=params)  # fmt: skip
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
    target, command = np.zeros((1, 1)), np.array([[1.0]])
    for _ in range(30):
        previous = target[0, 0]
        drive.step(target, command)
        rows = drive.control[0]  # (nsub, nu): each physics step's actuator targets
        pip, dip = rows[:, ctrl[0]], rows[:, ctrl[1]]
        assert np.all(np.diff(np.concatenate(([previous], pip))) <= slew * model.opt.timestep + 1e-12)
        np.testing.assert_array_equal(dip, np.minimum(0.89 * pip, 1.55))  # coupled targets
        assert np.all(np.abs(data.actuator_force) <= 8.0)
    assert target[0, 0] == 1.0  # the ramp reached the command
    assert abs(data.qpos[adr[0]] - 1.0) < 0.05 and abs(data.qpos[adr[1]] - 0.89) < 0.05  # and the finger follows
