"""The in-hand tasks over a batch of envs (:class:`InHandTask`): the G20 palm up turning an object.

One control step (``dt = 1 / control_hz``, 20 Hz by default: HORA's and the LEAP hand's rate):

1. the action through the pose task's one action path: :class:`~dexwheel.tasks.hand.action.G20ActionMap` (the
   four G20 mappings of :mod:`dexwheel.control`: normalised, SDK 0..255, nominal radians, delta; a rejected action
   raises before anything changes; latency: :class:`~dexwheel.tasks.action_delay.ActionDelay`), then the composer
   and resolver (:class:`~dexwheel.tasks.hand.action_path.HandActionPath`);
2. the PD drive (:class:`~dexwheel.sim.hand_drive.PDDrive`): slewed targets into the 21 position actuators for
   ``1 / (control_hz * timestep)`` physics steps (one ``mujoco.batch`` rollout for several envs, bit-identical to
   plain ``mj_step`` calls);
3. the object's state read from the physics (position, orientation, velocities in the world frame), the fingertips'
   contacts and the actuators' forces from the last physics step's sensors;
4. the named terms of the config's tables (:class:`~dexwheel.tasks.manager.TermRunner`): terminations (a drop),
   rewards (weighed and summed in table order; ``info["reward_<term>"]``), the observation. Reorientation: a goal
   reached (within ``commands.success_tolerance``) earns its bonus in that step and a new goal is drawn after it.

A reset draws the start from the grasp cache (:mod:`.grasps`, the ``reset_from_grasps`` event): the hand at rest
at the grasp's joints, commanded to hold them, the object where the grasp holds it.

The task is written once over a leading batch of envs; the single env is its ``N = 1`` case and the vector env its
``N``-env case, bit-identical for the same seeds and actions.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
from typing import Any

import mujoco
import numpy as np

from dexwheel.control import G20_MIMIC
from dexwheel.fields import ConfigFieldError
from dexwheel.robots.g20 import ACTUATOR_NAMES, ALL_JOINTS, GOAL_PRESETS
from dexwheel.sim import snapshot
from dexwheel.sim.hand_drive import PDDrive, default_threads
from dexwheel.sim.model_checks import require_actuators, require_joints
from dexwheel.tasks import kernels, terms
from dexwheel.tasks.action_delay import ActionDelay, delay_range
from dexwheel.tasks.hand.action import G20ActionMap
from dexwheel.tasks.hand.action_path import HandActionPath
from dexwheel.tasks.hand.config import control_substeps
from dexwheel.tasks.in_hand import events as in_hand_events
from dexwheel.tasks.in_hand import grasp_cache
from dexwheel.tasks.in_hand.config import InHandCfg
from dexwheel.tasks.in_hand.geometry import quat_angle, quat_rotate, random_quat
from dexwheel.tasks.in_hand.scene import OBJECT_BODY, OBJECT_GEOM, build_scene, object_addresses, sensor_columns
from dexwheel.tasks.runtime import TaskRuntime

#: A camera above and beside the palm, looking down at the object.
CAMERA = {"distance": 0.42, "azimuth": 150.0, "elevation": -40.0, "lookat": (-0.09, 0.0, 0.03)}
#: The step's measurements in ``info`` beside the reward terms and termination flags.
METRICS: tuple[tuple[str, type], ...] = (
    ("rotation_rate", float),
    ("rotation_angle", float),
    ("object_drift", float),
    ("orientation_error", float),
    ("successes", float),
    ("action_clipped", int),
)


class InHandTask(TaskRuntime):
    """The in-hand task over ``num_envs`` envs: scene, action path, PD drive, object state; the step, reset and
    ``info`` are the runtime's (:class:`~dexwheel.tasks.runtime.TaskRuntime`).

    Each env has its own MjData and generator (``rngs[i]``, set at reset); every array has the env as its leading
    axis. The object's state in the world frame: ``object_pos``, ``object_quat`` (w x y z), ``object_lin_vel``,
    ``object_ang_vel``; where its episode started: ``object_start``; the command: ``axis`` (rotation) and
    ``goal_quat`` (reorientation).
    """

    NAME = "G20InHand"
    METRICS = METRICS
    READS = {
        "qpos": "(N, 21) joint positions (rad, ALL_JOINTS order)",
        "qvel": "(N, 21) joint velocities (rad/s)",
        "command": "(N, 16) the composed active-joint targets the drive moves toward",
        "object_pos": "(N, 3) the object's position (m, world frame)",
        "object_quat": "(N, 4) the object's orientation (w x y z)",
        "object_lin_vel": "(N, 3) the object's linear velocity (m/s, world frame)",
        "object_ang_vel": "(N, 3) the object's angular velocity (rad/s, world frame)",
        "object_start": "(N, 3) where the object's episode started (m)",
        "tip_contacts": "(N, 5) the thumb's and each finger's distal segment touching the object (thumb, index ... pinky)",
        "actuator_force": "(N, 21) the actuators' forces (N m)",
        "axis": "(N, 3) the commanded rotation axis (world frame, unit)",
        "goal_quat": "(N, 4) the goal orientation (reorientation)",
        "goal_reached": "(N,) bool, a goal reached in this step (reorientation)",
    }
    STATE = ("datas", "command", "raw_action", "qpos", "qvel", "object_pos", "object_quat", "object_lin_vel",
             "object_ang_vel", "object_start", "tip_contacts", "actuator_force", "goal_quat", "goal_reached",
             "successes", "start_joints", "start_object", "drive.q", "drive.depth", "drive.control",
             "drive.monitor._last", "object_mass", "object_size", "friction", "kp_scale", "kd_scale")  # fmt: skip

    def __init__(self, cfg: InHandCfg, num_envs: int = 1, *, max_steps: int | None = None,
                 num_threads: int | None = None) -> None:  # fmt: skip
        self.cfg = cfg
        self.num_envs = n = int(num_envs)
        self._max_steps_arg, self._threads_arg = max_steps, num_threads
        self.grasps = grasp_cache.load_for(cfg.hand, cfg.object, cfg.grasps, cfg.physics)
        self.model = model = build_scene(cfg.hand, cfg.object, cfg.collision.contact_excludes, cfg.physics)
        name = f"g20_{cfg.hand} in-hand scene"
        jid = require_joints(model, ALL_JOINTS, name)
        self.qpos_adr = model.jnt_qposadr[jid].astype(np.intp)
        self.dof_adr = model.jnt_dofadr[jid].astype(np.intp)
        ctrl_idx = require_actuators(model, ACTUATOR_NAMES, name).astype(np.intp)
        self.obj_qadr, self.obj_vadr = object_addresses(model)
        self.tip_cols, self.force_cols = sensor_columns(model)
        self.timestep = float(model.opt.timestep)
        self.nsub = control_substeps(cfg.control_hz, self.timestep, "G20InHand")
        self.dt = self.nsub * self.timestep
        self.coupling = c = G20_MIMIC
        self.datas = [mujoco.MjData(model) for _ in range(n)]
        reset_events = self._bind_events()
        # every env on the one model, unless an event randomises the physics: then each on a copy of its own
        self.models = [copy.copy(model) for _ in range(n)] if (self._randomizes and n > 1) else [model] * n
        a = cfg.actions
        self.actions = G20ActionMap(a.kind, cfg.hand, c, n, out_of_range=a.out_of_range, delta_scale=a.delta_scale)
        hold = self.actions.preset(cfg.composer.hold_pose)
        self.command_path = HandActionPath(cfg.composer.layers, cfg.composer.hold_joints, hold,
                                            (c.active_lower, c.active_upper), n)  # fmt: skip
        self.num_threads = 1 if n == 1 else (num_threads or default_threads(n))
        self.drive = self.sim = PDDrive(model, self.datas, c, self.qpos_adr, ctrl_idx, slew_rad_s=cfg.drive.slew_rad_s,
                                        timestep=self.timestep, nsub=self.nsub, num_threads=self.num_threads,
                                        models=self.models)  # fmt: skip
        self._init_physics_params(ctrl_idx)
        na, nf, da = c.nactive, c.nfull, self.actions.dim
        self.command = np.zeros((n, na))  # the composed active-joint targets the drive moves toward
        self.raw_action = np.zeros((n, da))  # the last accepted action, as given (the delta mapping's previous)
        self.qpos, self.qvel = np.zeros((n, nf)), np.zeros((n, nf))
        self.object_pos, self.object_quat = np.zeros((n, 3)), np.zeros((n, 4))
        self.object_lin_vel, self.object_ang_vel = np.zeros((n, 3)), np.zeros((n, 3))
        self.object_start = np.zeros((n, 3))
        self.tip_contacts = np.zeros((n, len(self.tip_cols)))
        self.actuator_force = np.zeros((n, len(self.force_cols)))
        self.axis = np.tile(np.asarray(cfg.commands.axis, dtype=np.float64) / math.hypot(*cfg.commands.axis), (n, 1))
        self.goal_quat = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
        self.goal_reached = np.zeros(n, dtype=bool)
        self.successes = np.zeros(n)
        self._error = np.zeros(n)
        self.start_joints, self.start_object = np.zeros((n, na)), np.zeros((n, 7))
        self.max_episode_steps = max(1, round(cfg.episode_length_s / self.dt))
        delay = delay_range(a.delay_steps, "actions.delay_steps")
        #: Latency (None: none): the action path maps an action given ``delay`` steps before.
        self.delay = ActionDelay(delay, np.zeros((n, da))) if delay != (0, 0) else None
        self._reorient = cfg.task == "reorient"
        groups = ("policy", "critic") if cfg.privileged_obs else ("policy",)
        observations = {k: t for g in groups for k, t in cfg.observations.items() if t.group == g}
        self.action_space = self.actions.space
        self._start_runtime(
            observations, cfg.rewards, cfg.terminations, reset_events=reset_events, action_dim=da, max_steps=max_steps
        )

    def _bind_events(self) -> list:
        """The reset events, bound; whether one of them randomises the physics (writes an env's model); the grasp
        caches of every object size an event may draw (a missing one refused now, naming the event's ``sizes``)."""
        bound = [terms.bind_event(e, f"events.{k}") for k, e in self.cfg.events.items()]
        self._randomizes = any(func in in_hand_events.MODEL_EVENTS for func, _ in bound)
        self._caches = {float(self.cfg.object.size): self.grasps}
        for name, (func, call) in zip(self.cfg.events, bound, strict=True):
            if func is in_hand_events.randomize_object_size:
                if self.cfg.object.length is not None:
                    raise ConfigFieldError(f"events.{name}", f"events.{name}: scales the whole object; the "
                                                             f"{self.cfg.object.shape}'s own length (object.length="
                                                             f"{self.cfg.object.length:g}) would scale with it")  # fmt: skip
                sizes = call.keywords.get("sizes", inspect.signature(func).parameters["sizes"].default)
                for size in sizes:
                    obj = dataclasses.replace(self.cfg.object, size=float(size))
                    try:
                        self._caches[float(size)] = grasp_cache.load_for(self.cfg.hand, obj, physics=self.cfg.physics)
                    except ConfigFieldError as e:
                        key = f"events.{name}.params.sizes"
                        raise ConfigFieldError(key, f"{key}: {size:g} m: {e.detail}") from None
        return [call for _, call in bound]

    def grasps_for(self, size: float):
        """The grasp cache of the object at ``size`` (m): the config's, or one an event's ``sizes`` loaded."""
        return self._caches[size]

    # -- physics parameters (domain randomisation) ---------------------------------------------------
    def _init_physics_params(self, ctrl_idx: np.ndarray) -> None:
        """The nominal physics the randomisation events start from, and each env's parameters (nominal until an
        event draws them): ``object_mass`` (kg), ``object_size`` (m), ``friction`` (the object's and the hand's
        sliding friction), ``kp_scale`` and ``kd_scale`` (per actuator)."""
        m, n = self.model, self.num_envs
        body, geom = m.body(OBJECT_BODY).id, m.geom(OBJECT_GEOM).id
        self._obj_body, self._obj_geom, self._actuators = body, geom, ctrl_idx
        self._contact_geoms = np.flatnonzero((m.geom_contype != 0) | (m.geom_conaffinity != 0))
        self._nominal = {"mass": float(m.body_mass[body]), "inertia": m.body_inertia[body].copy(),
                         "friction": m.geom_friction[self._contact_geoms, 0].copy(),
                         "object_friction": float(m.geom_friction[geom, 0]),
                         "kp": m.actuator_gainprm[ctrl_idx, 0].copy(), "kd": -m.actuator_biasprm[ctrl_idx, 2],
                         "size": float(self.cfg.object.size), "geom_size": m.geom_size[geom].copy(),
                         "rbound": float(m.geom_rbound[geom]), "aabb": m.geom_aabb[geom].copy()}  # fmt: skip
        self.object_mass = np.full(n, self._nominal["mass"])
        self.object_size = np.full(n, self._nominal["size"])
        self.friction = np.full(n, float(m.geom_friction[geom, 0]))
        self.kp_scale, self.kd_scale = np.ones((n, len(ctrl_idx))), np.ones((n, len(ctrl_idx)))
        self._scratch = mujoco.MjData(m) if self._randomizes else None

    def apply_physics(self, i: int) -> None:
        """Write env ``i``'s physics parameters into its model (from the nominal values), its derived constants
        refreshed. The object's inertia scales with its mass and the square of its size, its collision shape (and
        the broadphase's bounds of it) with its size; the friction scales every collision shape's by the drawn value
        over the object's nominal one (the contact model's ratios kept: the pads grip, the rest slides)."""
        model, nom, b, g, a = self.models[i], self._nominal, self._obj_body, self._obj_geom, self._actuators
        scale = self.object_size[i] / nom["size"]
        model.body_mass[b] = self.object_mass[i]
        model.body_inertia[b] = nom["inertia"] * (self.object_mass[i] / nom["mass"]) * scale**2
        model.geom_size[g], model.geom_rbound[g], model.geom_aabb[g] = (nom["geom_size"] * scale, nom["rbound"] * scale,
                                                                         nom["aabb"] * scale)  # fmt: skip
        model.geom_friction[self._contact_geoms, 0] = nom["friction"] * (self.friction[i] / nom["object_friction"])
        kp, kd = nom["kp"] * self.kp_scale[i], nom["kd"] * self.kd_scale[i]
        model.actuator_gainprm[a, 0], model.actuator_biasprm[a, 1], model.actuator_biasprm[a, 2] = kp, -kp, -kd
        mujoco.mj_setConst(model, self._scratch)  # the masses' derived constants (invweight ...)

    # -- state -------------------------------------------------------------------------------------
    def _read(self, rows: slice | np.ndarray, qpos: np.ndarray, qvel: np.ndarray, sensors: np.ndarray) -> None:
        """The hand's joints, the object's state (world frame) and the sensors of envs ``rows`` from physics
        arrays ``(k, nq)``, ``(k, nv)``, ``(k, nsensordata)``."""
        o, v = self.obj_qadr, self.obj_vadr
        self.qpos[rows] = qpos[:, self.qpos_adr]
        self.qvel[rows] = qvel[:, self.dof_adr]
        self.object_pos[rows] = qpos[:, o : o + 3]
        self.object_quat[rows] = quat = qpos[:, o + 3 : o + 7]
        self.object_lin_vel[rows] = qvel[:, v : v + 3]
        self.object_ang_vel[rows] = quat_rotate(quat, qvel[:, v + 3 : v + 6])  # a free joint's is in its own frame
        self.tip_contacts[rows] = sensors[:, self.tip_cols]
        self.actuator_force[rows] = sensors[:, self.force_cols]

    # -- reset -------------------------------------------------------------------------------------
    def _start_episode(self, i: int, rng: np.random.Generator, options: Any, fresh: bool) -> None:
        """The start the reset events chose (the hand at rest at the grasp's joints, commanded to hold them, the
        object where the grasp holds it) written into env ``i``'s physics; a reorientation goal drawn."""
        q0 = self.start_joints[i].copy()
        d = self.datas[i]
        mujoco.mj_resetData(self.models[i], d)
        d.qpos[self.obj_qadr : self.obj_qadr + 7] = self.start_object[i]
        self.drive.set_pose(i, self.coupling.complete(q0, clip_mimic=True))
        self.drive.q[i] = q0
        self.command[i] = q0
        self.raw_action[i] = self.actions.hold_action(q0)
        if self.delay is not None:  # until k actions are given, the one that holds the start pose
            dl = self.delay
            dl.reset(i, self.raw_action[i], int(rng.integers(dl.low, dl.high + 1)) if dl.random else None)
        self.last_action[i] = self.action[i] = self.actions.normalize(self.raw_action[i])
        self._read(slice(i, i + 1), d.qpos[None], d.qvel[None], d.sensordata[None])
        self.object_start[i] = self.object_pos[i]
        self.goal_quat[i] = random_quat(rng) if self._reorient else (1.0, 0.0, 0.0, 0.0)
        self.goal_reached[i] = False
        self.successes[i] = 0.0

    def _reset_metrics(self, idx: np.ndarray | slice, info: dict[str, np.ndarray]) -> None:
        info["orientation_error"] = quat_angle(self.object_quat[idx], self.goal_quat[idx])

    # -- step --------------------------------------------------------------------------------------
    def _apply_action(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.actions.map(actions, self.command, stacklevel=5, delay=self.delay)

    def _advance(self, mapped: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        goals, raw, self._clipped = mapped
        self.command[:] = self.command_path(goals)
        self.action[:] = self.actions.normalize(raw)
        self.raw_action[:] = raw
        drive = self.drive
        drive.step(self.command)
        self._read(slice(None), drive.qpos, drive.qvel, drive.sensordata)
        self._error[:] = quat_angle(self.object_quat, self.goal_quat)
        if self._reorient:
            np.less(self._error, self.cfg.commands.success_tolerance, out=self.goal_reached)
            self.successes += self.goal_reached

    def _write_metrics(self, block: np.ndarray) -> None:
        m = self.metrics
        m["rotation_rate"][:] = rate = kernels.row_dot(self.object_ang_vel, self.axis)
        m["rotation_angle"] += rate * self.dt  # the turn so far this episode (rad): the rate's sum over its steps
        m["object_drift"][:] = kernels.row_norm(self.object_pos - self.object_start)
        m["orientation_error"][:] = self._error
        m["successes"][:] = self.successes
        m["action_clipped"][:] = self._clipped

    def _update_commands(self) -> None:
        if self._reorient and self.goal_reached.any():  # the next goal, seen from the next observation on
            for i in np.flatnonzero(self.goal_reached):
                self.goal_quat[i] = random_quat(self.rngs[i])

    def camera(self) -> dict[str, Any]:
        """Above and beside the palm, looking down at the object."""
        return CAMERA

    # -- copy and pickle (dexwheel.sim.snapshot) ----------------------------------------------------
    def _init_args(self) -> tuple[tuple, dict[str, Any]]:
        return (self.cfg, self.num_envs), {"max_steps": self._max_steps_arg, "num_threads": self._threads_arg}

    def snapshot(self) -> dict[str, Any]:
        state = super().snapshot()
        names = []
        if self.delay is not None:
            names += ["delay._ring", "delay._head", "delay.delay"]
        if self.drive.batch is not None:
            names += ["drive.batch._batch.state", "drive.batch._batch.warning", "drive._record"]
        state["attrs"].update(snapshot.capture(self, names))
        return state

    def _after_restore(self) -> None:
        if self._randomizes:  # the models carry the draws: rebuilt from them
            for i in range(self.num_envs):
                self.apply_physics(i)

    def close(self) -> None:
        self.drive.close()


__all__ = ["GOAL_PRESETS", "METRICS", "InHandTask"]
