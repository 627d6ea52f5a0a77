"""The wheel-leg velocity-tracking task, written once over a leading env dimension.

The single env (:mod:`dexwheel.envs.wheel_leg`) is the N = 1 case on :class:`SerialPhysics`; the native
vector env (:mod:`dexwheel.envs.wheel_leg_vector`) is any N on :class:`BatchPhysics`. Both run this
code, draw env ``i``'s randomness from env ``i``'s own generator, and their physics backends agree bit for
bit, so a vector env reproduces N single envs exactly.

One control step::

    action [-1, 1] -> policy JointTargetBuffer (knees: stance + knee_scale a; wheels: vel = wheel_scale a)
      -> JointCommandComposer (layers: policy, stance, override) -> task-order MotorFrame
      -> JointCommandResolver -> robot-order MotorFrame -> MotorFrameDrive.step (actuator gains, ctrl,
      physics x decimation: the drive interface, :mod:`dexwheel.sim.drive`) -> sensors -> reward terms, terminations -> commands, interval events -> observation

For N > 1 the composer and the resolver run on layouts whose joint names carry an env prefix
(``env3/fl_knee_joint``), so one ``compose()`` merges every env's layers with precompiled copies. The
wiring is first built and checked with the plain joint names, so a wiring error names the joint.

After the physics, the runtime's step (:class:`~dexwheel.tasks.runtime.TaskRuntime`) runs the config's term
tables in their fixed order: termination terms, reward terms (weighed and summed left to right), the tracking
metrics, the command resamples and interval events, then observation terms into their columns
(:mod:`~dexwheel.tasks.velocity.rewards`, ``observations``, ``terminations``; :mod:`dexwheel.tasks.terms`).
Each term is one function over the env axis, and the action mapping and the loops the terms share are
compiled kernels (:mod:`dexwheel.tasks.velocity.kernels`), so N = 1 and N > 1 run the same code and give
the same bits.

The ``events`` table (:mod:`~dexwheel.tasks.velocity.events`) says what happens at a reset (domain
randomisation, the start-pose noise: reset events, in table order) and at intervals (pushes), each per env
with the env's own generator; a step where no event is due costs one integer compare.
"""

from __future__ import annotations

import copy
import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np
from gymnasium import spaces

from dexwheel.control import JointCommandComposer
from dexwheel.robots import get_robot
from dexwheel.robots.wheel_leg import (
    BASE_BODY,
    KNEE_JOINTS,
    LINKS,
    NON_WHEEL_BODIES,
    PARAMS,
    ROBOT_JOINT_ORDER,
    START_DROP_M,
    WheelLegParams,
)
from dexwheel.sim import snapshot
from dexwheel.sim.model_checks import check_robot_model
from dexwheel.sim.physics import BatchPhysics, SerialPhysics
from dexwheel.sim.randomization import EpisodeParams, ModelRandomizer
from dexwheel.sim.wheel_leg_drive import MotorFrameDrive
from dexwheel.tasks import terms
from dexwheel.tasks.runtime import TaskRuntime
from dexwheel.tasks.velocity import events, kernels
from dexwheel.tasks.velocity.action import WheelLegActionTerm
from dexwheel.tasks.velocity.action_path import WheelLegActionPath
from dexwheel.tasks.velocity.config import WheelLegEnvCfg, active_events, mirror_maps
from dexwheel.tasks.velocity.observations import height_scan_mirror
from dexwheel.tasks.velocity.scene import TRACK_CAMERA, build_scene
from dexwheel.tasks.velocity.schedule import Schedule
from dexwheel.tasks.velocity.settle import settle
from dexwheel.tasks.velocity.terrain import TaskTerrain, ground_under
from dexwheel.terrain.config import ROBOT_FOOTPRINT_M

_LINKS = LINKS


class WheelLegTask(TaskRuntime):
    """``num_envs`` copies of the task; ``backend`` "serial" (mj_step) or "batch" (thread pool); ``max_steps`` (a
    vector env's ``max_episode_steps``) ends episodes sooner than ``episode_length_s``."""

    READS = {
        "commands": "(N, 2) the command: forward velocity (m/s), yaw rate (rad/s)",
        "base_lin_vel": "(N, 3) base linear velocity (m/s, base frame)",
        "base_ang_vel": "(N, 3) base angular velocity (rad/s, base frame)",
        "world_z_in_base": "(N, 3) the world's up axis in the base frame (projected gravity is its negative)",
        "knee_pos": "(N, 4) knee angles (rad, fl fr hl hr)",
        "joint_vel": "(N, 8) knee and wheel velocities (rad/s, policy order)",
        "actuator_force": "(N, 8) actuator forces (N m, robot order)",
        "floor_contact": "(N, bodies) non-wheel bodies touching the floor; columns by body_columns(names)",
        "model_params": "(N, 13) what domain randomisation drew (offsets from nominal)",
        "stance": "(4,) the stance's knee angles",
        "terrain": "the terrain and each env's place and level on it (the rough ids; None on flat ground)",
        "physics": "physics.qpos / physics.qvel (N, nq) / (N, nv) for anything else",
    }

    RESET_OPTIONS = ("base_pose", "command")

    def __init__(self, cfg: WheelLegEnvCfg, num_envs: int = 1, *, backend: str | None = None,
                 num_threads: int | None = None, max_steps: int | None = None) -> None:  # fmt: skip
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.cfg = cfg
        self.num_envs = n = int(num_envs)
        self._max_steps_arg = max_steps
        self.NAME = {"solenopsis": "Solenopsis", "m20_legacy": "M20Legacy"}.get(cfg.robot, cfg.robot)
        desc = get_robot(cfg.robot)
        self.params: WheelLegParams = PARAMS[cfg.robot]
        self.total_mass = desc.total_mass
        #: The terrain all envs share (None: flat ground) and each env's place on it (:mod:`.terrain`).
        self.terrain = TaskTerrain(cfg.terrain, n) if cfg.terrain is not None else None
        # one env: the scene as built; several: the physics models leave the render-only textures out (5.5 MB a
        # model), and render_model has them, once per process
        terrain = None if self.terrain is None else self.terrain.desc
        model, self.sensors = build_scene(desc, terrain, textures=n == 1)
        check_robot_model(model, ROBOT_JOINT_ORDER, [a.name for a in desc.actuators], source=f"{cfg.robot} env model")
        self.dt = float(model.opt.timestep * cfg.decimation)
        self.max_episode_steps = max(1, round(cfg.episode_length_s / self.dt))
        self.stance = np.asarray(cfg.stance_pose, dtype=np.float64)

        #: qpos addresses of the knees (KNEE_JOINTS order)
        self.knee_qadr = np.array([model.jnt_qposadr[model.joint(j).id] for j in KNEE_JOINTS])
        self._home = np.zeros(model.nq)
        self._home[3] = 1.0
        # the stance settles on flat ground (the terrain's world origin may be a step)
        self.settled_knees, self.settled_height = self._settle(model if self.terrain is None
                                                               else build_scene(desc)[0])  # fmt: skip
        self._height_offset = self.settled_height - float(self.params.leg_heights(self.settled_knees).max())

        reset_events = self._bind_events()
        # Envs share one model unless an event writes models (domain randomisation): their gains are then all
        # the same (the drive gives each env its own copy should they come to differ, _split_models).
        self.models = [model] * n if n == 1 or self._model_free else [copy.copy(model) for _ in range(n)]
        self._scratch = mujoco.MjData(model)
        self._build_action_path()
        # one env: plain mj_step (the backends agree bit for bit; the pool only pays off with several envs)
        backend = backend or ("serial" if n == 1 else "batch")
        if backend == "serial":
            self.physics: SerialPhysics | BatchPhysics = SerialPhysics(self.models, cfg.decimation)
        elif backend == "batch":
            self.physics = BatchPhysics(self.models, cfg.decimation, num_threads)
        else:
            raise ValueError(f"backend: {backend!r}; use 'serial' or 'batch'")
        self.sim = self.physics
        self.drive = MotorFrameDrive(self.models, ROBOT_JOINT_ORDER, self.physics, split=self._split_models)

        self.randomizer = ModelRandomizer(cfg.domain_rand, model, BASE_BODY, _LINKS, len(ROBOT_JOINT_ORDER),
                                          nominal_friction=float(desc.contact.friction[0]))  # fmt: skip
        self.episode_params: list[EpisodeParams] = [self.randomizer.nominal] * n
        self.commands = np.zeros((n, 2))
        # Resamples and interval events as absolute control-step numbers: one integer compare per step until
        # one is due. Set before the terms are bound: a term may read the episode's length.
        self.t = 0
        self.episode_start = np.zeros(n, dtype=np.int64)
        self._bind_state()
        #: Each env's start state, filled by the reset events at a reset (:mod:`~dexwheel.tasks.velocity.events`).
        self._start = self.start_qpos(self.settled_knees)
        self.reset_qpos = np.tile(self._start, (n, 1))
        self.reset_qvel = np.zeros((n, model.nv))
        self.schedule = Schedule(self, self._interval_events)
        metrics = [(k, float) for k in kernels.METRIC_COLUMNS] + ([("terrain_level", float)] if self.terrain else [])
        groups = ("policy", "critic") if cfg.privileged_obs else ("policy",)
        observations = {k: t for g in groups for k, t in cfg.observations.items() if t.group == g}
        self.action_space = spaces.Box(-1.0, 1.0, shape=(self.action_dim,), dtype=np.float32)
        self._start_runtime(observations, cfg.rewards, cfg.terminations, reset_events=reset_events,
                            action_dim=self.action_dim, action_dtype=np.float32, metrics=tuple(metrics),
                            reward_scale=self.dt if cfg.scale_rewards_by_dt else 1.0, max_steps=max_steps)  # fmt: skip

    # -- construction ---------------------------------------------------------------------------
    def _settle(self, model: mujoco.MjModel) -> tuple[np.ndarray, float]:
        """Knee angles and base height the stance settles to under its own weight (nominal model):
        :func:`~dexwheel.tasks.velocity.settle.settle`, which the Isaac Lab task's start pose comes from too."""
        return settle(model, self.cfg)

    def _build_action_path(self) -> None:
        """The layers, composers and resolver (:class:`~dexwheel.tasks.velocity.action_path.WheelLegActionPath`,
        the Isaac Lab task's too) on numpy."""
        self.path = path = WheelLegActionPath(self.cfg, self.num_envs, stacklevel=4)
        self.policy_joints, self.action_dim, self._nk = path.policy_joints, path.action_dim, path.nk
        self._stance_joints, self._override_joints = path.stance_joints, path.override_joints
        self.buffers, self.resolver = path.buffers, path.resolver
        self.action_term = WheelLegActionTerm(self.cfg, path)

    @property
    def composer(self) -> JointCommandComposer:
        """The composer in use (with or without the override layer, :meth:`set_override`)."""
        return self.path.composer

    @property
    def override_active(self) -> bool:
        return self.path.override_active

    @property
    def _robot_block(self) -> np.ndarray:
        return self.path.robot_block

    def set_override(self, active: bool) -> None:
        """Switch the override layer on or off (it must be among the configured layers).

        Both composers read the same layer buffers, so switching keeps every target; switching off
        fails, naming the joints, when the override is the only layer covering some joint.
        """
        self.path.set_override(active)

    def _bind_state(self) -> None:
        """The named state terms read: ``(N, k)`` views of the sensor rows, valid for the task's lifetime."""
        s, sd = self.sensors, self.physics.sensordata
        self.base_lin_vel = sd[:, s.base_lin_vel]  # m/s, base frame
        self.base_ang_vel = sd[:, s.base_ang_vel]  # rad/s, base frame
        self.world_z_in_base = sd[:, s.world_z_in_base]  # projected gravity is its negative
        self.knee_pos = sd[:, s.knee_pos]  # KNEE_JOINTS order
        self.joint_vel = sd[:, s.joint_vel]  # POLICY_JOINT_ORDER
        self.actuator_force = sd[:, s.actuator_force]  # ROBOT_JOINT_ORDER, N m
        self.floor_contact = sd[:, s.floor_contact]  # NON_WHEEL_BODIES order: contacts with the floor
        #: What domain randomisation drew per env (offsets from nominal; observations.MODEL_PARAM_COLUMNS).
        self.model_params = np.zeros((self.num_envs, 13))
        self._body_columns: dict[tuple[str, ...], np.ndarray] = {}

    def body_columns(self, bodies: Sequence[str]) -> np.ndarray:
        """Columns of :attr:`floor_contact` for ``bodies`` (non-wheel body names), cached per tuple."""
        key = tuple(bodies)
        cols = self._body_columns.get(key)
        if cols is None:
            cols = self._body_columns[key] = np.array([NON_WHEEL_BODIES.index(b) for b in key], dtype=np.intp)
        return cols

    def _bind_events(self) -> list[functools.partial]:
        """Resolve the config's event terms: the reset events' calls in table order (returned), the interval events'
        calls with their intervals, of the events that run (:func:`~dexwheel.tasks.velocity.config.active_events`).
        An event changes the state, so it is not called here; a bad path or params fail now, naming the event
        (also one that does not run with this config: domain randomisation off)."""
        reset_events: list[functools.partial] = []
        self._interval_events: list[tuple[functools.partial, float, float]] = []
        self._randomizes_models = False  # does randomize_model run (restore then rebuilds the models from its draws)
        self._model_free = True  # do only events that never write a model run (the envs then share one)
        bound = {name: terms.bind_event(cfg, f"events.{name}") for name, cfg in self.cfg.events.items()}
        for name, (_, interval) in active_events(self.cfg).items():
            func, call = bound[name]
            self._model_free &= func in events.MODEL_FREE
            if interval is None:
                reset_events.append(call)
                self._randomizes_models |= func is events.randomize_model
            else:
                self._interval_events.append((call, *interval))
        return reset_events

    def _split_models(self) -> list[mujoco.MjModel]:
        """Give each env its own copy of the model the envs share (the drive calls this when their gains come
        to differ); the physics runs on the copies from now on."""
        if self.num_envs > 1 and self.models[0] is self.models[1]:
            self.models = [copy.copy(self.models[0]) for _ in range(self.num_envs)]
            self.physics.set_models(self.models)
            self.drive.models = list(self.models)
        return self.models

    @property
    def models_shared(self) -> bool:
        """Whether the envs run on one shared ``MjModel`` (several envs, no event writing models, equal gains)."""
        return self.num_envs > 1 and self.models[0] is self.models[1]

    @property
    def render_model(self) -> mujoco.MjModel:
        """The model to render any env's state with: for one env its own model; for several the scene with its
        textures (the physics models have them at 1 x 1 texel), built at the first call, once per process and
        robot, and only read."""
        if self.num_envs == 1:
            return self.models[0]
        if self.terrain is None:
            return render_model(self.cfg.robot)
        if getattr(self, "_terrain_render_model", None) is None:  # the terrain's scene, once per task
            self._terrain_render_model = build_scene(get_robot(self.cfg.robot), self.terrain.desc)[0]
        return self._terrain_render_model

    def start_qpos(self, knees: np.ndarray) -> np.ndarray:
        """The start pose for knee angles ``knees``: level base at the origin, the wheels just above the ground
        (the settled stance's height for those knees, plus a 0.5 mm drop)."""
        qpos = self._home.copy()
        qpos[self.knee_qadr] = knees
        qpos[2] = float(self.params.leg_heights(knees).max()) + self._height_offset + START_DROP_M
        return qpos

    # -- per step (the runtime's hooks) ---------------------------------------------------------
    def _apply_action(self, actions: np.ndarray) -> None:
        """Map ``(N, action_dim)`` actions into the policy layer (:class:`~dexwheel.tasks.velocity.action.WheelLegActionTerm`:
        clipped to [-1, 1] unless disabled; a bad action raises :class:`ActionError` before anything changes)."""
        self.action_term.apply(actions, self.action)

    def _advance(self, mapped: None) -> None:
        self.composer.compose()
        self.resolver.resolve_into(self.composer.frame)
        self.drive.step(self._robot_block)

    def _write_metrics(self, block: np.ndarray) -> None:
        kernels.tracking_metrics(block, self.commands, self.base_lin_vel, self.base_ang_vel)
        if self.terrain is not None:
            self.metrics["terrain_level"][:] = self.terrain.level

    def _update_commands(self) -> None:
        self.t += 1
        if self.schedule.due(self.t):
            self.schedule.run(self.t)

    # -- resets and events ----------------------------------------------------------------------
    def _before_events(self, i: int, options: Any, fresh: bool) -> None:
        """``fresh`` (the envs pass it on a seeded reset): env ``i`` also forgets what it carried from its earlier
        episodes, its terrain level and tile (the curriculum's state), and starts as in a new task, so that the same
        seed and actions repeat the same trajectory."""
        if fresh and self.terrain is not None:
            self.terrain.forget(i)
        self.reset_qpos[i] = self._start
        self.reset_qvel[i] = 0.0

    def _start_episode(self, i: int, rng: np.random.Generator, options: Any, fresh: bool) -> None:
        """The start state the reset events chose written into the physics, the command, then one interval draw
        per interval event."""
        self.physics.reset_env(i, self.reset_qpos[i], self.reset_qvel[i])
        self.episode_start[i] = self.t
        self.schedule.start(i, rng)
        self.action[i] = 0.0
        self.last_action[i] = 0.0
        self.action_term.reset(i, rng)

    def _reset_metrics(self, idx: np.ndarray | slice, info: dict[str, np.ndarray]) -> None:
        info["command_lin_vel_x"], info["command_ang_vel_z"] = self.commands[idx].T.copy()
        if self.terrain is not None:
            info["terrain_level"] = self.terrain.level[idx].astype(np.float64)

    def checked_options(self, options: Any) -> dict[str, Any]:
        """``reset(options=...)``: ``base_pose`` (x, y, yaw): start there (on the ground; the reset's draws as without
        it, :meth:`place_base`); ``command`` (forward m/s, yaw rate rad/s): held for the episode. Checked before
        anything changes: a refused option leaves the env as it was."""
        out = super().checked_options(options)
        if "base_pose" in out:
            out["base_pose"] = _numbers(self.NAME, "base_pose", out["base_pose"], 3)
            self.check_base_xy(*out["base_pose"][:2], f"{self.NAME}.reset: options['base_pose']")
        if "command" in out:
            out["command"] = _numbers(self.NAME, "command", out["command"], 2)
        return out

    def _after_reset(self, i: int, options: Any) -> None:
        if "base_pose" in options:
            self.place_base(i, *options["base_pose"])
        if "command" in options:
            self.set_command(*options["command"], env=i, hold=True)

    def check_base_xy(self, x: float, y: float, where: str) -> None:
        """Refuse (``ValueError`` naming ``where`` and the allowed ranges) a base position whose footprint is not
        wholly on the terrain: past its edge there is no ground. Any position on a flat task's plane."""
        if self.terrain is None:
            return
        xmin, xmax, ymin, ymax = self.terrain.desc.bounds
        r = ROBOT_FOOTPRINT_M / 2
        if not (xmin + r <= x <= xmax - r and ymin + r <= y <= ymax - r):
            raise ValueError(f"{where}: ({x:g}, {y:g}) puts the robot off the terrain; x in [{xmin + r:g}, "
                             f"{xmax - r:g}] and y in [{ymin + r:g}, {ymax - r:g}] (m) keep its footprint on it")  # fmt: skip

    def place_base(self, i: int, x: float, y: float, yaw: float) -> None:
        """Move env ``i``, just reset, to stand at world ``(x, y)`` facing ``yaw`` (rad): the start state its reset
        events chose (knee angles, velocities) with the base level, turned to ``yaw`` and standing on the ground
        there (the highest surface under the robot's footprint, flat ground without a terrain), written into the
        physics; the observation follows. Draws nothing (the step benchmark's start poses,
        :mod:`dexwheel.protocols.steps`)."""
        q = self.reset_qpos[i]
        base = self.start_qpos(q[self.knee_qadr])  # level, on flat ground at the origin, for these knees
        ground = ground_under(self.terrain.desc, x, y) if self.terrain is not None else 0.0
        q[:3] = x, y, base[2] + ground
        q[3:7] = math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)
        if self.terrain is not None:
            self.terrain.origin[i] = x, y, ground  # where the episode started (the curriculum measures from it)
        self.physics.reset_env(i, q, self.reset_qvel[i])
        self.compute_obs()

    def set_command(self, lin_vel_x: float, ang_vel_z: float, env: int | None = None, hold: bool = True) -> None:
        """Set a command by hand (evaluation, tests); ``hold`` stops resampling for this episode."""
        envs = range(self.num_envs) if env is None else [env]
        for i in envs:
            self.commands[i] = (lin_vel_x, ang_vel_z)
        if hold:
            self.schedule.hold(envs)
        self.compute_obs()

    @property
    def episode_length(self) -> np.ndarray:
        """Control steps since each env's last reset."""
        return self.t - self.episode_start

    # -- copy and pickle (dexwheel.sim.snapshot) ------------------------------------------------
    STATE = ("_scratch", "commands", "t", "episode_start", "schedule.resample_at", "schedule.event_at",
             "schedule.next_resample", "schedule.next_event", "model_params", "episode_params", "drive.kp_scale",
             "drive.kd_scale", "drive.kp", "drive.kd", "drive._dirty", "drive._last_bytes", "physics.qpos",
             "physics.qvel", "physics.sensordata", "physics.ctrl", "physics.monitor._last")  # fmt: skip

    def snapshot(self) -> dict:
        """What a copy of this task continues from, by reference (the env deep-copies it): every MjData or
        batch row, the task's and the drive's arrays, the events, the generators, the layer buffers, the
        actuator gains and each env's randomisation draw (its model is rebuilt from it)."""
        state = super().snapshot()
        names = []
        if self.terrain is not None:
            names += ["terrain.level", "terrain.column", "terrain.origin"]
        if self.action_term.delay is not None:
            names += ["action_term.delay._ring", "action_term.delay._head", "action_term.delay.delay"]
        if isinstance(self.physics, SerialPhysics):
            names.append("physics.data")
        else:
            names += ["physics._scratch", "physics._batch.state", "physics._batch.warning"]
        state["attrs"].update(snapshot.capture(self, names))
        return state

    def _snapshot_extra(self) -> dict:
        models = self.models[:1] if self.models_shared else self.models  # one shared model: its gains once
        return {"override_active": self.override_active, "blocks": [b.block for b in self.buffers.values()],
                "biasprm": [m.actuator_biasprm for m in models], "episode_params": self.episode_params}  # fmt: skip

    def _restore_extra(self, extra: dict) -> None:
        """The override layer, the models (split as the other task's were, rebuilt from its draws, its gains) and
        the layer buffers, before the attributes (randomizer.apply uses the scratch MjData they restore)."""
        if extra["override_active"] != self.override_active:
            self.set_override(extra["override_active"])
        biasprm = extra["biasprm"]
        if len(biasprm) > 1 and self.models_shared:  # the other task's envs had come to own their models
            self._split_models()
        if self._randomizes_models:  # the models as the draws made them (the same writes, from the nominal model)
            for model, p in zip(self.models, extra["episode_params"], strict=True):
                self.randomizer.apply(model, self._scratch, p)
        models = self.models[:1] if self.models_shared else self.models
        for model, bias in zip(models, biasprm * len(models) if len(biasprm) == 1 else biasprm, strict=True):
            model.actuator_biasprm[...] = bias  # the drive's gains as last written
        for buf, block in zip(self.buffers.values(), extra["blocks"], strict=True):
            buf.block[...] = block

    def _init_args(self) -> tuple[tuple, dict]:
        # composers and frames hold views of each other's buffers, which a plain copy would not keep
        serial = isinstance(self.physics, SerialPhysics)
        return (self.cfg, self.num_envs), {"backend": "serial" if serial else "batch",
                                           "num_threads": None if serial else self.physics.num_threads,
                                           "max_steps": self._max_steps_arg}  # fmt: skip

    def sync_data(self, i: int) -> mujoco.MjData:
        return self.physics.sync_data(i)

    def camera(self) -> str:
        """The camera that follows the base."""
        return TRACK_CAMERA

    def close(self) -> None:
        self.physics.close()


def _numbers(env: str, name: str, value: Any, n: int) -> tuple[float, ...]:
    """``value`` as ``n`` finite numbers, else a ValueError naming the option."""
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        out = ()
    if len(out) != n or not all(math.isfinite(v) for v in out):
        raise ValueError(f"{env}.reset: options[{name!r}] must be {n} finite numbers, got {value!r}")
    return out


@functools.cache
def render_model(robot: str) -> mujoco.MjModel:
    """``robot``'s wheel-leg scene with its textures, compiled once per process (renderers only read it)."""
    return build_scene(get_robot(robot))[0]


class TaskViews:
    """What the single and the vector wheel-leg env report about their task besides every env's (both hold it as
    ``task``)."""

    task: WheelLegTask

    @property
    def policy_joints(self) -> tuple[str, ...]:
        return self.task.policy_joints

    @property
    def mirror_maps(self) -> tuple[tuple[np.ndarray, np.ndarray], ...] | None:
        """The left-right mirror of observations and actions (:func:`~dexwheel.tasks.velocity.config.mirror_maps`);
        None, with a warning naming the term, when an observation term has no known mirror (a user's own)."""
        try:
            scans = {name: height_scan_mirror(**term.params) for name, term in self.task.cfg.observations.items()
                     if terms.func_path(term.func) == "dexwheel.tasks.velocity.observations:height_scan"}  # fmt: skip
            return mirror_maps(self.task.obs_layout.slices, self.task.policy_joints, scans)
        except ValueError as e:
            warnings.warn(str(e), stacklevel=2)
            return None
