"""A PD joint as one motor: ``clip(kp (q* - q) - kd qdot, -effort, effort)``, as the MuJoCo models have it.

Isaac Lab gives an implicit actuator with both gains two MuJoCo actuators (a kp position actuator and a
kd velocity actuator) and clamps their sum at the joint (``jnt_actfrcrange``). The clamped force is the
same, but MuJoCo's implicit integrator keeps treating the kd part implicitly while the sum saturates
(only an actuator's own ``forcerange`` tells the derivative that the force is clamped). A saturated joint
then accelerates as if its inertia grew by ``dt kd`` (G20: 0.002 s x 8 over 0.01 kg m^2 armature, 2.6x
slower; up to 0.3 rad behind MuJoCo during a preset move). A real motor driver saturates its whole
command: once at its limit it delivers that torque and no velocity-dependent part. That is what the
MuJoCo models do (one position actuator with kv and a force range), so this articulation does it too:
each such joint gets Newton's single position actuator (gain kp, bias -kp q - kd qdot) and that
actuator's force range is set to the joint's effort limit once the solver exists.
"""

from __future__ import annotations

import numpy as np
from isaaclab.sim import SimulationContext
from isaaclab.utils.string import resolve_matching_names
from isaaclab_newton.assets import Articulation
from isaaclab_newton.assets.articulation.articulation import _resolve_articulation_root_prim_path_expr
from isaaclab_newton.physics import NewtonBuilderCfg, NewtonManager
from newton import JointTargetMode


class MotorPDArticulation(Articulation):
    """Newton articulation whose two-gain implicit actuators are one force-clamped motor each."""

    _motor_dofs: frozenset[int] = frozenset()  # Newton dofs turned into motors (every env's copy)
    _clamped_solver = None  # the solver whose actuators were last clamped

    def _configure_joint_target_modes(self, event) -> None:
        super()._configure_joint_target_modes(event)
        sim = SimulationContext.instance()
        builder = sim.get_or_create_backend(NewtonBuilderCfg(physics_cfg=sim.cfg.physics))
        ids, _ = resolve_matching_names(_resolve_articulation_root_prim_path_expr(self.cfg),
                                        builder.articulation_label, raise_when_no_match=False)  # fmt: skip
        ndof = len(builder.joint_target_mode)
        motors = set()
        for a in ids:
            for j in range(builder.articulation_start[a], builder.articulation_end[a]):
                end = builder.joint_qd_start[j + 1] if j + 1 < len(builder.joint_qd_start) else ndof
                for dof in range(builder.joint_qd_start[j], end):
                    if builder.joint_target_mode[dof] == int(JointTargetMode.POSITION_VELOCITY):
                        builder.joint_target_mode[dof] = int(JointTargetMode.POSITION)
                        motors.add(dof)
        self._motor_dofs = frozenset(motors)
        self._clamped_solver = None

    def write_data_to_sim(self) -> None:
        # the solver is built after the assets initialise (and rebuilt on a hard reset): clamp it once per solver
        if NewtonManager._solver is not self._clamped_solver:
            _clamp_position_actuators(NewtonManager._solver, self._motor_dofs)
            self._clamped_solver = NewtonManager._solver
        super().write_data_to_sim()


def _clamp_position_actuators(solver, dofs: frozenset[int]) -> None:
    """Give the joint-target position actuators of ``dofs`` their joint's effort limit as force range."""
    to_dof = solver.mjc_actuator_to_newton_idx.numpy()
    source = solver.mjc_actuator_ctrl_source.numpy()
    effort = solver.model.joint_effort_limit.numpy()
    acts = [a for a, d in enumerate(to_dof) if source[a] == int(solver.CtrlSource.JOINT_TARGET) and d in dofs]
    if len(acts) == 0:
        return
    m = solver.mjw_model
    limited, ranges = m.actuator_forcelimited.numpy(), m.actuator_forcerange.numpy()
    for a in acts:
        e = float(effort[to_dof[a]])
        limited[a] = True
        ranges[:, a] = (-e, e)
        solver.mj_model.actuator_forcelimited[a] = True  # the CPU copy too (save_to_mjcf, debugging)
        solver.mj_model.actuator_forcerange[a] = (-e, e)
    m.actuator_forcelimited.assign(limited)
    m.actuator_forcerange.assign(np.ascontiguousarray(ranges))
