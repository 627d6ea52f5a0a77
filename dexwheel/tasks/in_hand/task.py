"""The in-hand tasks over a batch of envs (:class:`InHandTask`): the G20 palm up turning an object.

One control step (``dt = 1 / control_hz``, 20 Hz by default: HORA's and the LEAP hand's rate):

1. the action through the pose task's one action path: :class:`~dexwheel.tasks.hand_pose.action.G20ActionMap` (the
   four G20 mappings of :mod:`dexwheel.control`: normalised, SDK 0..255, nominal radians, delta; a rejected action
   raises before anything changes; latency: :class:`~dexwheel.tasks.action_delay.ActionDelay`), then the composer
   and resolver (:class:`~dexwheel.tasks.hand_pose.action_path.HandActionPath`);
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
from gymnasium import spaces

from dexwheel.control import G20_MIMIC
from dexwheel.fields import ConfigFieldError
from dexwheel.robots.g20 import ACTUATOR_NAMES, ALL_JOINTS, GOAL_PRESETS
from dexwheel.sim import snapshot
from dexwheel.sim.divergence import contain
from dexwheel.sim.hand_drive import PDDrive, default_threads
from dexwheel.sim.model_checks import require_actuators, require_joints
from dexwheel.tasks import kernels, terms
from dexwheel.tasks.action_delay import ActionDelay, delay_range
from dexwheel.tasks.hand_pose.action import G20ActionMap
from dexwheel.tasks.hand_pose.action_path import HandActionPath
from dexwheel.tasks.hand_pose.config import control_substeps
from dexwheel.tasks.in_hand import events as in_hand_events
from dexwheel.tasks.in_hand import grasp_cache
from dexwheel.tasks.in_hand.config import InHandCfg
from dexwheel.tasks.in_hand.geometry import quat_angle, quat_rotate, random_quat
from dexwheel.tasks.in_hand.scene import OBJECT_BODY, OBJECT_GEOM, build_scene, object_addresses, sensor_columns
from dexwheel.tasks.kernels import any_row
from dexwheel.tasks.manager import TermRunner
from dexwheel.tasks.spaces import reset_options

#: The step's measurements in ``info`` beside the reward terms and termination flags.
METRICS = (
    "rotation_rate",
    "rotation_angle",
    "object_drift",
    "orientation_error",
    "successes",
    "action_clipped",
    "diverged",
)
_BOOL_METRICS = ("action_clipped", "diverged")


class InHandTask:
    """The whole in-hand task over ``num_envs`` envs: scene, action path, PD drive, object state, terms.

    Each env has its own MjData and generator (``rngs[i]``, set at reset); every array has the env as its leading
    axis. The object's state in the world frame: ``object_pos``, ``object_quat`` (w x y z), ``object_lin_vel``,
    ``object_ang_vel``; where its episode started: ``object_start``; the command: ``axis`` (rotation) and
    ``goal_quat`` (reorientation).
    """

    def __init__(self, cfg: InHandCfg, num_envs: int = 1) -> None:
        self.cfg = cfg
        self.num_envs = n = int(num_envs)
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
        self._bind_events()
        # every env on the one model, unless an event randomises the physics: then each on a copy of its own
        self.models = [copy.copy(model) for _ in range(n)] if (self._randomizes and n > 1) else [model] * n
        a = cfg.actions
        self.actions = G20ActionMap(a.kind, cfg.hand, c, n, out_of_range=a.out_of_range, delta_scale=a.delta_scale)
        hold = self.actions.preset(cfg.composer.hold_pose)
        self.command_path = HandActionPath(cfg.composer.layers, cfg.composer.hold_joints, hold,
                                            (c.active_lower, c.active_upper), n)  # fmt: skip
        self.num_threads = 1 if n == 1 else (cfg.num_threads or default_threads(n))
        self.drive = PDDrive(model, self.datas, c, self.qpos_adr, ctrl_idx, slew_rad_s=cfg.drive.slew_rad_s,
                             timestep=self.timestep, nsub=self.nsub, num_threads=self.num_threads,
                             models=self.models)  # fmt: skip
        self._init_physics_params(ctrl_idx)
        na, nf, da = c.nactive, c.nfull, self.actions.dim
        self.command = np.zeros((n, na))  # the composed active-joint targets the drive moves toward
        self.raw_action = np.zeros((n, da))  # the last accepted action, as given (the delta mapping's previous)
        self.action = np.zeros((n, da))  # the accepted action scaled to [-1, 1] (the terms' ``action``)
        self.last_action = np.zeros((n, da))
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
        self.start_joints, self.start_object = np.zeros((n, na)), np.zeros((n, 7))
        self.elapsed = np.zeros(n, dtype=np.int64)
        self.rngs: list[np.random.Generator | None] = [None] * n
        self.max_episode_steps = max(1, round(cfg.episode_length_s / self.dt))
        self.reward = np.zeros(n)
        self.terminated = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self._any_diverged = False
        delay = delay_range(a.delay_steps, "actions.delay_steps")
        #: Latency (None: none): the action path maps an action given ``delay`` steps before.
        self.delay = ActionDelay(delay, np.zeros((n, da))) if delay != (0, 0) else None
        self._reorient = cfg.task == "reorient"
        self._build_terms()

    # -- terms -------------------------------------------------------------------------------------
    def _build_terms(self) -> None:
        """Bind the term tables (every term called once on the built state: a bad one fails now, naming it)."""
        cfg, n = self.cfg, self.num_envs
        groups = ("policy", "critic") if cfg.privileged_obs else ("policy",)
        table = {k: t for g in groups for k, t in cfg.observations.items() if t.group == g}
        self.terms = TermRunner(self, n, table, cfg.rewards, cfg.terminations)
        self.obs_layout = self.terms.layout
        self.obs_slices, self.obs_dim = self.terms.layout.slices, self.terms.layout.dim
        #: The actor's columns (the ``policy`` group, first); the critic reads them all.
        self.policy_obs_dim = self.terms.layout.policy_dim
        self.observation_space = spaces.Box(-np.inf, np.inf, (self.obs_dim,), np.float32)
        self.obs = np.zeros((n, self.obs_dim), dtype=np.float32)
        self.term_flags = np.zeros((n, len(cfg.terminations)), dtype=bool)
        nr = len(cfg.rewards)
        self.info_keys = (*(f"reward_{k}" for k in cfg.rewards), *METRICS,
                          *(f"terminated_{k}" for k in cfg.terminations))  # fmt: skip
        self.info_types = tuple(bool if k.startswith("terminated_") or k in _BOOL_METRICS else float
                                for k in self.info_keys)  # fmt: skip
        #: The last step's ``info`` values per env, one row each (:attr:`info_keys` order).
        self.values = np.zeros((n, len(self.info_keys)))
        self.metrics = {k: self.values[:, nr + i] for i, k in enumerate(METRICS)}

    def _bind_events(self) -> None:
        """The reset events, bound; whether one of them randomises the physics (writes an env's model); the grasp
        caches of every object size an event may draw (a missing one refused now, naming the event's ``sizes``)."""
        bound = [terms.bind_event(e, f"events.{k}") for k, e in self.cfg.events.items()]
        self._events = [call for _, call in bound]
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

    def compute_obs(self, out: np.ndarray | None = None) -> np.ndarray:
        """The observation terms, processed, into ``out`` (default: the task's ``obs``), every env."""
        return self.terms.compute_obs(self.obs if out is None else out)

    def observation(self, idx: np.ndarray | list[int] | slice = slice(None)) -> np.ndarray:
        """The observation of the envs ``idx`` as they are now (fresh rows)."""
        return self.compute_obs(np.empty_like(self.obs))[idx]

    # -- reset -------------------------------------------------------------------------------------
    def checked_options(self, options: Any) -> dict[str, Any]:
        """``reset`` options: none are taken (the start is the grasp cache's); anything else is refused."""
        return reset_options("G20InHand", options, ())

    def reset_env(self, i: int, rng: np.random.Generator, options: dict[str, Any] | None = None) -> None:
        """Start a new episode in env ``i`` with generator ``rng`` (kept for the episode's draws)."""
        self.rngs[i] = rng
        for event in self._events:
            event(self, i, rng)
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
        self.elapsed[i] = 0
        self.values[i] = 0.0
        self.terms.reset(i, [rng])

    def reset_info(self, idx: np.ndarray | slice) -> dict[str, np.ndarray]:
        """Info of freshly reset envs: every step key (reward terms 0), so vector infos stay aligned."""
        rows = self.values[idx]
        info = {k: rows[:, j].astype(kind) for j, (k, kind) in enumerate(zip(self.info_keys, self.info_types,
                                                                             strict=True))}  # fmt: skip
        info["orientation_error"] = quat_angle(self.object_quat[idx], self.goal_quat[idx])
        return info

    # -- step --------------------------------------------------------------------------------------
    def advance(self, actions: Any) -> None:
        """One control step of every env, results in the task's buffers; raises, changing nothing, on an invalid
        action."""
        goals, raw, clipped = self.actions.map(actions, self.command, stacklevel=4, delay=self.delay)
        # -- from here on the step commits --------------------------------------------------------
        self.command[:] = self.command_path(goals)
        self.action[:] = self.actions.normalize(raw)
        self.raw_action[:] = raw
        drive = self.drive
        drive.step(self.command)
        self._read(slice(None), drive.qpos, drive.qvel, drive.sensordata)
        self.elapsed += 1
        np.greater_equal(self.elapsed, self.max_episode_steps, out=self.truncated)
        flags = self.term_flags
        self.terms.terminations(flags)
        self.terminated[:] = False
        if flags.shape[1]:
            any_row(flags, self.terminated)
        m = self.metrics
        error = quat_angle(self.object_quat, self.goal_quat)
        if self._reorient:
            np.less(error, self.cfg.commands.success_tolerance, out=self.goal_reached)
            self.successes += self.goal_reached
        self.terms.rewards(self.values)
        nr = len(self.cfg.rewards)
        kernels.weigh_rows(self.values, self.terms.reward_coef, self.reward)  # info: each term's contribution
        m["rotation_rate"][:] = rate = kernels.row_dot(self.object_ang_vel, self.axis)
        m["rotation_angle"] += rate * self.dt  # the turn so far this episode (rad): the rate's sum over its steps
        m["object_drift"][:] = kernels.row_norm(self.object_pos - self.object_start)
        m["orientation_error"][:] = error
        m["successes"][:] = self.successes
        m["action_clipped"][:] = clipped
        self.values[:, nr + len(METRICS) :] = flags
        self.last_action[:] = self.action
        self.terms.advance()
        if self._reorient and self.goal_reached.any():  # the next goal, seen from the next observation on
            for i in np.flatnonzero(self.goal_reached):
                self.goal_quat[i] = random_quat(self.rngs[i])
        self.compute_obs()
        diverged = drive.monitor.check(self.obs, self.reward)
        if diverged is not None or self._any_diverged:
            self._contain(diverged)

    def _contain(self, diverged: np.ndarray | None) -> None:
        """Envs whose physics blew up (:mod:`dexwheel.sim.divergence`): truncated with ``info["diverged"]``, their
        reward and reward terms 0, their observation finite."""
        self._any_diverged = diverged is not None
        m = self.metrics["diverged"]
        m[:] = 0.0 if diverged is None else diverged
        if diverged is None:
            return
        d = self.drive
        physics_ok = ~d.monitor.warned & np.isfinite(d.qpos).all(axis=1) & np.isfinite(d.qvel).all(axis=1)
        self.terms.check_finite(diverged & physics_ok, self.values, self.obs, int(self.elapsed.max()))
        self.truncated |= diverged
        contain(diverged, self.reward, self.values[:, : len(self.cfg.rewards)], self.values, self.obs)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """:meth:`advance`, returning fresh ``(obs, reward, terminated, truncated, info)`` arrays."""
        self.advance(actions)
        info = {key: (col if kind is float else col.astype(kind))
                for key, kind, col in zip(self.info_keys, self.info_types, self.values.T.copy(), strict=True)}  # fmt: skip
        return self.obs.copy(), self.reward.copy(), self.terminated.copy(), self.truncated.copy(), info

    def step_info_of(self, i: int) -> dict[str, Any]:
        """Env ``i``'s last step ``info`` as plain numbers (the single env's)."""
        row = self.values[i].tolist()
        return {key: kind(v) for key, kind, v in zip(self.info_keys, self.info_types, row, strict=True)}

    # -- copy and pickle (dexwheel.sim.snapshot) ----------------------------------------------------
    _STATE = ("datas", "command", "raw_action", "action", "last_action", "qpos", "qvel", "object_pos", "object_quat",
              "object_lin_vel", "object_ang_vel", "object_start", "tip_contacts", "actuator_force", "goal_quat",
              "goal_reached", "successes", "start_joints", "start_object", "elapsed", "rngs", "reward", "terminated",
              "truncated", "obs", "values", "_any_diverged", "drive.q", "drive.depth", "drive.control",
              "drive.monitor._last", "object_mass", "object_size", "friction", "kp_scale", "kd_scale")  # fmt: skip

    def snapshot(self) -> dict[str, Any]:
        """What a copy of this task continues from, by reference (the env deep-copies it)."""
        names = list(self._STATE)
        if self.delay is not None:
            names += ["delay._ring", "delay._head", "delay.delay"]
        if self.drive.batch is not None:
            names += ["drive.batch._batch.state", "drive.batch._batch.warning", "drive._record"]
        return {"attrs": snapshot.capture(self, names), "terms": self.terms.state()}

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from another task's :meth:`snapshot` (same config), written into this task's own objects."""
        snapshot.restore(self, state["attrs"])
        self.terms.load_state(state["terms"])
        if self._randomizes:  # the models carry the draws: rebuilt from them
            for i in range(self.num_envs):
                self.apply_physics(i)

    def __reduce__(self) -> tuple:
        return snapshot.reduce_task(self, self.cfg, self.num_envs)

    def close(self) -> None:
        self.drive.close()


__all__ = ["GOAL_PRESETS", "METRICS", "InHandTask"]
