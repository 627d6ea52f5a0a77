"""The hand-pose task over a batch of envs (:class:`G20HandTask`): the G20 tracking a goal pose, driven like
the vendor's MuJoCo bridge.

One control step (``dt = 1 / control_hz``, default 50 Hz, the rate the bridge publishes state at):

1. the action term (:mod:`.action`) checks and maps the action to goals of the 16 active joints with
   :mod:`dexwheel.control`'s G20 mappings (a rejected action raises before anything changes); they become
   the ``policy`` layer of the composer, and the composed frame, laid out by the resolver, is the command
   (:mod:`.command`; ``composer_layers=("policy", "hold")`` holds a joint group at a preset);
2. the drive moves the hand toward the command (:mod:`dexwheel.sim.hand_drive`):

   * ``drive="hard_write"`` (default): slew, collision projection, write qpos (mimic joints completed)
     and the matching ctrl, ``qvel = 0``, one ``mj_forward``; no ``mj_step``. A hard-write control step
     is one physics step of length ``dt``: the bridge's 2 ms iterations between two 50 Hz state
     messages collapse into one (the same pose in free space; contacts are resolved once per control
     step, on a move of at most ``slew_rad_s * dt``). ``control_hz=500`` is exactly the bridge's loop.
     All envs' drive steps are one compiled call (:func:`.kernels.hard_write_advance`).
   * ``drive="pd"``: the slewed targets (mimic joints coupled: ``ratio * source``) go into the 21
     position actuators and ``mj_step`` runs ``round(1 / (control_hz * timestep))`` times (in the
     vector env one ``mujoco.batch.Batch`` rollout, bit-identical to plain ``mj_step`` calls); the slew
     ramps the targets per physics step. Collision projection does not apply: PD has real contacts.

   Slew: no joint, mimic joints included, moves (hard-write) or has its target moved (PD) more than
   ``slew_rad_s * dt`` per physics step; a source whose mimic moves faster (thumb_ip = 1.02 thumb_mcp)
   slews correspondingly slower, so the coupling holds exactly. ``slew_rad_s=0`` jumps;
3. the named terms of the config's tables (:mod:`dexwheel.tasks.terms`): terminations, rewards (weighed
   and summed in table order; ``info["reward_<term>"]``), the step's metrics, the observation; then goal
   switches and, for PD, divergence containment.

The task is written once over a leading batch of envs; the single env is its ``N = 1`` case and the
vector env its ``N``-env case, so both produce bit-identical trajectories for the same seeds and actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mujoco
import numpy as np
from gymnasium import spaces

from dexwheel.control import G20_MIMIC
from dexwheel.jit import compiled_for
from dexwheel.robots.g20 import ACTIVE_JOINTS, ACTUATOR_NAMES, ALL_JOINTS, GOAL_PRESETS
from dexwheel.sim import snapshot
from dexwheel.sim.divergence import all_finite, contain
from dexwheel.sim.hand_drive import (
    HardWriteDrive,
    PDDrive,
    default_threads,
    hard_write_dtype,
    hard_write_params_dtype,
    hard_write_sizes,
)
from dexwheel.sim.model_checks import require_actuators, require_joints
from dexwheel.sim.projection import CollisionProjector
from dexwheel.tasks import terms
from dexwheel.tasks.action_delay import ActionDelay, delay_range
from dexwheel.tasks.hand_pose import commands
from dexwheel.tasks.hand_pose.action import G20ActionMap
from dexwheel.tasks.hand_pose.action_path import HandActionPath
from dexwheel.tasks.hand_pose.config import G20HandConfig
from dexwheel.tasks.hand_pose.kernels import (
    METRIC_FIELDS,
    METRIC_KEYS,
    finish_step,
    hard_write_advance,
    hard_write_advance_threaded,
    task_dtype,
    task_params_dtype,
    threads_usable,
    use_threads,
)
from dexwheel.tasks.hand_pose.scene import build_scene
from dexwheel.tasks.kernels import any_row
from dexwheel.tasks.manager import TermRunner
from dexwheel.tasks.spaces import reset_options

#: What ``reset(options=...)`` takes: a goal and a start pose (preset name, ``{joint: rad}`` or 16 radians).
RESET_OPTIONS = ("goal", "init_qpos")
_DTYPES = {float: np.float64, int: np.int64, bool: np.bool_}


class G20HandTask:
    """The whole task over a batch of ``num_envs`` envs: model, drive, goals, rewards, observations.

    Each env has its own MjData and its own random generator (``rngs[i]``, set at reset), and every
    array has the env as its leading axis. Nothing here loops over envs in Python except the drives'
    MuJoCo calls (hard-write: ``mj_forward`` and projection trials; PD: one ``mj_step`` loop for one env,
    one batch rollout for several) and goal sampling at resets and goal switches.
    """

    def __init__(self, cfg: G20HandConfig, num_envs: int = 1) -> None:
        self.cfg = cfg
        self.num_envs = n = int(num_envs)
        self.model, self.description = model, desc = build_scene(cfg)
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
            model, self.coupling, self.qpos_adr, cfg.penetration_tol, cfg.projection_iters, cfg.projection_group_free
        )
        self.actions = G20ActionMap(
            cfg.action, cfg.hand, self.coupling, n, out_of_range=cfg.out_of_range, delta_scale=cfg.delta_scale
        )
        self.presets = {name: self.actions.preset(name) for name in GOAL_PRESETS}
        #: mapped goals -> composer layers -> resolver -> the drive's joint targets
        self.command_path = HandActionPath(cfg.composer_layers, cfg.hold_joints, self.presets[cfg.hold_pose],
                                            (self.coupling.active_lower, self.coupling.active_upper), n)  # fmt: skip
        self.open_pose = self.presets["open"]
        self._held_idx = [ACTIVE_JOINTS.index(j) for j in self.command_path.hold_joints]
        self._held_pose = self.presets[cfg.hold_pose][self._held_idx]
        na = len(ACTIVE_JOINTS)
        nf = len(ALL_JOINTS)
        a = self.actions.dim
        hard_write = cfg.drive == "hard_write"
        #: One record per env (kernels.task_dtype; hard-write: the drive's record nested), one record
        #: of settings (task_params_dtype): the task's and the drive's arrays are views of their fields.
        drive_records = (
            (hard_write_dtype(na, nf), hard_write_params_dtype(*hard_write_sizes(self.coupling, self.projector)))
            if hard_write
            else (None, None)
        )
        self.state = state = np.zeros(n, dtype=task_dtype(na, nf, a, drive_records[0]))
        self.params = p = np.zeros(1, dtype=task_params_dtype(drive_records[1]))
        args = (model, self.datas, self.coupling, self.qpos_adr, self.ctrl_idx)
        #: Worker threads of several envs' steps (one env: none).
        self.num_threads = 1 if n == 1 else (cfg.num_threads or default_threads(n))
        if hard_write:
            self.drive: HardWriteDrive | PDDrive = HardWriteDrive(
                *args, slew_rad_s=cfg.slew, dt=self.dt, projector=self.projector, project=cfg.projection,
                state=state["drive"], params=p["drive"],
            )  # fmt: skip
        else:
            self.drive = PDDrive(
                *args, slew_rad_s=cfg.slew, timestep=self.timestep, nsub=self.nsub, num_threads=self.num_threads
            )
        #: hard-write: the applied pose (the drive's); PD: the actuator targets (both: the slew state).
        self.q = self.drive.q
        # [goal, command] per env in one block, so both tracking errors come from one subtraction
        self._targets = state["targets"]
        self.goal = self._targets[:, 0]
        self.command = self._targets[:, 1]
        self.raw_action = state["raw_action"]
        #: the accepted action scaled to [-1, 1] (the terms' ``action``) and the one before it; after a step
        #: ``last_action`` is the action just applied (what the observation shows)
        self.action = np.zeros((n, a))
        self.last_action = state["last_action"]
        self.qpos = state["qpos"]
        self.qvel = state["qvel"]
        self.elapsed = state["elapsed"]
        self.active_idx = self.coupling.active_idx
        #: the deepest contact of the last step (m): the drive's
        self.depth = self.drive.depth
        self.rngs: list[np.random.Generator | None] = [None] * n
        #: the start pose of each env's episode (reset events change it before the env starts)
        self.start_pose = np.zeros((n, na))
        self.max_episode_steps = cfg.max_episode_steps
        self._max_steps = cfg.max_episode_steps or np.iinfo(np.int64).max
        p["inv_dt"] = 1.0 / self.dt
        p["workers"] = self.num_threads
        self._hard_write_step = hard_write_advance_threaded if self.num_threads > 1 else hard_write_advance
        # projection's counts for the info (hard-write: the drive's record; PD: always 0)
        drive_state = state["drive"] if hard_write else np.zeros(n, dtype=[("checks", np.int64), ("limited", np.int64),
                                                                           ("fallback", np.bool_)])  # fmt: skip
        self._projection = (drive_state["checks"], drive_state["limited"], drive_state["fallback"])
        # the last step's results: the task's own buffers (step() hands out copies)
        self.reward = np.zeros(n)
        self.terminated = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self._any_diverged = False  # PD: whether the last step flagged a divergence
        self._switch_steps = int(cfg.goal_switch_steps)
        #: hard_write_advance's arguments after the targets and actions (None for PD)
        self._hard_write_args = (state, p) if hard_write else None
        #: the step kernels' compiled functions: see :func:`compiled_for`
        self._compiled: dict[Any, Any] = {}
        self._build_terms()

    # -- terms -------------------------------------------------------------------------------------
    def _build_terms(self) -> None:
        """Bind the config's term tables (:class:`~dexwheel.tasks.manager.TermRunner`: observation columns, reward
        weights, termination flags), the reset events and the info keys. Every term is called once here on the
        built state (a bad path, shape or value fails now, naming it)."""
        cfg, n = self.cfg, self.num_envs
        self.terms = TermRunner(self, n, cfg.observations, cfg.rewards, cfg.terminations)
        delay = delay_range(cfg.action_delay_steps, "action_delay_steps")
        #: Latency (:mod:`dexwheel.tasks.action_delay`; None: none): the goals map a delayed action.
        self.delay = ActionDelay(delay, np.zeros((n, self.actions.dim))) if delay != (0, 0) else None
        self.obs_slices, self.obs_dim = self.terms.layout.slices, self.terms.layout.dim
        self.observation_space = spaces.Box(-np.inf, np.inf, (self.obs_dim,), np.float32)
        self.obs = np.zeros((n, self.obs_dim), dtype=np.float32)
        self.term_flags = np.zeros((n, len(cfg.terminations)), dtype=bool)
        self.reward_coef = self.terms.reward_coef
        self._events = [terms.bind_event(e, f"events.{k}")[1] for k, e in cfg.events.items()]
        fields = [*((f"reward_{k}", float) for k in cfg.rewards), *METRIC_FIELDS,
                  *((f"terminated_{k}", bool) for k in cfg.terminations)]  # fmt: skip
        self.info_keys = tuple(k for k, _ in fields)
        self.info_types = tuple(kind for _, kind in fields)
        #: The last step's ``info`` values per env, one row each (:attr:`info_keys` order).
        self.values = np.zeros((n, len(fields)))
        nr = len(cfg.rewards)
        self.clipped, self.switched, self.diverged = (self.values[:, nr + METRIC_KEYS.index(k)]
                                                      for k in ("action_clipped", "goal_switched", "diverged"))  # fmt: skip

    def _evaluate_terms(self) -> None:
        """Terminations, then the reward terms weighed and summed in table order, then the step's metrics."""
        flags = self.term_flags
        self.terms.terminations(flags)
        if flags.shape[1]:
            any_row(flags, self.terminated)
        values = self.values
        self.terms.rewards(values)
        finish_step(values, self.reward_coef, self.reward, self.qpos, self.active_idx, self._targets, self.depth,
                    *self._projection, flags)  # fmt: skip

    def compute_obs(self, out: np.ndarray | None = None) -> np.ndarray:
        """The observation terms, processed, into ``out`` (default: the task's ``obs``), every env."""
        return self.terms.compute_obs(self.obs if out is None else out)

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

    def reset_env(self, i: int, rng: np.random.Generator, options: Mapping[str, np.ndarray] | None = None) -> None:
        """Start a new episode in env ``i`` with generator ``rng`` (kept for the episode's draws); ``options``
        as :meth:`checked_options` returns them (the envs check them before anything changes)."""
        options = options or {}
        self.rngs[i] = rng
        if "init_qpos" in options:
            self.start_pose[i] = options["init_qpos"]
        else:
            self.start_pose[i] = self.open_pose
            for event in self._events:
                event(self, i, rng)
        q0 = self.start_pose[i].copy()
        self.goal[i] = self.held(options["goal"]) if "goal" in options else self.sample_goal(rng)
        d = self.datas[i]
        mujoco.mj_resetData(self.model, d)
        full = self.coupling.complete(q0, clip_mimic=True)
        if isinstance(self.drive, HardWriteDrive):
            self.drive.reset_env(i, full, q0, self.open_pose)
        else:
            self.drive.set_pose(i, full)
        self.q[i] = q0
        self.command[i] = q0
        self.raw_action[i] = self.actions.hold_action(q0)
        if self.delay is not None:  # until k actions are given, the one that holds the start pose
            d = self.delay
            d.reset(i, self.raw_action[i], int(rng.integers(d.low, d.high + 1)) if d.random else None)
        self.last_action[i] = self.actions.normalize(self.raw_action[i])
        self.qpos[i] = full
        self.qvel[i] = 0.0
        self.elapsed[i] = 0
        self.terms.reset(i, [rng])

    def reset_info(self, idx: np.ndarray | slice) -> dict[str, np.ndarray]:
        """Info of freshly reset envs: every step key, reward terms 0 (so vector infos stay aligned)."""
        q_act = self.qpos[idx][:, self.active_idx]
        k = q_act.shape[0]
        info = {
            key: np.zeros(k, dtype=_DTYPES[kind]) for key, kind in zip(self.info_keys, self.info_types, strict=True)
        }
        info["tracking_error"] = np.abs(q_act - self.goal[idx]).max(axis=1)
        info["mean_joint_error"] = np.abs(q_act - self.goal[idx]).mean(axis=1)
        info["command_error"] = np.abs(q_act - self.command[idx]).max(axis=1)
        info["max_penetration"] = self.drive.depth[idx].copy()
        return info

    # -- step --------------------------------------------------------------------------------------
    def advance(self, actions: Any) -> None:
        """One control step of every env, results in the task's buffers (``obs``, ``reward``, ``info``,
        ``truncated``); raises, changing nothing, on an invalid action.

        The action path, one way: the G20 mapping of :mod:`dexwheel.control` (checks and maps the action,
        stacklevel of its clip warnings: ``env.step``'s caller) -> composer layers -> resolver -> the drive.
        """
        goals, raw, clipped = self.actions.map(actions, self.command, stacklevel=4, delay=self.delay)
        # -- from here on the step commits --------------------------------------------------------
        command = self.command_path(goals)
        self.action[:] = self.actions.normalize(raw)
        args = self._hard_write_args
        if args is not None:  # the drive's step in one compiled call
            step = self._hard_write_step
            if self.num_threads > 1:
                if threads_usable():
                    use_threads(self.num_threads)
                else:  # a forked child of a process whose OpenMP pool ran: the same results, one thread
                    step = hard_write_advance
            run = self._compiled.get(step)
            if run is None:
                run = self._compiled[step] = compiled_for(step, command, raw, *args)
            run(command, raw, *args)
        else:
            self._advance_pd(command, raw)
        np.greater_equal(self.elapsed, self._max_steps, out=self.truncated)
        self._evaluate_terms()
        self.last_action[:] = self.action  # the action just applied is "last" for the observation
        self.terms.advance()
        self.compute_obs()
        self.clipped[:] = clipped
        if self._switch_steps:
            self._switch_goals()
        if args is None:
            diverged = self.drive.monitor.check(self.obs, self.reward)
            if diverged is not None or self._any_diverged:
                self._contain(diverged)
        elif not (all_finite(self.obs) and all_finite(self.reward)):  # hard-write integrates nothing: a term's value
            self.terms.check_finite(np.ones(self.num_envs, dtype=bool), self.values, self.obs, int(self.elapsed.max()))

    _switch_goals = commands.switch_goals

    def _advance_pd(self, command: np.ndarray, raw: np.ndarray) -> None:
        self.command[:] = command
        drive = self.drive
        drive.step(command)
        self.qpos[:] = drive.qpos[:, self.qpos_adr]
        self.qvel[:] = drive.qvel[:, self.dof_adr]
        self.raw_action[:] = raw
        self.elapsed += 1

    def _contain(self, diverged: np.ndarray | None) -> None:
        """PD envs whose physics blew up (:mod:`dexwheel.sim.divergence`): their episode ends as
        truncated with ``info["diverged"]``, their reward and reward terms are 0, their observation finite."""
        self._any_diverged = diverged is not None
        self.diverged[:] = 0.0 if diverged is None else diverged
        if diverged is None:
            return
        d = self.drive
        physics_ok = ~d.monitor.warned & np.isfinite(d.qpos).all(axis=1) & np.isfinite(d.qvel).all(axis=1)
        self.terms.check_finite(diverged & physics_ok, self.values, self.obs, int(self.elapsed.max()))
        self.truncated |= diverged
        contain(diverged, self.reward, self.values[:, : len(self.cfg.rewards)], self.values, self.obs)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray], int]:
        """:meth:`advance`, returning fresh ``(obs, reward, terminated, truncated, info)`` arrays and
        how many envs' episodes ended."""
        self.advance(actions)
        info = {key: (col if kind is float else col.astype(_DTYPES[kind]))
                for key, kind, col in zip(self.info_keys, self.info_types, self.values.T.copy(), strict=True)}  # fmt: skip
        ended = int(np.count_nonzero(self.terminated | self.truncated))
        return self.obs.copy(), self.reward.copy(), self.terminated.copy(), self.truncated.copy(), info, ended

    def step_info_of(self, i: int) -> dict[str, Any]:
        """Env ``i``'s last step ``info`` as plain numbers (the single env's)."""
        row = self.values[i].tolist()
        return {key: kind(v) for key, kind, v in zip(self.info_keys, self.info_types, row, strict=True)}

    def observation(self, idx: np.ndarray | list[int] | slice = slice(None)) -> np.ndarray:
        """The observation of the envs ``idx`` as they are now (fresh rows; the task's ``obs`` unchanged)."""
        return self.compute_obs(np.empty_like(self.obs))[idx]

    # -- copy and pickle (dexwheel.sim.snapshot) ----------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """What a copy of this task continues from, by reference (the env deep-copies it): every MjData,
        the per-env records (their C addresses are never restored), the PD slew targets, physics rows and
        divergence counts, the generators."""
        names = ["datas", "_scratch", "state", "obs", "values", "reward", "terminated", "truncated", "start_pose", "q",
                 "rngs", "_any_diverged", "drive.depth"]  # fmt: skip
        if self.delay is not None:
            names += ["delay._ring", "delay._head", "delay.delay"]
        if isinstance(self.drive, PDDrive):
            names += ["drive.control", "drive.monitor._last"]
            if self.drive.batch is not None:
                names += ["drive.batch._batch.state", "drive.batch._batch.warning"]
        return {"attrs": snapshot.capture(self, names), "terms": self.terms.state()}

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from another task's :meth:`snapshot` (same config), written into this task's own objects."""
        snapshot.restore(self, state["attrs"])
        self.terms.load_state(state["terms"])

    def __reduce__(self) -> tuple:
        # its records hold C addresses of its own MjData, which a plain copy would keep
        return snapshot.reduce_task(self, self.cfg, self.num_envs)

    def close(self) -> None:
        if isinstance(self.drive, PDDrive):
            self.drive.close()
