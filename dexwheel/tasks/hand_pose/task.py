"""The hand-pose task over a batch of envs (:class:`G20HandTask`): the G20 tracking a goal pose, driven like
the vendor's MuJoCo bridge.

One control step (``dt = 1 / control_hz``, default 50 Hz, the rate the bridge publishes state at):

1. the action term (:mod:`.action`) checks and maps the action to goals of the 16 active joints with
   :mod:`dexwheel.control`'s G20 mappings (a rejected action raises before anything changes); they become
   the ``policy`` layer of the composer, and the composed frame, laid out by the resolver, is the command
   (:mod:`.command`; ``composer={"layers": ("policy", "hold")}`` holds a joint group at a preset);
2. the drive moves the hand toward the command (:mod:`dexwheel.sim.hand_drive`):

   * ``drive="hard_write"`` (default): slew, collision projection, write qpos (mimic joints completed)
     and the matching ctrl, ``qvel = 0``, one ``mj_forward``; no ``mj_step``. A hard-write control step
     is one physics step of length ``dt``: the bridge's 2 ms iterations between two 50 Hz state
     messages collapse into one (the same pose in free space; contacts are resolved once per control
     step, on a move of at most ``slew_rad_s * dt``). ``control_hz=500`` is exactly the bridge's loop.
     All envs' drive steps are one compiled call (:class:`~dexwheel.sim.hand_drive.HardWriteDrive`).
   * ``drive="pd"``: the slewed targets (mimic joints coupled: ``ratio * source``) go into the 21
     position actuators and ``mj_step`` runs ``round(1 / (control_hz * timestep))`` times (in the
     vector env one ``mujoco.batch.Batch`` rollout, bit-identical to plain ``mj_step`` calls); the slew
     ramps the targets per physics step. Collision projection does not apply: PD has real contacts.

   Slew: no joint, mimic joints included, moves (hard-write) or has its target moved (PD) more than
   ``slew_rad_s * dt`` per physics step; a source whose mimic moves faster (thumb_ip = 1.02 thumb_mcp)
   slews correspondingly slower, so the coupling holds exactly. ``slew_rad_s=0`` jumps;
3. the runtime's step (:class:`~dexwheel.tasks.runtime.TaskRuntime`): the named terms of the config's tables
   (terminations, rewards weighed and summed in table order, ``info["reward_<term>"]``), the step's metrics
   (:func:`.kernels.pose_metrics`), goal switches, the observation and, for PD, divergence containment.

The task is written once over a leading batch of envs; the single env is its ``N = 1`` case and the
vector env its ``N``-env case, so both produce bit-identical trajectories for the same seeds and actions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import mujoco
import numba
import numpy as np

from dexwheel.control import G20_MIMIC
from dexwheel.fields import ConfigFieldError
from dexwheel.robots.g20 import ACTIVE_JOINTS, ACTUATOR_NAMES, ALL_JOINTS, GOAL_PRESETS
from dexwheel.sim import snapshot
from dexwheel.sim.hand_drive import HardWriteDrive, PDDrive, default_threads
from dexwheel.sim.model_checks import require_actuators, require_joints
from dexwheel.sim.projection import CollisionProjector
from dexwheel.tasks import terms
from dexwheel.tasks.action_delay import ActionDelay, delay_range
from dexwheel.tasks.hand.action import G20ActionMap
from dexwheel.tasks.hand.action_path import HandActionPath
from dexwheel.tasks.hand_pose import commands
from dexwheel.tasks.hand_pose.config import G20HandConfig
from dexwheel.tasks.hand_pose.kernels import METRIC_FIELDS, pose_metrics
from dexwheel.tasks.hand_pose.scene import build_scene
from dexwheel.tasks.runtime import TaskRuntime
from dexwheel.tasks.spaces import reset_options

#: What ``reset(options=...)`` takes: a goal and a start pose (preset name, ``{joint: rad}`` or 16 radians).
RESET_OPTIONS = ("goal", "init_qpos")


class G20HandTask(TaskRuntime):
    """The pose task over a batch of ``num_envs`` envs: model, drive, goals; the step, reset and ``info`` are the
    runtime's (:class:`~dexwheel.tasks.runtime.TaskRuntime`).

    Each env has its own MjData and its own random generator (``rngs[i]``, set at reset), and every array has the
    env as its leading axis. Nothing here loops over envs in Python except the drives' MuJoCo calls (hard-write:
    ``mj_forward`` and projection trials; PD: one ``mj_step`` loop for one env, one batch rollout for several) and
    goal sampling at resets and goal switches.
    """

    NAME = "G20Hand"
    METRICS = METRIC_FIELDS
    RESET_OPTIONS = RESET_OPTIONS
    READS = {
        "qpos": "(N, 21) joint positions (rad, ALL_JOINTS order)",
        "qvel": "(N, 21) joint velocities (rad/s; hard-write: the last step's motion over dt)",
        "active_idx": "(16,) the active joints' columns of qpos",
        "goal": "(N, 16) the goal pose of the active joints (the command)",
        "command": "(N, 16) the composed active-joint targets the drive moves toward",
        "depth": "(N,) the deepest contact of the last step (m)",
        "coupling": "joint limits and mimic ratios (dexwheel.control.coupling.MimicCompletion)",
        "presets": "the goal presets' poses by name, (16,) each",
    }
    STATE = ("datas", "_scratch", "_targets", "raw_action", "start_pose", "q", "drive.depth")

    def __init__(self, cfg: G20HandConfig, num_envs: int = 1, *, max_steps: int | None = None,
                 num_threads: int | None = None) -> None:  # fmt: skip
        self.cfg = cfg
        self.num_envs = n = int(num_envs)
        self._max_steps_arg, self._threads_arg = max_steps, num_threads
        self.model, self.description = model, desc = build_scene(cfg)
        self.models = [model]
        jid = require_joints(model, ALL_JOINTS, desc.name)
        self.qpos_adr = model.jnt_qposadr[jid].astype(np.intp)
        self.dof_adr = model.jnt_dofadr[jid].astype(np.intp)
        self.ctrl_idx = require_actuators(model, ACTUATOR_NAMES, desc.name).astype(np.intp)
        self.timestep = float(model.opt.timestep)
        self.nsub = cfg.substeps(self.timestep)
        self.dt = self.nsub * self.timestep
        self.coupling = G20_MIMIC
        self.datas = [mujoco.MjData(model) for _ in range(n)]
        self._scratch = mujoco.MjData(model)
        self.projector = CollisionProjector(
            model,
            self.coupling,
            self.qpos_adr,
            cfg.collision.penetration_tol,
            cfg.collision.projection_iters,
            cfg.collision.projection_group_free,
        )
        self.actions = G20ActionMap(
            cfg.actions.kind,
            cfg.hand,
            self.coupling,
            n,
            out_of_range=cfg.actions.out_of_range,
            delta_scale=cfg.actions.delta_scale,
        )
        self.presets = {name: self.actions.preset(name) for name in GOAL_PRESETS}
        #: mapped goals -> composer layers -> resolver -> the drive's joint targets
        composer = cfg.composer
        self.command_path = HandActionPath(composer.layers, composer.hold_joints, self.presets[composer.hold_pose],
                                            (self.coupling.active_lower, self.coupling.active_upper), n)  # fmt: skip
        self.open_pose = self.presets["open"]
        self._held_idx = [ACTIVE_JOINTS.index(j) for j in self.command_path.hold_joints]
        self._held_pose = self.presets[cfg.composer.hold_pose][self._held_idx]
        na, nf, a = len(ACTIVE_JOINTS), len(ALL_JOINTS), self.actions.dim
        args = (model, self.datas, self.coupling, self.qpos_adr, self.ctrl_idx)
        #: Worker threads of several envs' steps (one env: none).
        most = numba.config.NUMBA_NUM_THREADS  # numba's pool, which runs the hard-write vector step
        if cfg.drive.kind == "hard_write" and num_threads is not None and num_threads > most:
            raise ConfigFieldError("num_threads", f"num_threads must be between 1 and {most} (numba's thread pool, "
                                   f"NUMBA_NUM_THREADS) for the hard_write drive, got {num_threads!r}", "G20Hand")  # fmt: skip
        self.num_threads = 1 if n == 1 else (num_threads or default_threads(n))
        if cfg.drive.kind == "hard_write":
            self.drive: HardWriteDrive | PDDrive = HardWriteDrive(
                *args, slew_rad_s=cfg.drive.slew, dt=self.dt, projector=self.projector, project=cfg.projection,
                num_threads=self.num_threads,
            )  # fmt: skip
            #: the joint state the terms read: the drive's written pose and its motion (hard-write)
            self.qpos, self.qvel = self.drive.qpos, self.drive.qvel
            self._projection = tuple(self.drive.state[k] for k in ("checks", "limited", "fallback"))
        else:
            self.drive = self.sim = PDDrive(
                *args, slew_rad_s=cfg.drive.slew, timestep=self.timestep, nsub=self.nsub, num_threads=self.num_threads
            )
            self.qpos, self.qvel = np.zeros((n, nf)), np.zeros((n, nf))
            self._projection = (np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool))
        #: hard-write: the applied pose (the drive's); PD: the actuator targets (both: the slew state).
        self.q = self.drive.q
        # [goal, command] per env in one block, so both tracking errors come from one subtraction
        self._targets = np.zeros((n, 2, na))
        self.goal, self.command = self._targets[:, 0], self._targets[:, 1]
        self.raw_action = np.zeros((n, a))  # the last accepted action, in its own units
        self.active_idx = self.coupling.active_idx
        #: the deepest contact of the last step (m): the drive's
        self.depth = self.drive.depth
        #: the start pose of each env's episode (reset events change it before the env starts)
        self.start_pose = np.zeros((n, na))
        self.max_episode_steps = cfg.max_episode_steps
        self._switch_steps = int(cfg.goal_switch_steps)
        delay = delay_range(cfg.actions.delay_steps, "actions.delay_steps")
        #: Latency (:mod:`dexwheel.tasks.action_delay`; None: none): the goals map a delayed action.
        self.delay = ActionDelay(delay, np.zeros((n, a))) if delay != (0, 0) else None
        events = [terms.bind_event(e, f"events.{k}")[1] for k, e in cfg.events.items()]
        self.action_space = self.actions.space
        self._start_runtime(
            cfg.observations, cfg.rewards, cfg.terminations, reset_events=events, action_dim=a, max_steps=max_steps
        )
        self.switched = self.metrics["goal_switched"]

    # -- goals: the task's command (.commands) ---------------------------------------------------
    pose_depth = commands.pose_depth
    sample_goal = commands.sample_goal
    held = commands.held
    set_goal = commands.set_goal
    _goal_from_option = commands.goal_from_option

    # -- reset -------------------------------------------------------------------------------------
    def checked_options(self, options: Any) -> dict[str, np.ndarray]:
        """``reset`` options (None or a dict of :data:`RESET_OPTIONS`) with each pose as 16 radians; raises
        ValueError naming a bad option or value, so an env can check them before it changes anything."""
        options = reset_options("G20Hand", options, RESET_OPTIONS)
        return {key: self._goal_from_option(value, key) for key, value in options.items()}

    def _before_events(self, i: int, options: Mapping[str, Any], fresh: bool) -> None:
        self.start_pose[i] = options.get("init_qpos", self.open_pose)

    def _runs_reset_events(self, options: Mapping[str, Any]) -> bool:
        return "init_qpos" not in options  # a start pose given is the start

    def _start_episode(self, i: int, rng: np.random.Generator, options: Mapping[str, Any], fresh: bool) -> None:
        q0 = self.start_pose[i].copy()
        self.goal[i] = self.held(options["goal"]) if "goal" in options else self.sample_goal(rng)
        mujoco.mj_resetData(self.model, self.datas[i])
        full = self.coupling.complete(q0, clip_mimic=True)
        if isinstance(self.drive, HardWriteDrive):
            self.drive.reset_env(i, full, q0, self.open_pose)
        else:
            self.drive.set_pose(i, full)
            self.qpos[i] = full
            self.qvel[i] = 0.0
        self.q[i] = q0
        self.command[i] = q0
        self.raw_action[i] = self.actions.hold_action(q0)
        if self.delay is not None:  # until k actions are given, the one that holds the start pose
            d = self.delay
            d.reset(i, self.raw_action[i], int(rng.integers(d.low, d.high + 1)) if d.random else None)
        self.last_action[i] = self.actions.normalize(self.raw_action[i])

    def _reset_metrics(self, idx: np.ndarray | slice, info: dict[str, np.ndarray]) -> None:
        q_act = self.qpos[idx][:, self.active_idx]
        info["tracking_error"] = np.abs(q_act - self.goal[idx]).max(axis=1)
        info["mean_joint_error"] = np.abs(q_act - self.goal[idx]).mean(axis=1)
        info["command_error"] = np.abs(q_act - self.command[idx]).max(axis=1)
        info["max_penetration"] = self.drive.depth[idx].copy()

    # -- step --------------------------------------------------------------------------------------
    def _apply_action(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The action path, one way: the G20 mapping of :mod:`dexwheel.control` (checks and maps the action,
        stacklevel of its clip warnings: ``env.step``'s caller)."""
        return self.actions.map(actions, self.command, stacklevel=5, delay=self.delay)

    def _advance(self, mapped: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Composer layers -> resolver -> the drive; the joint state the terms read."""
        goals, raw, self._clipped = mapped
        self.command[:] = self.command_path(goals)
        self.action[:] = self.actions.normalize(raw)
        self.raw_action[:] = raw
        self.drive.step(self.command)
        if self.sim is not None:  # PD: the joints read from the physics
            self.qpos[:] = self.drive.qpos[:, self.qpos_adr]
            self.qvel[:] = self.drive.qvel[:, self.dof_adr]

    def _write_metrics(self, block: np.ndarray) -> None:
        pose_metrics(block, self.qpos, self.active_idx, self._targets, self.depth, *self._projection, self._clipped)

    def _update_commands(self) -> None:
        if self._switch_steps:
            commands.switch_goals(self)

    def camera(self) -> dict[str, Any]:
        """The vendor bridge's compare view (mirrored for the right hand)."""
        view = self.description.camera
        return dataclasses.asdict(view) if view is not None else {}

    # -- copy and pickle (dexwheel.sim.snapshot) ----------------------------------------------------
    def _init_args(self) -> tuple[tuple, dict[str, Any]]:
        return (self.cfg, self.num_envs), {"max_steps": self._max_steps_arg, "num_threads": self._threads_arg}

    def snapshot(self) -> dict[str, Any]:
        """What a copy of this task continues from: every MjData, the drive's per-env records (their C addresses
        are never restored), the PD slew targets, physics rows and divergence counts, the generators."""
        state = super().snapshot()
        names = ["drive.state"] if self.sim is None else ["qpos", "qvel", "drive.control", "drive.monitor._last"]
        if self.delay is not None:
            names += ["delay._ring", "delay._head", "delay.delay"]
        if self.sim is not None and self.drive.batch is not None:
            names += ["drive.batch._batch.state", "drive.batch._batch.warning"]
        state["attrs"].update(snapshot.capture(self, names))
        return state

    def close(self) -> None:
        if isinstance(self.drive, PDDrive):
            self.drive.close()
