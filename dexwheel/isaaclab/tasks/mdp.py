"""Terms the tasks define differently from Isaac Lab's stock ones (same names as the MuJoCo tasks).

Wheel-leg: the MuJoCo task reads its base velocity from a velocimeter at the base origin (the IMU site), Isaac Lab's
stock terms from the base's centre of mass; the base CoM sits 7.7 cm above the origin on Solenopsis, so
pitching moves the two apart. Its command has no lateral part, so the tracking term is x only and the
observation carries (vx, wz), not (vx, vy, wz).

Hand pose tracking (the G20): a normalized action term that ramps PD targets per physics step and completes
the mimic joints (:class:`HandPoseAction`), a goal-pose command drawn from presets (:class:`HandGoalCommand`),
the reset to a noisy start pose, and the reward terms of the MuJoCo task, per control step.
"""

from __future__ import annotations

from dataclasses import MISSING

import isaaclab.envs.mdp as isaac_mdp
import torch
import warp as wp
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import ActionTerm, ActionTermCfg, CommandTerm, CommandTermCfg, SceneEntityCfg
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.utils import configclass
from isaaclab_newton.physics import NewtonManager

_ROBOT = SceneEntityCfg("robot")


def robot_joints(names) -> SceneEntityCfg:
    """The robot's joints ``names``, in that order (the MuJoCo task's column order)."""
    return SceneEntityCfg("robot", joint_names=list(names), preserve_order=True)


@configclass
class ExactObsGroup(ObsGroup):
    """A policy observation group as the MuJoCo tasks build theirs: no noise, one concatenated vector."""

    def __post_init__(self):
        self.enable_corruption = False  # the MuJoCo tasks add no observation noise
        self.concatenate_terms = True


class ReversingVelocityCommand(isaac_mdp.UniformVelocityCommand):
    """Isaac Lab's uniform velocity command plus the MuJoCo task's ``commands.rel_reversal``: a mid-episode
    resample (the command counter past the reset's) drives the other way with that probability, keeping its
    drawn speed (:class:`~dexwheel.envs.wheel_leg_cfg.CommandCfg`)."""

    cfg: ReversingVelocityCommandCfg

    def _resample_command(self, env_ids) -> None:
        previous = self.vel_command_b[env_ids, 0].clone()  # standing envs hold 0 here: they never reverse
        super()._resample_command(env_ids)
        if self.cfg.rel_reversal <= 0.0:
            return
        mid = self.command_counter[env_ids] > 0
        flip = mid & (previous != 0.0) & (torch.rand_like(previous) < self.cfg.rel_reversal)
        drawn = self.vel_command_b[env_ids, 0]
        self.vel_command_b[env_ids, 0] = torch.where(flip, -torch.sign(previous) * drawn.abs(), drawn)


@configclass
class ReversingVelocityCommandCfg(isaac_mdp.UniformVelocityCommandCfg):
    class_type: type = ReversingVelocityCommand
    rel_reversal: float = 0.0


def velocity_commands(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The commanded (vx, wz): the MuJoCo task's ``velocity_commands`` columns."""
    return env.command_manager.get_command(command_name)[:, [0, 2]]


def track_lin_vel_x_exp(
    env: ManagerBasedRLEnv, std: float, command_name: str, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """exp(-(vx* - vx)^2 / std^2), vx of the base origin in the base frame."""
    vx = env.scene[asset_cfg.name].data.root_link_lin_vel_b.torch[:, 0]
    return torch.exp(-torch.square(env.command_manager.get_command(command_name)[:, 0] - vx) / std**2)


def lin_vel_z_l2(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """vz^2 of the base origin in the base frame."""
    return torch.square(env.scene[asset_cfg.name].data.root_link_lin_vel_b.torch[:, 2])


# -- hand pose tracking (the G20 task, :mod:`dexwheel.isaaclab.tasks.g20_pose`) ------------------------------
# The terms take every number from their configs, which g20_pose fills from the MuJoCo task's config and the
# robot description; none is written here.


def _env_index(env_ids, num_envs: int, device) -> torch.Tensor:
    """``env_ids`` (None, a slice, a sequence or a tensor) as a long tensor of env indices."""
    if env_ids is None:
        return torch.arange(num_envs, device=device)
    if isinstance(env_ids, slice):
        return torch.arange(num_envs, device=device)[env_ids]
    return torch.as_tensor(env_ids, device=device).long()


class MimicCompletion:
    """Active joints -> every joint, as :meth:`dexwheel.control.MimicCompletion.complete` with ``clip_mimic``:
    each active joint clipped to its limits, each mimic joint ``ratio * source`` (the unclipped source)
    clipped to its own; ``arrays`` is that class's :attr:`~dexwheel.control.MimicCompletion.arrays`."""

    def __init__(self, arrays, device, dtype: torch.dtype = torch.float32) -> None:
        active_idx, mimic_idx, mimic_src, ratio, lower, upper = arrays
        self.active_idx = torch.as_tensor(active_idx, device=device).long()
        self.mimic_idx = torch.as_tensor(mimic_idx, device=device).long()
        self.mimic_src = torch.as_tensor(mimic_src, device=device).long()
        self.ratio = torch.as_tensor(ratio, device=device, dtype=dtype)
        self.lower = torch.as_tensor(lower, device=device, dtype=dtype)
        self.upper = torch.as_tensor(upper, device=device, dtype=dtype)
        self.nfull = self.lower.shape[0]

    def __call__(self, q: torch.Tensor) -> torch.Tensor:
        full = torch.empty(*q.shape[:-1], self.nfull, device=q.device, dtype=q.dtype)
        a, m = self.active_idx, self.mimic_idx
        full[..., a] = torch.clamp(q, self.lower[a], self.upper[a])
        full[..., m] = torch.clamp(q[..., self.mimic_src] * self.ratio, self.lower[m], self.upper[m])
        return full


def contact_depth(num_envs: int, device) -> torch.Tensor:
    """Per env, the deepest contact of the last physics step (m, >= 0; 0 without one): the MuJoCo models'
    deepest-contact sensor (``-min(dist, 0)`` over every contact), read from MuJoCo-Warp's contact list.
    Newton's worlds are the envs, in order."""
    data = NewtonManager._solver.mjw_data
    dist = wp.to_torch(data.contact.dist)
    world = wp.to_torch(data.contact.worldid).long().clamp(0, num_envs - 1)
    live = torch.arange(dist.shape[0], device=dist.device) < wp.to_torch(data.nacon)
    depth = torch.where(live, torch.clamp(-dist, min=0.0), torch.zeros_like(dist))
    out = torch.zeros(num_envs, device=dist.device, dtype=dist.dtype)
    return out.scatter_reduce_(0, world, depth, reduce="amax").to(device)


class HandPoseAction(ActionTerm):
    """Normalized actions in [-1, 1] -> slewed PD targets of every hinge, mimic joints completed.

    Once per control step (:meth:`process_actions`) the action, clipped to [-1, 1], becomes the goal of each
    active joint, ``lower + (a + 1) * half_span`` within its limits (the MuJoCo env's normalized mapping).
    Each physics step (:meth:`apply_actions`) the active targets move from the last control step's toward
    those goals by at most ``k * max_step`` at the ``k``-th physics step (the MuJoCo PD drive's ramp; an
    infinite step jumps), are completed to every joint (:class:`MimicCompletion`) and written as the
    position targets of the joints' own PD actuators. It also keeps the deepest contact over the control
    step's physics steps (:attr:`depth`, the ``penetration`` term's) and, at a reset, starts the slew at the
    reset pose with the action history at the action that holds it (the MuJoCo env's previous action of a
    fresh episode).
    """

    cfg: HandPoseActionCfg

    def __init__(self, cfg: HandPoseActionCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        if getattr(env, "_physics_handles_decimation", False):
            raise RuntimeError("HandPoseAction ramps its targets per physics step, but this physics backend runs "
                               "the whole decimation loop in one call (Newton actuators only)")  # fmt: skip
        ids, _ = self._asset.find_joints(list(cfg.joint_names), preserve_order=True)
        self._joint_ids = torch.tensor(ids, device=self.device, dtype=torch.int32)
        self.completion = MimicCompletion(cfg.completion, self.device)
        self._active_cols = self._joint_ids[self.completion.active_idx].long()
        f32 = {"device": self.device, "dtype": torch.float32}
        self._lower = torch.tensor(cfg.action_lower, **f32)
        self._half_span = torch.tensor(cfg.action_half_span, **f32)
        self._upper = self._lower + 2.0 * self._half_span
        self._max_step = torch.tensor(cfg.max_step, **f32)
        n, na = self.num_envs, self._lower.shape[0]
        start = self._asset.data.default_joint_pos.torch[:, self._active_cols].clone()
        self._raw = torch.zeros(n, na, **f32)
        self._command = start.clone()  # the active joints' goals of this control step
        self._start = start.clone()  # the active targets at the start of this control step
        self._target = start.clone()  # the active targets of the last physics step
        self._substep = 0
        #: Per env, the deepest contact (m) over this control step's physics steps before the last one.
        self.depth = torch.zeros(n, **f32)

    @property
    def action_dim(self) -> int:
        return self._lower.shape[0]

    @property
    def raw_actions(self) -> torch.Tensor:
        return self._raw

    @property
    def processed_actions(self) -> torch.Tensor:
        return self._command

    @property
    def targets(self) -> torch.Tensor:
        """The active joints' PD targets of the last physics step (the slew's state)."""
        return self._target

    def hold_action(self, q_active: torch.Tensor) -> torch.Tensor:
        """The action that commands ``q_active`` (the MuJoCo env's ``hold_action``)."""
        return torch.clamp((q_active - self._lower) / self._half_span - 1.0, -1.0, 1.0)

    def process_actions(self, actions: torch.Tensor) -> None:
        self._raw[:] = actions
        a = torch.clamp(actions, -1.0, 1.0)
        self._command = torch.clamp(self._lower + (a + 1.0) * self._half_span, self._lower, self._upper)
        self._start = self._target.clone()
        self._substep = 0
        self.depth.zero_()

    def apply_actions(self) -> None:
        if self._substep > 0:  # the contacts of the previous physics step of this control step
            torch.maximum(self.depth, contact_depth(self.num_envs, self.device), out=self.depth)
        self._substep += 1
        budget = self._substep * self._max_step
        diff = self._command - self._start
        self._target = self._command - (diff - torch.clamp(diff, -budget, budget))
        full = self.completion(self._target)
        self._asset.actuators.target_command.set_position_index(value=full, joint_ids=self._joint_ids)

    def reset(self, env_ids=None) -> None:
        ids = _env_index(env_ids, self.num_envs, self.device)
        q0 = self._asset.data.joint_pos.torch[ids][:, self._active_cols]
        self._command[ids] = q0
        self._start[ids] = q0
        self._target[ids] = q0
        self.depth[ids] = 0.0
        hold = self.hold_action(q0)
        self._raw[ids] = hold
        manager, offset = self._env.action_manager, 0
        for name in manager.active_terms:  # this term's columns of the manager's action history
            if manager.get_term(name) is self:
                break
            offset += manager.get_term(name).action_dim
        cols = slice(offset, offset + self.action_dim)
        manager.action[ids, cols] = hold
        manager.prev_action[ids, cols] = hold


@configclass
class HandPoseActionCfg(ActionTermCfg):
    """:class:`HandPoseAction`'s settings (per active joint unless said otherwise)."""

    class_type: type = HandPoseAction
    joint_names: list[str] = MISSING
    """Every driven joint, in the order of ``completion``'s full vector."""
    completion: tuple = MISSING
    """``(active_idx, mimic_idx, mimic_src, mimic_ratio, lower, upper)``: :class:`MimicCompletion`'s arrays."""
    action_lower: list[float] = MISSING
    """The joint position of action -1."""
    action_half_span: list[float] = MISSING
    """Radians per unit of action (half the joint's range)."""
    max_step: list[float] = MISSING
    """The largest target move per physics step (rad; inf: jump)."""


def reset_hand_pose(env: ManagerBasedRLEnv, env_ids, pose: list[float], noise: float, action_name: str,
                    asset_cfg: SceneEntityCfg = _ROBOT) -> None:  # fmt: skip
    """Start an episode at ``pose`` (the active joints) plus uniform noise of ``noise`` rad, within the limits,
    mimic joints completed by action term ``action_name``'s completion, at rest, its PD targets there."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    asset = env.scene[asset_cfg.name]
    ids = _env_index(env_ids, env.num_envs, env.device)
    q0 = torch.tensor(pose, device=env.device, dtype=torch.float32).repeat(len(ids), 1)
    if noise > 0:
        q0 += torch.empty_like(q0).uniform_(-noise, noise)
    full = term.completion(q0)  # clips the active joints to their limits too
    joints, envs = term._joint_ids, ids.to(torch.int32)
    asset.write_joint_position_to_sim_index(position=full, joint_ids=joints, env_ids=envs)
    asset.write_joint_velocity_to_sim_index(velocity=torch.zeros_like(full), joint_ids=joints, env_ids=envs)
    asset.actuators.target_command.set_position_index(value=full, joint_ids=joints, env_ids=envs)


class HandGoalCommand(CommandTerm):
    """A goal pose of the active joints per env: one of ``presets`` drawn uniformly at every reset and, with
    ``switch_steps`` > 0, every ``switch_steps`` control steps within an episode (the MuJoCo env's
    ``goal_mode="presets"`` with ``goal_switch_steps``). Metrics: the mean and largest |q - goal| (rad)."""

    cfg: HandGoalCommandCfg

    def __init__(self, cfg: HandGoalCommandCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self.robot = env.scene[cfg.asset_name]
        ids, _ = self.robot.find_joints(list(cfg.joint_names), preserve_order=True)
        self._joint_ids = torch.tensor(ids, device=self.device).long()
        self.presets = torch.tensor(list(cfg.presets.values()), device=self.device, dtype=torch.float32)
        self.goal = self.presets[0].repeat(self.num_envs, 1)
        self.metrics["mean_joint_error"] = torch.zeros(self.num_envs, device=self.device)
        self.metrics["tracking_error"] = torch.zeros(self.num_envs, device=self.device)

    @property
    def command(self) -> torch.Tensor:
        return self.goal

    def compute(self, dt: float) -> None:
        # goals change on the step count, not on a float timer (CommandTerm's time_left)
        self._update_metrics()
        if self.cfg.switch_steps > 0:
            steps = self._env.episode_length_buf
            due = ((steps % self.cfg.switch_steps == 0) & (steps > 0)).nonzero().flatten()
            if len(due) > 0:
                self._resample(due)

    def _resample_command(self, env_ids) -> None:
        ids = _env_index(env_ids, self.num_envs, self.device)
        self.goal[ids] = self.presets[torch.randint(len(self.presets), (len(ids),), device=self.device)]

    def _update_command(self) -> None:
        pass

    def _update_metrics(self) -> None:
        err = torch.abs(self.robot.data.joint_pos.torch[:, self._joint_ids] - self.goal)
        self.metrics["mean_joint_error"][:] = err.mean(dim=1)
        self.metrics["tracking_error"][:] = err.max(dim=1).values


@configclass
class HandGoalCommandCfg(CommandTermCfg):
    """:class:`HandGoalCommand`'s settings."""

    class_type: type = HandGoalCommand
    asset_name: str = "robot"
    joint_names: list[str] = MISSING
    """The active joints, in the goal's order."""
    presets: dict[str, list[float]] = MISSING
    """The goals drawn from, by name."""
    switch_steps: int = 0
    """A new goal every this many control steps within an episode (0: one goal per episode)."""
    resampling_time_range: tuple[float, float] = (0.0, 0.0)
    """Unused: :attr:`switch_steps` decides (CommandTerm's timer is a float sum of step lengths)."""


# Isaac Lab's reward manager multiplies each term by the control period; the MuJoCo G20 task does not (its
# reward is the per-step sum of its terms), so these terms divide by it: value * weight * dt / dt.


def joint_pos_tracking(env: ManagerBasedRLEnv, std: float, command_name: str,
                       asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:  # fmt: skip
    """exp(-mean((q - goal)^2) / std^2) over the goal's joints (``asset_cfg.joint_ids``, in its order)."""
    q = env.scene[asset_cfg.name].data.joint_pos.torch[:, asset_cfg.joint_ids]
    err = torch.square(q - env.command_manager.get_command(command_name)).mean(dim=1)
    return torch.exp(-err / std**2) / env.step_dt


def penetration(env: ManagerBasedRLEnv, action_name: str) -> torch.Tensor:
    """The deepest contact (m) over the control step's physics steps (:class:`HandPoseAction`'s record and
    the last physics step's contacts)."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    return torch.maximum(term.depth, contact_depth(env.num_envs, env.device)) / env.step_dt


def action_rate_l2(env: ManagerBasedRLEnv) -> torch.Tensor:
    """sum((a - a_prev)^2) over the action (Isaac Lab's ``action_rate_l2``)."""
    return torch.sum(torch.square(env.action_manager.action - env.action_manager.prev_action), dim=1) / env.step_dt
