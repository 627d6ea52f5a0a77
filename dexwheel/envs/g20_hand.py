"""G20Hand-v0: track a goal pose with the LinkerHand G20, driven like the vendor's MuJoCo bridge.

One control step (``dt = 1 / control_hz``, default 50 Hz, the rate the bridge publishes state at):

1. the action is checked and mapped to goals of the 16 active joints by :mod:`dexwheel.control`'s G20
   mappings (vectorised; a rejected action raises before anything changes), which become the ``policy``
   layer of a :class:`~dexwheel.control.JointCommandComposer`; the composed frame, laid out by a
   :class:`~dexwheel.control.JointCommandResolver`, is the command (:mod:`dexwheel.envs.g20_command`;
   ``composer_layers=("policy", "hold")`` holds a joint group at a preset);
2. the drive moves the hand toward the command (:mod:`dexwheel.sim.hand_drive`):

   * ``drive="hard_write"`` (default): slew, collision projection, write qpos (mimic joints completed)
     and the matching ctrl, ``qvel = 0``, one ``mj_forward``; no ``mj_step``. A hard-write control step
     is one physics step of length ``dt``: the bridge's 2 ms iterations between two 50 Hz state
     messages collapse into one (the same pose in free space; contacts are resolved once per control
     step, on a move of at most ``slew_rad_s * dt``). ``control_hz=500`` is exactly the bridge's loop.
   * ``drive="pd"``: the slewed targets (mimic joints coupled: ``ratio * source``) go into the 21
     position actuators and ``mj_step`` runs ``round(1 / (control_hz * timestep))`` times (in the
     vector env one ``mujoco.batch.Batch`` rollout, bit-identical to plain ``mj_step`` calls); the slew
     ramps the targets per physics step. Collision projection does not apply: PD has real contacts.

   Slew: no joint, mimic joints included, moves (hard-write) or has its target moved (PD) more than
   ``slew_rad_s * dt`` per physics step; a source whose mimic moves faster (thumb_ip = 1.02 thumb_mcp)
   slews correspondingly slower, so the coupling holds exactly. ``slew_rad_s=0`` jumps;
3. reward terms (``info["reward_<term>"]``, reward == their sum), observation, truncation: one compiled
   loop over the envs (:mod:`dexwheel.envs.g20_kernels`).

The task logic is written once over a leading batch of envs (:class:`G20HandTask`); the single env is
its ``N = 1`` case and :class:`dexwheel.envs.g20_vector.G20HandVectorEnv` its ``N``-env case, so both
produce bit-identical trajectories for the same seeds and actions.

Observation (float32, see ``obs_slices``): ``qpos`` (21, ALL_JOINTS order), ``qvel`` (21; for hard-write
the joint motion of the last step divided by ``dt``, since the written ``qvel`` is 0), ``goal`` (16,
ACTIVE_JOINTS order), ``last_action`` (the previous action scaled to [-1, 1]: 16 values, 20 for ``sdk255``).

Reward terms (mjlab names): ``joint_pos_tracking = tracking_weight * exp(-mean((q - goal)^2) /
tracking_std^2)`` over the active joints and ``joint_pos_tracking_fine``, the same with
``tracking_fine_weight`` and ``tracking_fine_std``; ``penetration = -penetration_weight * max_penetration`` (m;
PD: the deepest contact over the control step's physics steps); ``action_rate_l2 = -action_rate_weight *
sum((a - a_prev)^2)`` on the [-1, 1]-scaled actions (a fresh episode's previous action is the one that
holds the start pose).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium import spaces

from dexwheel.control import (
    G20_MIMIC,
    ActionClipWarning,
    ActionError,
    G20SdkMapping,
    g20_delta_mapping,
    g20_nominal_mapping,
    g20_normalized_mapping,
)
from dexwheel.control.coupling import MimicCompletion
from dexwheel.control.mappings import invalid_entries
from dexwheel.envs import g20_kernels
from dexwheel.envs.g20_cfg import (  # the config, MuJoCo-free; re-exported here
    ACTIONS,
    DRIVES,
    GOAL_MODES,  # noqa: F401
    HANDS,  # noqa: F401
    OUT_OF_RANGE,  # noqa: F401
    RENDER_MODES,
    REWARD_TERMS,
    G20HandConfig,
    _bad,
    _choice,
)
from dexwheel.envs.g20_command import HandCommandPath
from dexwheel.envs.g20_kernels import (
    CLIPPED,
    DIVERGED,
    INFO_KEYS,
    SWITCHED,
    gather_results,
    hard_write_advance,
    hard_write_advance_threaded,
    info_arrays,
    info_dict,
    task_dtype,
    task_params_dtype,
    threads_usable,
    use_threads,
    zero_info,
)
from dexwheel.envs.gym_api import IntegerBox, closed_error, not_ready, reset_options
from dexwheel.jit import compiled_for
from dexwheel.robots import get_robot
from dexwheel.robots.g20 import (
    ACTIVE_JOINTS,
    ACTUATOR_NAMES,
    ALL_JOINTS,
    GOAL_PRESETS,
    SDK_CHANNELS,
    SDK_MAX_VALUE,
)
from dexwheel.robots.mjcf import VISUAL_GROUP, build_spec
from dexwheel.sim import snapshot
from dexwheel.sim.divergence import contain
from dexwheel.sim.hand_drive import (
    HardWriteDrive,
    PDDrive,
    default_threads,
    hard_write_dtype,
    hard_write_params_dtype,
    hard_write_sizes,
)
from dexwheel.sim.model_checks import check_robot_model, require_actuators, require_joints
from dexwheel.sim.projection import CollisionProjector, add_chain_contact_sensors, add_deepest_contact_sensor
from dexwheel.sim.rendering import add_studio
from dexwheel.sim.snapshot import Reconstructible, config_kwargs

#: What ``reset(options=...)`` takes: a goal and a start pose (preset name, ``{joint: rad}`` or 16 radians).
RESET_OPTIONS = ("goal", "init_qpos")
#: Height (m) of the rendered floor, just below the wrist (render-only: the floor takes no part in the physics).
FLOOR_Z = -0.02
assert INFO_KEYS[: len(REWARD_TERMS)] == tuple(f"reward_{t}" for t in REWARD_TERMS)


class G20ActionMap:
    """Batched actions -> commanded active-joint positions, ``(N, A) -> (N, 16)``.

    The arithmetic is the G20 mappings' of :mod:`dexwheel.control` (their pure, batch-capable
    ``goals()``, the one implementation every drive, the vector env and the bridge use); their state (the
    previous goal) lives in the task's ``command`` array instead, so that a rejected action changes nothing.
    Input checks run batched here with the mappings' own rule (:func:`~dexwheel.control.mappings.invalid_entries`);
    an invalid row is handed to the mapping itself, which raises with its own message (field, joint, range).
    """

    def __init__(self, cfg: G20HandConfig, coupling: MimicCompletion, num_envs: int) -> None:
        self.kind = cfg.action
        self.num_envs = num_envs
        self.clip = cfg.out_of_range == "clip"
        self.lower = coupling.active_lower.copy()
        self.upper = coupling.active_upper.copy()
        self.half_span = 0.5 * (self.upper - self.lower)
        self.delta_scale = np.full(len(ACTIVE_JOINTS), float(cfg.delta_scale))
        self._sdk = G20SdkMapping(cfg.hand)
        #: {joint: radians} actions and configured goals check their names and values here, whatever the kind
        self.nominal = g20_nominal_mapping()
        if self.kind == "sdk255":
            self.dim = SDK_CHANNELS
            self.space = IntegerBox(0, SDK_MAX_VALUE, (SDK_CHANNELS,))  # the protocol's integers: samples are valid
            self.low = np.zeros(SDK_CHANNELS)
            self.high = np.full(SDK_CHANNELS, float(SDK_MAX_VALUE))
            self.reference: Any = self._sdk
        elif self.kind == "nominal":
            self.dim = len(ACTIVE_JOINTS)
            # float32 bounds rounded inward, so every sample of the space is within the joint limits
            low = self.lower.astype(np.float32)
            high = self.upper.astype(np.float32)
            low = np.where(low.astype(np.float64) < self.lower, np.nextafter(low, np.float32(np.inf)), low)
            high = np.where(high.astype(np.float64) > self.upper, np.nextafter(high, np.float32(-np.inf)), high)
            self.space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
            self.low, self.high = self.lower, self.upper
            self.reference = self.nominal
        else:
            self.dim = len(ACTIVE_JOINTS)
            self.space = spaces.Box(-1.0, 1.0, (self.dim,), np.float32)
            self.low = np.full(self.dim, -1.0)
            self.high = np.full(self.dim, 1.0)
            self.reference = (
                g20_normalized_mapping() if self.kind == "normalized" else g20_delta_mapping(self.delta_scale)
            )
        self.integer = self.reference.integer  # whole numbers only (sdk255): the control mapping's rule
        self.batch_shape = (num_envs, self.dim)
        #: ``normalize(raw) = (raw - sub) / div - one``
        if self.kind == "sdk255":
            self.norm_params = (np.zeros(self.dim), np.full(self.dim, 0.5 * SDK_MAX_VALUE), 1.0)
        elif self.kind == "nominal":
            self.norm_params = (self.lower.copy(), self.half_span.copy(), 1.0)
        else:  # already in [-1, 1]: the identity, exactly (x - 0 = x, x / 1 = x)
            self.norm_params = (np.zeros(self.dim), np.ones(self.dim), 0.0)

    # -- representation helpers ------------------------------------------------------------------
    def normalize(self, raw: np.ndarray) -> np.ndarray:
        """Actions in their own units -> [-1, 1] (for the observation and the action-rate term)."""
        sub, div, one = self.norm_params
        return (raw - sub) / div - one

    def hold_action(self, q_active: np.ndarray) -> np.ndarray:
        """The action that commands (about) ``q_active``: the 'previous action' of a fresh episode."""
        if self.kind == "normalized":
            return np.clip((q_active - self.lower) / self.half_span - 1.0, -1.0, 1.0)
        if self.kind == "nominal":
            return np.clip(q_active, self.lower, self.upper)
        if self.kind == "sdk255":
            return self._sdk.to_sdk(q_active).astype(np.float64)
        return np.zeros(self.dim)

    def preset(self, name: str) -> np.ndarray:
        """Active joint positions of a goal preset (its SDK command through the hand's table)."""
        return self._sdk(GOAL_PRESETS[name])[list(ALL_JOINTS.index(j) for j in ACTIVE_JOINTS)].copy()

    # -- mapping ---------------------------------------------------------------------------------
    def nominal_dict(self, targets: Mapping[str, float], previous: np.ndarray) -> np.ndarray:
        """A ``{joint: radians}`` action -> a full nominal action row; joints not named keep ``previous``
        (an unknown or mimic joint raises; ranges are checked with the step's ``out_of_range`` policy)."""
        return self.nominal.row(targets, previous)

    def as_batch(self, actions: Any) -> np.ndarray:
        """``actions`` as a C-contiguous float64 ``(N, A)`` array; a clear error for anything else."""
        try:
            arr = np.ascontiguousarray(actions, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ActionError(f"action ({self.kind}) must be numeric with shape {self._shape_text()}: {exc}") from None
        if arr.shape != self.batch_shape:
            raise ActionError(self._shape_error(arr.shape))
        return arr

    def _shape_error(self, shape: tuple[int, ...]) -> str:
        got = shape[1:] if self.num_envs == 1 and len(shape) >= 1 else shape
        return f"action ({self.kind}) must have shape {self._shape_text()}, got {got}"

    def _shape_text(self) -> str:
        return f"({self.dim},)" if self.num_envs == 1 else f"({self.num_envs}, {self.dim})"

    def _raise_for_row(self, i: int, row: np.ndarray) -> None:
        """Let the control mapping produce its message for an invalid row (it raises before any change)."""
        try:
            if self.kind == "nominal":
                self.reference({n: float(v) for n, v in zip(ACTIVE_JOINTS, row, strict=True)})
            else:
                self.reference(row)
        except ActionError as exc:
            if self.num_envs > 1:
                raise type(exc)(f"env {i}: {exc}") from None
            raise
        bad = np.flatnonzero(~((row >= self.low) & (row <= self.high)))
        raise ActionError(
            f"env {i}: action[{int(bad[0])}] = {row[bad[0]]!r} is outside [{self.low[bad[0]]}, {self.high[bad[0]]}]"
        )

    def map(self, actions: Any, command: np.ndarray, previous: np.ndarray,
            stacklevel: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """``(new command (N, 16), accepted raw action (N, A), clipped entries per env)``; no input is modified."""
        a = self.as_batch(actions)
        clipped = np.zeros(self.num_envs, dtype=np.int64)
        if invalid_entries(a, self.low, self.high, self.integer).any():  # the control mappings' rule
            a, clipped = self.repair(a, previous, stacklevel=stacklevel + 1)
        # the control mappings' own arithmetic, batched; their state (previous goal) is the task's `command`
        new = self.reference.goals(a, command)
        return new, a, clipped

    def repair(self, a: np.ndarray, previous: np.ndarray, stacklevel: int = 4) -> tuple[np.ndarray, np.ndarray]:
        """Actions with an out-of-range/NaN/inf entry: raise :class:`ActionError` naming it, or with
        ``out_of_range="clip"`` return ``(clipped copy, clipped entries per env)`` (NaN holds ``previous``).
        ``stacklevel``: the warning's, pointing at the caller of ``env.step``. sdk255: fractions are
        invalid too, and clipping rounds them to the nearest integer."""
        bad = invalid_entries(a, self.low, self.high, self.integer)
        if not self.clip:
            i = int(np.flatnonzero(bad.any(axis=1))[0])
            self._raise_for_row(i, a[i])
        a = a.astype(np.float64)  # a copy
        nan = np.isnan(a)
        hold = np.zeros_like(a) if self.kind == "delta" else previous
        a[nan] = hold[nan]
        np.clip(a, self.low, self.high, out=a)
        if self.integer:
            np.rint(a, out=a)
        clipped = bad.sum(axis=1)
        what = "out-of-range/non-finite/fractional" if self.integer else "out-of-range/non-finite"
        warnings.warn(
            f"G20Hand ({self.kind} action): clipped {int(clipped.sum())} {what} entries",
            ActionClipWarning,
            stacklevel=stacklevel,
        )
        return a, clipped


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
        desc = get_robot(f"g20_{cfg.hand}")
        if cfg.contact_excludes is not None:
            bodies = {b.name for b in desc.bodies}
            unknown = sorted({b for pair in cfg.contact_excludes for b in pair} - bodies)
            if unknown:
                raise _bad(
                    "contact_excludes", f"contact_excludes names unknown bodies {unknown}; bodies: {sorted(bodies)}"
                )
            desc = dataclasses.replace(desc, contact_excludes=cfg.contact_excludes)
        self.description = desc
        spec = build_spec(desc)
        add_deepest_contact_sensor(spec)  # both drives read their penetration from it
        add_chain_contact_sensors(spec, ACTIVE_JOINTS)  # the projection's per-joint contacts
        add_studio(spec, FLOOR_Z, VISUAL_GROUP)  # lights, backdrop, a visual floor: frames a person can read
        self.model = model = spec.compile()
        check_robot_model(model, ALL_JOINTS, ACTUATOR_NAMES, source=f"{desc.name} MJCF")
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
        self.actions = G20ActionMap(cfg, self.coupling, n)
        self.presets = {name: self.actions.preset(name) for name in GOAL_PRESETS}
        #: mapped goals -> composer layers -> resolver -> the drive's joint targets
        self.command_path = HandCommandPath(cfg.composer_layers, cfg.hold_joints, self.presets[cfg.hold_pose],
                                            (self.coupling.active_lower, self.coupling.active_upper), n)  # fmt: skip
        self.open_pose = self.presets["open"]
        na = len(ACTIVE_JOINTS)
        nf = len(ALL_JOINTS)
        a = self.actions.dim
        hard_write = cfg.drive == "hard_write"
        #: One record per env (g20_kernels.task_dtype; hard-write: the drive's record nested), one record
        #: of settings (task_params_dtype): the task's and the drive's arrays are views of their fields.
        drive_records = (
            (hard_write_dtype(na, nf), hard_write_params_dtype(*hard_write_sizes(self.coupling, self.projector)))
            if hard_write
            else (None, None)
        )
        self.state = state = np.zeros(n, dtype=task_dtype(na, nf, a, drive_records[0]))
        self.params = p = np.zeros(1, dtype=task_params_dtype(na, drive_records[1]))
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
        self.q = self.drive.q if isinstance(self.drive, HardWriteDrive) else np.zeros((n, na))
        # [goal, command] per env in one block, so both tracking errors come from one subtraction
        self._targets = state["targets"]
        self.goal = self._targets[:, 0]
        self.command = self._targets[:, 1]
        self.raw_action = state["raw_action"]
        self.last_norm = state["last_norm"]
        self.qpos = state["qpos"]
        self.qvel = state["qvel"]
        self.elapsed = state["elapsed"]
        #: The last step's ``info`` per env, one row each (columns: g20_kernels.INFO_KEYS).
        self.info = state["info"]
        self.clipped = self.info[:, CLIPPED]
        self.switched = self.info[:, SWITCHED]
        self.reward = state["reward"]
        self.truncated = state["truncated"]
        self.rngs: list[np.random.Generator | None] = [None] * n
        self.obs_slices = {
            "qpos": slice(0, nf),
            "qvel": slice(nf, 2 * nf),
            "goal": slice(2 * nf, 2 * nf + na),
            "last_action": slice(2 * nf + na, 2 * nf + na + a),
        }
        self.obs_dim = 2 * nf + na + a
        self.observation_space = spaces.Box(-np.inf, np.inf, (self.obs_dim,), np.float32)
        self.max_episode_steps = cfg.max_episode_steps
        self._active_idx = self.coupling.active_idx
        self._inv_dt = 1.0 / self.dt
        # joint_pos_tracking(_fine) = w * exp(-mean(err^2) / std^2): the kernel's weights
        self._weights = np.array([-1.0 / (na * cfg.tracking_std**2), cfg.tracking_weight,
                                  -1.0 / (na * cfg.tracking_fine_std**2), cfg.tracking_fine_weight,
                                  -cfg.penetration_weight, -cfg.action_rate_weight])  # fmt: skip
        p["active_idx"], p["weights"], p["inv_dt"] = self._active_idx, self._weights, self._inv_dt
        p["max_steps"] = cfg.max_episode_steps or 0
        p["workers"] = self.num_threads
        self._hard_write_step = hard_write_advance_threaded if self.num_threads > 1 else hard_write_advance
        # the last step's results: the task's own buffers (step() hands out copies)
        self.obs = np.zeros((n, self.obs_dim), dtype=np.float32)
        #: gather_results' outputs: the info rows and the reward (one column per env), truncated
        self._results = (np.zeros((len(INFO_KEYS) + 1, n)), np.zeros(n, dtype=np.bool_))
        self.terminated = np.zeros(n, dtype=bool)  # pose tracking never terminates
        self._any_diverged = False  # PD: whether the last step flagged a divergence
        self._switch_steps = int(cfg.goal_switch_steps)
        #: hard_write_advance's arguments after the targets and actions (None for PD)
        self._hard_write_args = (state, p, self.obs) if hard_write else None
        #: the step kernels' compiled functions: see :func:`compiled_for`
        self._compiled: dict[Any, Any] = {}

    # -- goals -----------------------------------------------------------------------------------
    def pose_depth(self, q_active: np.ndarray) -> float:
        """Deepest penetration (m) of an active-joint pose (on a scratch MjData)."""
        return self.projector.depth(self._scratch, self.coupling.complete(q_active, clip_mimic=True))

    def sample_goal(self, rng: np.random.Generator) -> np.ndarray:
        """A goal from the presets or a random collision-free pose (bounded, deterministic retries)."""
        cfg = self.cfg
        use_preset = cfg.goal_mode == "presets" or (cfg.goal_mode == "mixed" and rng.random() < cfg.preset_goal_prob)
        if use_preset:
            return self.presets[cfg.goal_presets[int(rng.integers(len(cfg.goal_presets)))]].copy()
        lo, hi = self.coupling.active_lower, self.coupling.active_upper
        for _ in range(cfg.random_goal_tries):
            q = rng.uniform(lo, hi)
            if self.pose_depth(q) <= cfg.penetration_tol:
                return q
        return self.open_pose.copy()

    def _goal_from_option(self, goal: Any, what: str = "goal") -> np.ndarray:
        """A pose as given (a preset name, ``{joint: rad}`` with the open hand for joints not named, or 16
        radians): a value out of range, NaN or inf raises naming ``what``, the joint and its range (a given
        pose is meant as given; clipping is for action streams)."""
        if isinstance(goal, str):
            _choice(what, goal, tuple(GOAL_PRESETS))
            return self.presets[goal].copy()
        try:
            return self.actions.nominal.checked(goal, self.open_pose, what)
        except ActionError as exc:
            raise type(exc)(f"G20Hand: {exc}") from None

    def set_goal(self, i: int, goal: Any) -> None:
        """Replace env ``i``'s goal (a preset name, ``{joint: rad}`` or 16 radians in ACTIVE_JOINTS order)."""
        self.goal[i] = self._goal_from_option(goal)

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
        cfg = self.cfg
        lo, hi = self.coupling.active_lower, self.coupling.active_upper
        if "init_qpos" in options:
            q0 = options["init_qpos"]
        else:
            q0 = self.open_pose.copy()
            if cfg.reset_noise_scale > 0:
                noisy = np.clip(q0 + rng.uniform(-cfg.reset_noise_scale, cfg.reset_noise_scale, q0.shape), lo, hi)
                if self.pose_depth(noisy) <= cfg.penetration_tol:
                    q0 = noisy
        self.goal[i] = options["goal"] if "goal" in options else self.sample_goal(rng)
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
        self.last_norm[i] = self.actions.normalize(self.raw_action[i])
        self.qpos[i] = full
        self.qvel[i] = 0.0
        self.elapsed[i] = 0

    def reset_info(self, idx: np.ndarray | slice) -> dict[str, np.ndarray]:
        """Info of freshly reset envs: every step key, reward terms 0 (so vector infos stay aligned)."""
        q_act = self.qpos[idx][:, self._active_idx]
        info = zero_info(q_act.shape[0])
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
        goals, raw, clipped = self.actions.map(actions, self.command, self.raw_action, stacklevel=4)
        # -- from here on the step commits --------------------------------------------------------
        command = self.command_path(goals)
        norm = self.actions.normalize(raw)
        args = self._hard_write_args
        if args is not None:  # the rest of the step in one compiled call
            step = self._hard_write_step
            if self.num_threads > 1:
                if threads_usable():
                    use_threads(self.num_threads)
                else:  # a forked child of a process whose OpenMP pool ran: the same results, one thread
                    step = hard_write_advance
            run = self._compiled.get(step)
            if run is None:
                run = self._compiled[step] = compiled_for(step, command, raw, norm, *args)
            run(command, raw, norm, *args)
        else:
            self._advance_pd(command, raw, norm)
        self.clipped[:] = clipped
        if self._switch_steps:
            self._switch_goals()

    def _switch_goals(self) -> None:
        """A new goal in every env whose episode reached a multiple of ``goal_switch_steps``."""
        switched = self.elapsed % self._switch_steps == 0
        self.switched[:] = switched
        for i in np.flatnonzero(switched).tolist():
            self.goal[i] = self.sample_goal(self.rngs[i])  # type: ignore[arg-type]
            self.obs[i] = self.observation([i])[0]

    def _advance_pd(self, command: np.ndarray, raw: np.ndarray, norm: np.ndarray) -> None:
        self.command[:] = command
        drive = self.drive
        drive.step(self.q, command)
        self.qpos[:] = drive.qpos[:, self.qpos_adr]
        self.qvel[:] = drive.qvel[:, self.dof_adr]
        self.raw_action[:] = raw
        self.elapsed += 1
        g20_kernels.rewards_and_observations(self.qpos, self.qvel, self._targets, self._active_idx, norm,
                                             self.last_norm, drive.depth, self._weights, self.info, self.reward,
                                             self.obs)  # fmt: skip
        if self.max_episode_steps is not None:
            np.greater_equal(self.elapsed, self.max_episode_steps, out=self.truncated)
        elif self._any_diverged:  # the last step's divergence truncated its episode
            self.truncated[:] = False
        diverged = drive.monitor.check(self.obs, self.reward)
        if diverged is not None or self._any_diverged:
            self._contain(diverged)

    def _contain(self, diverged: np.ndarray | None) -> None:
        """PD envs whose physics blew up (:mod:`dexwheel.sim.divergence`): their episode ends as
        truncated with ``info["diverged"]``, their reward and reward terms are 0, their observation finite."""
        self._any_diverged = diverged is not None
        self.info[:, DIVERGED] = 0.0 if diverged is None else diverged
        if diverged is None:
            return
        self.truncated |= diverged
        contain(diverged, self.reward, self.info[:, : len(REWARD_TERMS)], self.info, self.obs)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray], int]:
        """:meth:`advance`, returning fresh ``(obs, reward, terminated, truncated, info)`` arrays and
        how many envs' episodes ended."""
        self.advance(actions)
        block, truncated = self._results
        ended = gather_results(self.state, block, truncated)
        block = block.copy()
        return self.obs.copy(), block[-1], self.terminated.copy(), truncated.copy(), info_arrays(block[:-1]), ended

    def observation(self, idx: np.ndarray | list[int] | slice = slice(None)) -> np.ndarray:
        """``[qpos, qvel, goal, last_action]`` as float32, one row per env in ``idx``."""
        return np.concatenate(
            (self.qpos[idx], self.qvel[idx], self.goal[idx], self.last_norm[idx]), axis=1, dtype=np.float32
        )

    # -- copy and pickle (dexwheel.sim.snapshot) ----------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """What a copy of this task continues from, by reference (the env deep-copies it): every MjData,
        the per-env records (their C addresses are never restored), the PD slew targets, physics rows and
        divergence counts, the generators."""
        names = ["datas", "_scratch", "state", "obs", "q", "rngs", "_any_diverged", "drive.depth"]
        if isinstance(self.drive, PDDrive):
            names += ["drive.control", "drive.monitor._last"]
            if self.drive.batch is not None:
                names += ["drive.batch.state", "drive.batch.warning"]
        return snapshot.capture(self, names)

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from another task's :meth:`snapshot` (same config), written into this task's own objects."""
        snapshot.restore(self, state)

    def __reduce__(self) -> tuple:
        # its records hold C addresses of its own MjData, which a plain copy would keep
        return snapshot.reduce_task(self, self.cfg, self.num_envs)

    def close(self) -> None:
        if isinstance(self.drive, PDDrive):
            self.drive.close()


def camera_config(task: G20HandTask, override: Mapping[str, Any] | None) -> dict[str, Any]:
    """The free camera of the vendor bridge's compare view (mirrored for the right hand), or ``override``."""
    view = task.description.camera
    cam = (dataclasses.asdict(view) if view is not None else {}) if override is None else dict(override)
    if "lookat" in cam:
        cam["lookat"] = np.asarray(cam["lookat"], dtype=np.float64)
    return cam


class G20HandEnv(Reconstructible, gym.Env):
    """Gymnasium env of the G20 hand tracking a goal pose; the ``N = 1`` case of :class:`G20HandTask`.

    Keyword arguments: the fields of :class:`G20HandConfig`. ``reset(options=...)`` accepts ``goal``
    (preset name, ``{joint: rad}`` or 16 radians) and ``init_qpos`` (same forms); a value out of its
    joint's range raises. With ``action="nominal"``, :meth:`step` also accepts ``{joint: radians}``:
    joints not named keep their previous command, an unknown name raises
    :class:`~dexwheel.control.UnknownJointError`, a mimic joint (it follows its source) ActionError.
    After :meth:`close` (idempotent), ``step`` and ``reset`` raise ``ClosedEnvironmentError``.

    ``info``: ``reward_<term>`` for each of :data:`REWARD_TERMS` (reward == their sum),
    ``tracking_error`` (max |q - goal| over the active joints, rad), ``mean_joint_error`` (mean |q - goal|), ``command_error`` (max |q - command|,
    rad: the vendor bridge's track-test error), ``max_penetration`` (m), ``projection_checks``/``_limited``/
    ``_fallback`` (what collision projection did), ``action_clipped``, ``goal_switched``.

    ``copy.deepcopy`` and pickling give an independent env that continues the same trajectory
    (:class:`~dexwheel.sim.snapshot.Reconstructible`); the renderer is not copied.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 50}

    def __init__(self, **kwargs: Any) -> None:
        self.config = cfg = G20HandConfig(**kwargs)
        self.task = task = G20HandTask(cfg, num_envs=1)
        self.model = task.model
        self.data = task.datas[0]
        self.dt = task.dt
        self.frame_skip = task.nsub
        self.metadata = {**type(self).metadata, "render_fps": int(round(cfg.control_hz))}
        self.render_mode = cfg.render_mode
        self.action_space = task.actions.space
        self.observation_space = task.observation_space
        self.obs_slices = dict(task.obs_slices)
        self._renderer: Any = None
        self._needs_reset = True
        self._closed = False
        # env 0's rows of the task's buffers (views, made once: step() reads them every step)
        self._obs, self._info = task.obs[0], task.info[0]

    def _init_kwargs(self) -> dict[str, Any]:
        return config_kwargs(self.config)

    # -- gymnasium API -------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if self._closed:
            raise closed_error("G20Hand")
        options = self.task.checked_options(options)  # bad options raise before anything changes
        super().reset(seed=seed)
        self.task.reset_env(0, self.np_random, options)
        self._needs_reset = False
        info = {k: v.item(0) for k, v in self.task.reset_info(slice(0, 1)).items()}
        if self.render_mode == "human":
            self.render()
        return self.task.observation()[0], info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            raise not_ready("G20Hand", self._closed)
        task = self.task
        if not isinstance(action, np.ndarray):
            action = self._as_array(action)
        task.advance(action[None])
        if self.render_mode == "human":
            self.render()
        info = info_dict(self._info.tolist())
        return self._obs.copy(), task.reward.item(0), task.terminated.item(0), task.truncated.item(0), info

    def _as_array(self, action: Any) -> np.ndarray:
        """A ``{joint: radians}`` dict (nominal actions) or any array-like as an array."""
        task = self.task
        if isinstance(action, Mapping):
            if task.actions.kind != "nominal":
                raise ActionError(
                    f"a {{joint: radians}} action needs action='nominal'; this env uses action={task.actions.kind!r}"
                )
            return task.actions.nominal_dict(action, task.command[0])
        try:
            return np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ActionError(
                f"action ({task.actions.kind}) must be numeric with shape {self.action_space.shape}: {exc}"
            ) from None

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn("G20Hand: render() without render_mode; pass render_mode='rgb_array' or 'human'")
            return None
        if self._renderer is None:
            from dexwheel.sim.rendering import check_render_mode  # no display, no OpenGL: say what to set

            check_render_mode(self.render_mode, "G20Hand-v0")
            from gymnasium.envs.mujoco.mujoco_rendering import MujocoRenderer

            self._renderer = MujocoRenderer(
                self.model,
                self.data,
                default_cam_config=camera_config(self.task, self.config.default_camera_config),
                width=self.config.width,
                height=self.config.height,
            )
        return self._renderer.render(self.render_mode)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = self._needs_reset = True
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.task.close()

    # -- conveniences ------------------------------------------------------------------------------
    def set_goal(self, goal: Any) -> None:
        """Replace the current goal (preset name, ``{joint: rad}`` or 16 radians)."""
        self.task.set_goal(0, goal)

    @property
    def goal(self) -> np.ndarray:
        return self.task.goal[0].copy()

    @property
    def command(self) -> np.ndarray:
        """The commanded active-joint positions (ACTIVE_JOINTS order) after the last action."""
        return self.task.command[0].copy()

    @property
    def joint_positions(self) -> dict[str, float]:
        """All 21 joint positions by name (the vendor bridge's state message)."""
        return {n: float(v) for n, v in zip(ALL_JOINTS, self.task.qpos[0], strict=True)}


__all__ = [
    "ACTIONS",
    "DRIVES",
    "GOAL_PRESETS",
    "REWARD_TERMS",
    "G20ActionMap",
    "G20HandConfig",
    "G20HandEnv",
    "G20HandTask",
    "camera_config",
]
