"""The wheel-leg velocity-tracking task, written once over a leading env dimension.

The single env (:mod:`dexwheel.envs.wheel_leg`) is the N = 1 case on :class:`SerialPhysics`; the native
vector env (:mod:`dexwheel.envs.wheel_leg_vector`) is any N on :class:`BatchPhysics`. Both run this
code, draw env ``i``'s randomness from env ``i``'s own generator, and their physics backends agree bit for
bit, so a vector env reproduces N single envs exactly.

One control step::

    action [-1, 1] -> policy JointTargetBuffer (knees: stance + knee_scale a; wheels: vel = wheel_scale a)
      -> JointCommandComposer (layers: policy, stance, override) -> task-order MotorFrame
      -> JointCommandResolver -> robot-order MotorFrame -> PDDrive (actuator gains, ctrl)
      -> physics x decimation -> sensors -> reward terms, terminations -> commands, pushes -> observation

For N > 1 the composer and the resolver run on layouts whose joint names carry an env prefix
(``env3/fl_knee_joint``), so one ``compose()`` merges every env's layers with precompiled copies. The
wiring is first built and checked with the plain joint names, so a wiring error names the joint.

For N = 1 the per-step arithmetic after the physics (reward terms, terminations, observation, action
mapping, PD sums) runs on Python floats, which is cheaper than numpy calls on one row; for N > 1 it runs
as a few numpy calls over the env axis. Both do the same operations in the same order (products, sums
paired the same way, numpy's ``exp``), so they give the same bits; the vector-env tests compare them.
"""

from __future__ import annotations

import copy
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

try:  # the clip ufunc itself: np.clip's Python wrapper costs more than the clipping of 8 numbers
    from numpy._core.umath import clip as _clip
except ImportError:  # numpy < 2
    from numpy.core.umath import clip as _clip

from dexwheel.control import (
    JointCommandComposer,
    JointCommandLayer,
    JointCommandResolver,
    JointLayout,
    JointTargetBuffer,
)
from dexwheel.envs.wheel_leg_cfg import REWARD_TERMS, WheelLegEnvCfg, joint_group
from dexwheel.robots import get_robot
from dexwheel.robots.wheel_leg import KNEE_JOINTS, LEGS, POLICY_JOINT_ORDER, ROBOT_JOINT_ORDER, WheelLegParams
from dexwheel.sim.model_checks import check_robot_model
from dexwheel.sim.randomization import EpisodeParams, ModelRandomizer
from dexwheel.sim.wheel_leg_drive import PDDrive
from dexwheel.sim.wheel_leg_model import BASE_BODY, NON_WHEEL_BODIES, build_wheel_leg_model
from dexwheel.sim.wheel_leg_physics import BatchPhysics, SerialPhysics, write_initial_state

#: Extra ``info`` keys besides ``reward_<term>``: measured and commanded velocities, absolute tracking
#: errors (what evaluation metrics average), termination causes.
INFO_KEYS = (
    "lin_vel_x",
    "ang_vel_z",
    "command_lin_vel_x",
    "command_ang_vel_z",
    "lin_vel_x_error",
    "ang_vel_z_error",
    "terminated_contact",
    "terminated_tilt",
)
PRIVILEGED_SLICES = {"base_lin_vel": 3, "friction": 1, "base_mass_add": 1, "base_com_offset": 3,
                     "link_mass_scale": 2 * len(LEGS)}  # fmt: skip
_LINKS = tuple(f"{leg}_{part}" for part in ("knee", "wheel") for leg in LEGS)
_SETTLE_S = 1.5
_DROP_M = 0.0005  # start this far above the settled height: a short drop, never a penetration
_NEVER = np.iinfo(np.int64).max // 2  # "no event scheduled" as a control-step number


def _prefixed(names: Sequence[str], n: int, label: str) -> JointLayout:
    if n == 1:
        return JointLayout(names, label)
    return JointLayout([f"env{i}/{j}" for i in range(n) for j in names], label)


def leg_heights(p: WheelLegParams, knees: np.ndarray) -> np.ndarray:
    """Base-origin height above flat ground that puts each leg's wheel on it, per knee angle.

    The axis (0, -1, 0) turns the knee-to-axle vector (ax, ay, az) into z = ax sin q + az cos q.
    """
    ax, _, az = p.knee_to_axle
    return -(p.hip_xyz[2] + ax * np.sin(knees) + az * np.cos(knees)) + p.wheel_radius


@dataclass(frozen=True)
class ObservationLayout:
    """Named column slices of the observation (policy part first, then the optional privileged part)."""

    slices: dict[str, slice]
    policy_dim: int
    dim: int


class WheelLegTask:
    """``num_envs`` copies of the task; ``backend`` "serial" (mj_step) or "batch" (thread pool)."""

    def __init__(self, cfg: WheelLegEnvCfg, num_envs: int = 1, *, backend: str = "serial",
                 num_threads: int | None = None) -> None:  # fmt: skip
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.cfg = cfg
        self.num_envs = n = int(num_envs)
        desc = get_robot(cfg.robot)
        self.params: WheelLegParams = desc.extras["params"]
        self.total_mass = desc.total_mass
        model, self.sensors = build_wheel_leg_model(desc)
        check_robot_model(model, ROBOT_JOINT_ORDER, [a.name for a in desc.actuators], source=f"{cfg.robot} env model")
        self.dt = float(model.opt.timestep * cfg.decimation)
        self.max_episode_steps = max(1, round(cfg.episode_length_s / self.dt))
        self.stance = np.asarray(cfg.stance_pose, dtype=np.float64)

        self._knee_qadr = np.array([model.jnt_qposadr[model.joint(j).id] for j in KNEE_JOINTS])
        self._home = np.zeros(model.nq)
        self._home[3] = 1.0
        self.settled_knees, self.settled_height = self._settle(model)
        self._height_offset = self.settled_height - float(leg_heights(self.params, self.settled_knees).max())

        self.models = [model] if n == 1 else [copy.copy(model) for _ in range(n)]
        self._scratch = mujoco.MjData(model)
        self._build_action_path()
        self.drive = PDDrive(self.models, ROBOT_JOINT_ORDER)
        if backend == "serial":
            self.physics: SerialPhysics | BatchPhysics = SerialPhysics(self.models, cfg.decimation)
        elif backend == "batch":
            self.physics = BatchPhysics(self.models, cfg.decimation, num_threads)
        else:
            raise ValueError(f"backend: {backend!r}; use 'serial' or 'batch'")

        self.randomizer = ModelRandomizer(cfg.domain_rand, model, BASE_BODY, _LINKS, len(ROBOT_JOINT_ORDER),
                                          nominal_friction=float(desc.contact.friction[0]))  # fmt: skip
        self.episode_params: list[EpisodeParams] = [self.randomizer.nominal] * n
        self._build_observation()
        self._build_terms()

        self.rngs: list[np.random.Generator | None] = [None] * n
        self.commands = np.zeros((n, 2))
        # Events as absolute control-step numbers: one integer compare per step until one is due.
        self.t = 0
        self.episode_start = np.zeros(n, dtype=np.int64)
        self.truncate_at = np.full(n, _NEVER, dtype=np.int64)
        self.resample_at = np.full(n, _NEVER, dtype=np.int64)
        self.push_at = np.full(n, _NEVER, dtype=np.int64)
        self._next_resample = self._next_push = _NEVER
        self._truncate0 = _NEVER  # N = 1: truncate_at[0] as a Python int
        self._last_list = [0.0] * self.action_dim  # N = 1: last_action[0] as Python floats
        self.action = np.zeros((n, self.action_dim), dtype=np.float32)
        self.last_action = np.zeros((n, self.action_dim), dtype=np.float32)
        self.obs = np.zeros((n, self.obs_layout.dim), dtype=np.float32)

    # -- construction ---------------------------------------------------------------------------
    def _settle(self, model: mujoco.MjModel) -> tuple[np.ndarray, float]:
        """Knee angles and base height the stance settles to under its own weight (nominal model).

        A commanded A stance splays further under load (Solenopsis: 0.5 -> ~0.6 rad); starting episodes
        there, rather than at the commanded angles, spares every episode the same initial sag.
        """
        cfg = self.cfg
        bias = model.actuator_biasprm.copy()
        for j, name in enumerate(ROBOT_JOINT_ORDER):
            knee = name in KNEE_JOINTS
            model.actuator_biasprm[j, 1] = -cfg.knee_kp if knee else 0.0
            model.actuator_biasprm[j, 2] = -(cfg.knee_kd if knee else cfg.wheel_kd)
        d = mujoco.MjData(model)
        qpos = self._home.copy()
        qpos[self._knee_qadr] = self.stance
        qpos[2] = float(leg_heights(self.params, self.stance).max()) + _DROP_M
        write_initial_state(model, d, qpos, np.zeros(model.nv))
        for j, name in enumerate(ROBOT_JOINT_ORDER):
            d.ctrl[j] = cfg.knee_kp * self.stance[KNEE_JOINTS.index(name)] if name in KNEE_JOINTS else 0.0
        for _ in range(round(_SETTLE_S / model.opt.timestep)):
            mujoco.mj_step(model, d)
        model.actuator_biasprm[:] = bias
        return d.qpos[self._knee_qadr].copy(), float(d.qpos[2])

    def _layer_buffer(self, kind: str, joints: Sequence[str], n: int) -> JointTargetBuffer:
        """A layer's buffer with its fixed values (knee position/gains, wheel damping) for every env."""
        c, cc = self.cfg, self.cfg.composer
        pos, kp, kd = [], [], []
        for j in joints:
            knee = j in KNEE_JOINTS
            pos.append(self.stance[KNEE_JOINTS.index(j)] if knee else 0.0)
            if kind == "override":
                kp.append(cc.override_knee_kp if knee else 0.0)
                kd.append(cc.override_knee_kd if knee else cc.override_wheel_kd)
            else:
                kp.append(c.knee_kp if knee else 0.0)
                kd.append(c.knee_kd if knee else c.wheel_kd)
        return JointTargetBuffer(_prefixed(joints, n, kind), position=np.tile(pos, n), kp=np.tile(kp, n),
                                 kd=np.tile(kd, n))  # fmt: skip

    def _buffers(self, n: int) -> dict[str, JointTargetBuffer]:
        joints = {"policy": self.policy_joints, "stance": self._stance_joints, "override": self._override_joints}
        return {name: self._layer_buffer(name, joints[name], n) for name in self.cfg.composer.layers}

    def _composer(self, n: int, buffers: dict[str, JointTargetBuffer], with_override: bool) -> JointCommandComposer:
        layers = [JointCommandLayer(name, buf.view, override=name == "override")
                  for name, buf in buffers.items() if with_override or name != "override"]  # fmt: skip
        return JointCommandComposer(_prefixed(POLICY_JOINT_ORDER, n, "task"), layers)

    def _build_action_path(self) -> None:
        cc, n = self.cfg.composer, self.num_envs
        self._stance_joints = joint_group(cc.stance_joints, "composer.stance_joints") if "stance" in cc.layers else ()
        self._override_joints = joint_group(cc.override_joints, "composer.override_joints")
        if cc.policy_joints is None:
            self.policy_joints = tuple(j for j in POLICY_JOINT_ORDER if j not in self._stance_joints)
        else:
            self.policy_joints = joint_group(cc.policy_joints, "composer.policy_joints")
        if not self.policy_joints:
            raise ValueError(f"composer: the policy layer holds no joint (layers {cc.layers})")
        self._composer(1, self._buffers(1), True)  # checks the wiring with plain joint names
        self.action_dim = len(self.policy_joints)
        self._nk = sum(j in KNEE_JOINTS for j in self.policy_joints)
        self.buffers = self._buffers(n)
        self._composers: dict[bool, JointCommandComposer | None] = {True: self._composer(n, self.buffers, True)}
        self._composers[False] = None if "override" in cc.layers else self._composers[True]
        self.resolver = JointCommandResolver(_prefixed(ROBOT_JOINT_ORDER, n, "robot"))
        self.override_active = "override" in cc.layers
        self._bind_frames()
        if self.override_active and not cc.override_active:
            self.set_override(False)
        block = self.buffers["policy"].block.reshape(5, n, self.action_dim)
        self._pol_pos = block[0, :, : self._nk]
        self._pol_vel = block[3, :, self._nk :]
        a = self.cfg.actions
        nw = self.action_dim - self._nk
        self._act_scale = np.array([a.knee_scale] * self._nk + [a.wheel_velocity_scale] * nw)
        self._act_offset = np.array([self.stance[KNEE_JOINTS.index(j)] for j in self.policy_joints[: self._nk]])
        self._act_scale_list, self._act_offset_list = self._act_scale.tolist(), self._act_offset.tolist()
        self._act_tmp = np.zeros((n, self.action_dim))

    def _bind_frames(self) -> None:
        composer = self._composers[self.override_active]
        assert composer is not None
        self.composer = composer
        out = self.resolver.bind(composer.output_layout)
        self._robot_block = out.block.reshape(5, self.num_envs, len(ROBOT_JOINT_ORDER))

    def set_override(self, active: bool) -> None:
        """Switch the override layer on or off (it must be among the configured layers).

        Both composers read the same layer buffers, so switching keeps every target; switching off
        fails, naming the joints, when the override is the only layer covering some joint.
        """
        if "override" not in self.cfg.composer.layers:
            raise ValueError(f"composer: no 'override' layer configured (layers {self.cfg.composer.layers})")
        if not active and self._composers[False] is None:
            self._composer(1, self._buffers(1), False)  # names the uncovered joints
            self._composers[False] = self._composer(self.num_envs, self.buffers, False)
        self.override_active = bool(active)
        self._bind_frames()

    def _build_observation(self) -> None:
        s, o = self.sensors, self.cfg.observations
        k = self.action_dim
        sizes = [("base_ang_vel", 3), ("projected_gravity", 3), ("velocity_commands", 2),
                 ("joint_pos_rel", len(KNEE_JOINTS)), ("joint_vel_rel", len(POLICY_JOINT_ORDER)), ("last_action", k)]  # fmt: skip
        if o.privileged:
            sizes += list(PRIVILEGED_SLICES.items())
        slices, start = {}, 0
        for name, size in sizes:
            slices[name] = slice(start, start + size)
            start += size
        policy_dim = slices["last_action"].stop
        self.obs_layout = ObservationLayout(slices, policy_dim, start)
        # sensor-fed columns: obs = sensordata[idx] * scale + offset, staged in float64
        rng = np.arange
        parts = [(rng(s.base_ang_vel.start, s.base_ang_vel.stop), o.ang_vel_scale, 0.0, slices["base_ang_vel"]),
                 (rng(s.world_z_in_base.start, s.world_z_in_base.stop), -1.0, 0.0, slices["projected_gravity"]),
                 (rng(s.knee_pos.start, s.knee_pos.stop), 1.0, -self.stance, slices["joint_pos_rel"]),
                 (rng(s.joint_vel.start, s.joint_vel.stop), o.joint_vel_scale, 0.0, slices["joint_vel_rel"])]  # fmt: skip
        if o.privileged:
            parts.append((rng(s.base_lin_vel.start, s.base_lin_vel.stop), 1.0, 0.0, slices["base_lin_vel"]))
        self._obs_src = np.concatenate([p[0] for p in parts])
        self._obs_scale = np.concatenate([np.full(len(p[0]), p[1]) for p in parts])
        self._obs_offset = np.concatenate([np.broadcast_to(p[2], len(p[0])) for p in parts])
        self._obs_stage = np.zeros((self.num_envs, len(self._obs_src)))
        # contiguous destination runs of the staged columns: a few slice copies instead of a scatter
        self._obs_runs: list[tuple[slice, slice]] = []
        pos = 0
        for p in parts:
            m = len(p[0])
            if self._obs_runs and self._obs_runs[-1][1].stop == p[3].start:
                src, dst = self._obs_runs.pop()
                self._obs_runs.append((slice(src.start, pos + m), slice(dst.start, p[3].stop)))
            else:
                self._obs_runs.append((slice(pos, pos + m), p[3]))
            pos += m
        self._priv_static = np.zeros((self.num_envs, 13))
        self._obs_spec = list(zip(self._obs_src.tolist(), self._obs_scale.tolist(), self._obs_offset.tolist(),
                                  strict=True))  # fmt: skip
        self._obs_split = 6  # base_ang_vel, projected_gravity | velocity_commands | joint_pos_rel, joint_vel_rel
        self._obs_split2 = 6 + len(KNEE_JOINTS) + len(POLICY_JOINT_ORDER)

    def _build_terms(self) -> None:
        s, r, t = self.sensors, self.cfg.rewards, self.cfg.terminations
        dt = self.dt if r.scale_by_step_dt else 1.0
        self.reward_coef = np.array([float(getattr(r, name)) * dt for name in REWARD_TERMS])
        self._coef_list = self.reward_coef.tolist()
        self._neg_inv_var = np.array([-1.0 / (r.lin_vel_std * r.lin_vel_std), -1.0 / (r.ang_vel_std * r.ang_vel_std)])
        self._niv = self._neg_inv_var.tolist()
        contact = s.floor_contact.start
        undesired = [contact + NON_WHEEL_BODIES.index(b) for b in r.undesired_contact_bodies]
        terminal = [contact + NON_WHEEL_BODIES.index(b) for b in t.contact_bodies]
        self._cos_tilt = math.cos(t.max_tilt_rad)
        frc = list(range(s.actuator_force.start, s.actuator_force.stop))
        v0, g0, z0 = s.base_lin_vel.start, s.base_ang_vel.start, s.world_z_in_base.start
        # sensor values the terms read, grouped so every group is one slice:
        # tracked (vx, wz) | squared (vz, wx, wy, gx, gy, torques) | undesired contacts | terminal contacts | zz
        idx = [v0, g0 + 2, v0 + 2, g0, g0 + 1, z0, z0 + 1, *frc, *undesired, *terminal, z0 + 2]
        self._term_idx = np.array(idx, dtype=np.intp)
        self._term_get = operator.itemgetter(*idx)
        sq_end = 7 + len(frc)
        self._g_sq = slice(2, sq_end)
        self._g_und = slice(sq_end, sq_end + len(undesired))
        self._g_term = slice(sq_end + len(undesired), sq_end + len(undesired) + len(terminal))
        n = self.num_envs
        self._terms_buf = np.zeros((n, len(REWARD_TERMS)))
        self._err_buf = np.zeros((n, 2))
        self._act_diff = np.zeros((n, self.action_dim))
        self.info_keys = tuple(f"reward_{name}" for name in REWARD_TERMS) + INFO_KEYS

    # -- per step -------------------------------------------------------------------------------
    def apply_action(self, actions: np.ndarray) -> list[float] | None:
        """Map ``(N, action_dim)`` actions into the policy layer (clipped to [-1, 1] unless disabled).

        Knee position ``stance + knee_scale a`` and wheel velocity ``wheel_scale a`` are computed in
        float64 from the float32 action and rounded once into the float32 buffer, on both paths.
        Returns the action as a list for N = 1 (reused by the reward), else None.
        """
        a = self.action
        if self.cfg.actions.clip:
            _clip(actions, -1.0, 1.0, out=a, casting="unsafe")
        else:
            np.copyto(a, actions, casting="unsafe")
        nk = self._nk
        if self.num_envs == 1:
            al = a[0].tolist()
            k, o = self._act_scale_list, self._act_offset_list
            self._pol_pos[0] = [al[j] * k[j] + o[j] for j in range(nk)]
            self._pol_vel[0] = [al[j] * k[j] for j in range(nk, len(al))]
            return al
        tmp = self._act_tmp
        np.multiply(a, self._act_scale, out=tmp)
        np.add(tmp[:, :nk], self._act_offset, out=self._pol_pos)
        self._pol_vel[...] = tmp[:, nk:]
        return None

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, Any, Any, Any, tuple]:
        """One control step for every env: ``(obs, reward, terminated, truncated, info values)``.

        ``reward``, ``terminated``, ``truncated`` and the info values (in :attr:`info_keys` order) are
        Python scalars for N = 1 and ``(N,)`` arrays otherwise; ``obs`` is the task's own buffer (copy it
        to keep it). No env is reset here.
        """
        act = self.apply_action(actions)
        self.composer.compose()
        self.resolver.resolve_into(self.composer.frame)
        self.drive.apply(self._robot_block, out=self.physics.ctrl)
        self.physics.step()
        if act is not None:  # N = 1: Python floats
            row = self.physics.sensordata[0].tolist()
            reward, terminated, values = self._terms_scalar(row, act, self._last_list)
            self._last_list = act
        else:
            reward, terminated, values = self._terms_batched()
        self.action, self.last_action = self.last_action, self.action  # the action just applied is "last"
        self.t += 1
        t = self.t
        truncated = t >= self._truncate0 if act is not None else self.truncate_at <= t
        if t >= self._next_resample:
            for i in np.flatnonzero(self.resample_at <= t).tolist():
                self._resample_command(i)
        if t >= self._next_push:
            for i in np.flatnonzero(self.push_at <= t).tolist():
                self._push(i)
        if act is not None:
            self._obs_scalar(row, act)
        else:
            self.compute_obs()
        return self.obs, reward, terminated, truncated, values

    def _terms_batched(self) -> tuple[np.ndarray, np.ndarray, tuple]:
        """Reward, termination and info values of all envs: ``(N,)`` arrays, a few numpy calls.

        :meth:`_terms_scalar` is the same arithmetic on Python floats for N = 1: the same products, the
        same pairing in every sum (:func:`_halving_sum`; the reward left to right), numpy's ``exp``, exact
        integer contact counts; hence the same bits (the vector-env tests compare them).
        """
        v = self.physics.sensordata[:, self._term_idx]  # a new array: its columns can be returned
        terms, err = self._terms_buf, self._err_buf
        np.subtract(self.commands, v[:, :2], out=err)
        abs_err = np.abs(err)
        np.multiply(err, err, out=err)
        np.multiply(err, self._neg_inv_var, out=err)
        np.exp(err, out=terms[:, :2])
        q = v[:, self._g_sq]
        np.multiply(q, q, out=q)
        terms[:, 2] = q[:, 0]
        np.add(q[:, 1], q[:, 2], out=terms[:, 3])
        np.add(q[:, 3], q[:, 4], out=terms[:, 4])
        terms[:, 5] = _halving_sum_2d(q[:, 5:])
        d = self._act_diff
        np.subtract(self.action, self.last_action, out=d, dtype=np.float64)
        np.multiply(d, d, out=d)
        terms[:, 6] = _halving_sum_2d(d)
        terms[:, 7] = np.count_nonzero(v[:, self._g_und] > 0.0, axis=1)  # an exact integer count
        weighted = terms * self.reward_coef
        reward = weighted[:, 0] + weighted[:, 1]  # left to right, so sum(info terms) == reward exactly
        for k in range(2, weighted.shape[1]):
            reward += weighted[:, k]
        contact = np.logical_or.reduce(v[:, self._g_term] > 0.0, axis=1)
        tilt = v[:, -1] < self._cos_tilt
        cmd = self.commands.copy()
        values = (*weighted.T, v[:, 0], v[:, 1], cmd[:, 0], cmd[:, 1], abs_err[:, 0], abs_err[:, 1], contact, tilt)
        return reward, contact | tilt, values

    def _terms_scalar(self, row: list[float], act: list[float], last: list[float]) -> tuple[float, bool, tuple]:
        """:meth:`_terms_batched` for N = 1 on Python floats (see there)."""
        v = self._term_get(row)
        cvx, cwz = self.commands[0].tolist()
        vx, wz = v[0], v[1]
        ex, ez = cvx - vx, cwz - wz
        niv = self._niv
        # numpy's exp, as on the batched path (libm's math.exp can differ in the last bit)
        tracking = np.exp([ex * ex * niv[0], ez * ez * niv[1]]).tolist()
        q = [x * x for x in v[self._g_sq]]
        d = list(map(operator.sub, act, last))
        terms = (
            tracking[0],
            tracking[1],
            q[0],
            q[1] + q[2],
            q[3] + q[4],
            _halving_sum(q[5:]),
            _halving_sum([x * x for x in d]),
            float(len([x for x in v[self._g_und] if x > 0.0])),
        )
        weighted = [c * x for c, x in zip(self._coef_list, terms, strict=True)]
        reward = weighted[0] + weighted[1]
        for x in weighted[2:]:
            reward += x
        contact = any(x > 0.0 for x in v[self._g_term])
        tilt = v[-1] < self._cos_tilt
        return reward, contact or tilt, (*weighted, vx, wz, cvx, cwz, abs(ex), abs(ez), contact, tilt)

    def compute_obs(self) -> np.ndarray:
        """Fill ``self.obs`` from the current sensors, commands and last action (all envs)."""
        st = self._obs_stage
        np.take(self.physics.sensordata, self._obs_src, axis=1, out=st)
        st *= self._obs_scale
        st += self._obs_offset
        obs, sl = self.obs, self.obs_layout.slices
        for src, dst in self._obs_runs:
            obs[:, dst] = st[:, src]
        obs[:, sl["velocity_commands"]] = self.commands
        obs[:, sl["last_action"]] = self.last_action
        if self.cfg.observations.privileged:
            obs[:, sl["friction"].start :] = self._priv_static
        return obs

    def _obs_scalar(self, row: list[float], act: list[float]) -> None:
        """:meth:`compute_obs` for N = 1 on Python floats (same products and sums, fewer numpy calls)."""
        vals = [row[i] * k + o for i, k, o in self._obs_spec]
        n1 = self._obs_split
        out = vals[:n1] + self.commands[0].tolist() + vals[n1 : self._obs_split2] + act
        if self.cfg.observations.privileged:
            out += vals[self._obs_split2 :] + self._priv_static[0].tolist()
        self.obs[0] = out

    # -- resets and events ----------------------------------------------------------------------
    def reset_env(self, i: int) -> None:
        """Start a new episode in env ``i`` with its generator ``self.rngs[i]`` (fixed draw order)."""
        rng = self.rngs[i]
        if rng is None:
            raise RuntimeError(f"env {i}: no random generator; seed it before resetting")
        rz = self.randomizer
        if rz.active:
            p = rz.draw(rng)
            rz.apply(self.models[i], self._scratch, p)
            self.drive.set_gain_scales(i, p.kp_scale, p.kd_scale)
            self.episode_params[i] = p
            self._priv_static[i] = [p.friction - rz.nominal_friction, p.base_mass_add, *p.base_com_offset,
                                    *(p.link_mass_scale - 1.0)]  # fmt: skip
        noise = self.cfg.reset_noise_scale * (2.0 * rng.random(len(KNEE_JOINTS) + 6) - 1.0)
        knees = self.settled_knees + noise[: len(KNEE_JOINTS)]
        qpos = self._home.copy()
        qpos[self._knee_qadr] = knees
        qpos[2] = float(leg_heights(self.params, knees).max()) + self._height_offset + _DROP_M
        qvel = np.zeros(self.models[i].nv)
        qvel[:6] = noise[len(KNEE_JOINTS) :]
        self.physics.reset_env(i, qpos, qvel)
        self.episode_start[i] = self.t
        self.truncate_at[i] = self.t + self.max_episode_steps
        self._truncate0 = int(self.truncate_at[0])
        self._resample_command(i)
        push = rz.push_interval_steps(rng, self.dt)
        self.push_at[i] = _NEVER if push < 0 else self.t + push
        self._next_push = int(self.push_at.min())
        self.action[i] = 0.0
        self.last_action[i] = 0.0
        if i == 0:
            self._last_list = [0.0] * self.action_dim

    def _resample_command(self, i: int) -> None:
        c = self.cfg.commands
        u = self.rngs[i].random(4)  # type: ignore[union-attr]
        if u[2] < c.rel_standing_envs:
            self.commands[i] = 0.0
        else:
            self.commands[i, 0] = c.lin_vel_x[0] + (c.lin_vel_x[1] - c.lin_vel_x[0]) * u[0]
            self.commands[i, 1] = c.ang_vel_z[0] + (c.ang_vel_z[1] - c.ang_vel_z[0]) * u[1]
        lo, hi = c.resampling_time_s
        self.resample_at[i] = self.t + max(1, round((lo + (hi - lo) * u[3]) / self.dt))
        self._next_resample = int(self.resample_at.min())

    def _push(self, i: int) -> None:
        rng = self.rngs[i]
        assert rng is not None
        self.physics.qvel[i, :2] += self.randomizer.push(rng)
        self.physics.set_qvel(i)
        self.push_at[i] = self.t + self.randomizer.push_interval_steps(rng, self.dt)
        self._next_push = int(self.push_at.min())

    def set_command(self, lin_vel_x: float, ang_vel_z: float, env: int | None = None, hold: bool = True) -> None:
        """Set a command by hand (evaluation, tests); ``hold`` stops resampling for this episode."""
        envs = range(self.num_envs) if env is None else [env]
        for i in envs:
            self.commands[i] = (lin_vel_x, ang_vel_z)
            if hold:
                self.resample_at[i] = _NEVER
        self._next_resample = int(self.resample_at.min())
        self.compute_obs()

    @property
    def episode_length(self) -> np.ndarray:
        """Control steps since each env's last reset."""
        return self.t - self.episode_start

    def close(self) -> None:
        self.physics.close()


def _halving_sum(x: list[float]) -> float:
    """Sum by halving (x[i] + x[i + h], odd one carried): the pairing :func:`_halving_sum_2d` uses."""
    if len(x) == 8:  # torques, the default action: the loop below, unrolled
        return ((x[0] + x[4]) + (x[2] + x[6])) + ((x[1] + x[5]) + (x[3] + x[7]))
    while len(x) > 1:
        h = len(x) // 2
        y = [x[i] + x[i + h] for i in range(h)]
        if len(x) % 2:
            y.append(x[2 * h])
        x = y
    return x[0]


def _halving_sum_2d(x: np.ndarray) -> np.ndarray:
    """Row sums of ``(N, w)`` in :func:`_halving_sum`'s order: log2(w) numpy calls, not w - 1."""
    while x.shape[1] > 1:
        h = x.shape[1] // 2
        y = x[:, :h] + x[:, h : 2 * h]
        if x.shape[1] % 2:
            y = np.concatenate([y, x[:, 2 * h :]], axis=1)
        x = y
    return x[:, 0]
