"""Terms the tasks define differently from Isaac Lab's stock ones (same names as the MuJoCo tasks).

Wheel-leg: the MuJoCo task reads its base velocity from a velocimeter at the base origin (the IMU site), Isaac Lab's
stock terms from the base's centre of mass; the base CoM sits 7.7 cm above the origin on Solenopsis, so
pitching moves the two apart. Its command has no lateral part, so the tracking term is x only and the
observation carries (vx, wz), not (vx, vy, wz).

Hand pose tracking (the G20): the MuJoCo task's action path on torch (any mapping, the layers, the slew per physics
step, the PD or hard-write drive: :class:`HandPoseAction`), a goal-pose command drawn from the presets and the MuJoCo
task's random goals (:class:`HandGoalCommand`), the reset to a noisy start pose, the reward terms of the MuJoCo task
per control step, and the step's info for evaluations (:func:`hand_step_info`).
"""

from __future__ import annotations

from dataclasses import MISSING

import isaaclab.envs.mdp as isaac_mdp
import numpy as np
import torch
import warp as wp
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import ActionTerm, ActionTermCfg, CommandTerm, CommandTermCfg, ManagerTermBase, SceneEntityCfg
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.utils import configclass
from isaaclab_newton.physics import NewtonManager

_ROBOT = SceneEntityCfg("robot")


def robot_joints(names) -> SceneEntityCfg:
    """The robot's joints ``names``, in that order (the MuJoCo task's column order)."""
    return SceneEntityCfg("robot", joint_names=list(names), preserve_order=True)


@configclass
class ExactObsGroup(ObsGroup):
    """An observation group as the MuJoCo tasks build theirs: one concatenated vector; noise only where a term asks
    for it (the task sets ``enable_corruption`` from its table: :func:`~dexwheel.isaaclab.tasks.term_map.corrupted`)."""

    def __post_init__(self):
        self.enable_corruption = False
        self.concatenate_terms = True


class ReversingVelocityCommand(isaac_mdp.UniformVelocityCommand):
    """Isaac Lab's uniform velocity command plus the MuJoCo task's ``commands.rel_reversal``: a mid-episode
    resample (the command counter past the reset's) drives the other way with that probability, keeping its
    drawn speed (:class:`~dexwheel.tasks.velocity.config.CommandCfg`)."""

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


def joint_pos_rel(env: ManagerBasedRLEnv, offset: list[float], asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Joint angles minus ``offset`` (the MuJoCo task's knee angles minus the commanded stance; Isaac Lab's own
    term subtracts the default pose, which is the settled stance here)."""
    q = env.scene[asset_cfg.name].data.joint_pos.torch[:, asset_cfg.joint_ids]
    return q - torch.tensor(offset, device=q.device, dtype=q.dtype)


def base_lin_vel(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Base linear velocity (m/s) of the base origin in the base frame (privileged: the MuJoCo velocimeter's)."""
    return env.scene[asset_cfg.name].data.root_link_lin_vel_b.torch


#: Columns of the per-env draw record (:func:`model_params`), as the MuJoCo task's ``model_params``:
#: friction - nominal, base mass added, base CoM offset (3), link mass factors - 1 (knees, then wheels).
MODEL_PARAM_COLUMNS = {"friction": (0, 1), "base_mass_add": (1, 2), "base_com_offset": (2, 5),
                       "link_mass_scale": (5, 13)}  # fmt: skip


def model_params(env: ManagerBasedRLEnv) -> torch.Tensor:
    """What :class:`randomize_model` drew per env this episode (offsets from nominal; zeros without it)."""
    draws = getattr(env, "_dexwheel_model_params", None)
    if draws is None:
        draws = env._dexwheel_model_params = torch.zeros(env.num_envs, 13, device=env.device)
    return draws


def model_param(env: ManagerBasedRLEnv, column: str) -> torch.Tensor:
    """One privileged domain-randomisation observation (``friction``, ``base_mass_add``, ``base_com_offset``,
    ``link_mass_scale``): the columns of :func:`model_params`, as the MuJoCo task's terms of those names."""
    lo, hi = MODEL_PARAM_COLUMNS[column]
    return model_params(env)[:, lo:hi]


def _action_delay(steps, where: str, like: torch.Tensor):
    """The MuJoCo task's action latency on torch (:class:`~dexwheel.tasks.action_delay.ActionDelay`), None without."""
    from dexwheel.tasks.action_delay import ActionDelay, delay_range

    delay = delay_range(steps, where)
    return ActionDelay(delay, like) if delay != (0, 0) else None


def _reset_delay(delay, ids: torch.Tensor, hold) -> None:
    """Envs ``ids`` of an action delay start an episode holding ``hold``; a range draws each env's delay anew."""
    if delay is not None:
        drawn = torch.randint(delay.low, delay.high + 1, (len(ids),), device=ids.device) if delay.random else None
        delay.reset(ids, hold, drawn)


class WheelLegComposerAction(ActionTerm):
    """The wheel-leg action path of :mod:`dexwheel.control` on torch: the MuJoCo task's own
    :class:`~dexwheel.tasks.velocity.action_path.WheelLegActionPath` (the same layers, composer and resolver,
    built from the same config), its robot-order frame written as the joints' targets and gains.

    Per control step (:meth:`process_actions`) the action, clipped to [-1, 1] when ``actions.clip``, is mapped
    into the policy layer as the MuJoCo kernel maps it (knees ``stance + knee_scale a``, wheel velocity
    ``wheel_scale a``, float64 from the float32 action, rounded once), the layers are merged (``stance``,
    ``override``) and resolved; each physics step (:meth:`apply_actions`) writes the frame's position and
    velocity targets. The frame's gains times the per-env factors :attr:`kp_scale` / :attr:`kd_scale` (the PD
    gain randomisation, as the MuJoCo drive applies them) become the joints' stiffness and damping, written
    only when they change (the override switch, a new draw). The layers carry no feed-forward torque.
    """

    cfg: WheelLegComposerActionCfg

    def __init__(self, cfg: WheelLegComposerActionCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        from dexwheel.isaaclab.terrain import task_kwargs
        from dexwheel.robots.wheel_leg import ROBOT_JOINT_ORDER
        from dexwheel.tasks.velocity.action_path import WheelLegActionPath
        from dexwheel.tasks.velocity.config import make_cfg

        task = make_cfg(robot=cfg.robot, **task_kwargs(cfg.task_overrides))
        self.path = WheelLegActionPath(task, self.num_envs, xp=torch, device=self.device, stacklevel=6)
        ids, _ = self._asset.find_joints(list(ROBOT_JOINT_ORDER), preserve_order=True)
        self._joint_ids = torch.tensor(ids, device=self.device, dtype=torch.int32)
        f64 = {"device": self.device, "dtype": torch.float64}
        self._scale = torch.tensor(self.path.act_scale, **f64)
        self._offset = torch.tensor(self.path.act_offset, **f64)
        self._clip = task.actions.clip
        n, nj = self.num_envs, len(ROBOT_JOINT_ORDER)
        self._raw = torch.zeros(n, self.path.action_dim, device=self.device)
        #: Per env and joint (ROBOT_JOINT_ORDER): factors on the frame's kp and kd (PD gain randomisation).
        self.kp_scale = torch.ones(n, nj, device=self.device)
        self.kd_scale = torch.ones(n, nj, device=self.device)
        self._gains = torch.full((2, n, nj), float("nan"), device=self.device)  # as last written
        self._scales_changed = True
        self.delay = _action_delay(task.actions.delay_steps, "actions.delay_steps", self._raw)
        self.path.compose()

    @property
    def action_dim(self) -> int:
        return self.path.action_dim

    @property
    def raw_actions(self) -> torch.Tensor:
        return self._raw

    @property
    def processed_actions(self) -> torch.Tensor:
        """The policy layer's targets: knee positions, then wheel velocities."""
        block, nk = self.path.policy_block, self.path.nk
        return torch.cat([block[0, :, :nk], block[3, :, nk:]], dim=1)

    def set_override(self, active: bool) -> None:
        """Switch the ``override`` layer (the safety stop) on or off in every env, as the MuJoCo task's
        ``set_override``; the next step's frame carries it."""
        self.path.set_override(active)
        self.path.compose()

    def set_gain_scales(self, env_ids: torch.Tensor, kp_scale: torch.Tensor, kd_scale: torch.Tensor) -> None:
        """Envs ``env_ids``' gain factors (ROBOT_JOINT_ORDER); written with the next frame."""
        self.kp_scale[env_ids] = kp_scale
        self.kd_scale[env_ids] = kd_scale
        self._scales_changed = True

    def process_actions(self, actions: torch.Tensor) -> None:
        self._raw[:] = actions
        a = torch.clamp(actions, -1.0, 1.0) if self._clip else actions
        if self.delay is not None:  # the action of delay steps ago (the MuJoCo task's latency)
            a = self.delay(a.to(torch.float32))
        y = a.to(torch.float32).to(torch.float64) * self._scale
        block, nk = self.path.policy_block, self.path.nk
        block[0, :, :nk] = (y[:, :nk] + self._offset).to(block.dtype)
        block[3, :, nk:] = y[:, nk:].to(block.dtype)
        self.path.compose()

    def _write_gains(self) -> None:
        gains = self.path.robot_block[1:3]
        if not self._scales_changed and torch.equal(gains, self._gains):
            return
        self._gains.copy_(gains)
        self._scales_changed = False
        self._asset.write_joint_stiffness_to_sim_index(stiffness=gains[0] * self.kp_scale, joint_ids=self._joint_ids)
        self._asset.write_joint_damping_to_sim_index(damping=gains[1] * self.kd_scale, joint_ids=self._joint_ids)

    def apply_actions(self) -> None:
        self._write_gains()
        block = self.path.robot_block
        self._asset.actuators.target_command.set_position_index(value=block[0], joint_ids=self._joint_ids)
        self._asset.actuators.target_command.set_velocity_index(value=block[3], joint_ids=self._joint_ids)

    def reset(self, env_ids=None) -> None:
        ids = _env_index(env_ids, self.num_envs, self.device)
        self._raw[ids] = 0.0
        _reset_delay(self.delay, ids, 0.0)


@configclass
class WheelLegComposerActionCfg(ActionTermCfg):
    """:class:`WheelLegComposerAction`'s settings: the MuJoCo task's config as ``make_cfg(robot=robot, **task_overrides)``."""

    class_type: type = WheelLegComposerAction
    robot: str = MISSING
    task_overrides: dict = {}


def reset_start_pose(env: ManagerBasedRLEnv, env_ids, knees: list[float], height_offset: float, noise: float,
                     robot: str, asset_cfg: SceneEntityCfg = _ROBOT) -> None:  # fmt: skip
    """The MuJoCo task's start pose with its ``reset_joints_and_base`` noise: knees at ``knees`` (the settled
    stance) plus uniform +-``noise`` rad, the base level at the env origin at the height that puts the lowest
    wheel on the ground for those knees (``leg_heights(knees).max() + height_offset`` + the 0.5 mm drop), its
    6-D velocity uniform in +-``noise``; every other joint at 0, at rest (``asset_cfg.joint_ids``: the knees)."""
    from dexwheel.robots.wheel_leg import PARAMS, START_DROP_M

    asset = env.scene[asset_cfg.name]
    ids = _env_index(env_ids, env.num_envs, env.device)
    u = 2.0 * torch.rand(len(ids), len(knees) + 6, device=env.device) - 1.0 if noise > 0 else None
    q = torch.tensor(knees, device=env.device, dtype=torch.float64).repeat(len(ids), 1)
    vel = torch.zeros(len(ids), 6, device=env.device)
    if u is not None:
        q = q + noise * u[:, : len(knees)].double()
        vel = noise * u[:, len(knees) :]
    z = PARAMS[robot].leg_heights(q).max(dim=1).values + height_offset + START_DROP_M
    pose = torch.zeros(len(ids), 7, device=env.device)
    pose[:, :3] = env.scene.env_origins[ids]
    pose[:, 2] += z.float()
    pose[:, 6] = 1.0  # x, y, z, w
    envs = ids.to(torch.int32)
    asset.write_root_link_pose_to_sim_index(root_pose=pose, env_ids=envs)
    asset.write_root_link_velocity_to_sim_index(root_velocity=vel, env_ids=envs)  # the base origin's, as MuJoCo's qvel
    joint_pos = asset.data.default_joint_pos.torch[ids].clone()
    joint_pos[:, asset_cfg.joint_ids] = q.float()
    asset.write_joint_position_to_sim_index(position=joint_pos, env_ids=envs)
    asset.write_joint_velocity_to_sim_index(velocity=torch.zeros_like(joint_pos), env_ids=envs)


class randomize_model(ManagerTermBase):
    """The MuJoCo task's ``randomize_model`` event: per env and reset, one draw of the MuJoCo randomiser's
    count and layout (:meth:`dexwheel.sim.randomization.ModelRandomizer.draw`: friction, base mass added, base
    CoM offset, link mass factors, kp and kd factors), uniform over the ``domain_rand`` ranges (nominal for a
    range set to None), applied from the nominal model:

    * friction: every collision shape of the robot (the ground plane is shared by all envs, so it is set to
      the range's low end: MuJoCo takes the larger of two geoms' friction, so the robot's value decides);
    * base mass + the draw, its inertia scaled with it; knee and wheel link masses and inertias times their
      factors; the base CoM shifted by the offset (Newton's body CoM);
    * kp and kd factors: the action term's :meth:`WheelLegComposerAction.set_gain_scales`.

    The draw is recorded (:func:`model_params`) for the privileged observations.
    """

    def __init__(self, cfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        from dexwheel.robots.wheel_leg import BASE_BODY, LINKS

        p = cfg.params
        self.asset = env.scene[p.get("asset_name", "robot")]
        base, _ = self.asset.find_bodies([BASE_BODY], preserve_order=True)
        links, _ = self.asset.find_bodies(list(LINKS), preserve_order=True)
        self.base, self.links = base[0], torch.tensor(links, device=env.device).long()
        self.bodies = torch.tensor([self.base, *links], device=env.device).long()
        model = env.sim.physics_manager.get_model()
        self._mu = self.asset._root_view.get_attribute("shape_material_mu", model)[:, 0]
        self._nominal = None  # masses, inertias, CoMs at the first call (the nominal model)

    def __call__(self, env: ManagerBasedRLEnv, env_ids, friction, base_mass_add, link_mass_scale, base_com_offset,
                 kp_scale, kd_scale, nominal_friction: float, action_name: str, asset_name: str = "robot") -> None:  # fmt: skip
        from newton import ModelFlags

        data = self.asset.data
        if self._nominal is None:
            self._nominal = (data.body_mass.torch.clone(), data.body_inertia.torch.clone(),
                             data.body_com_pos_b.torch.clone())  # fmt: skip
        mass0, inertia0, com0 = self._nominal
        ids = _env_index(env_ids, env.num_envs, env.device)
        term: WheelLegComposerAction = env.action_manager.get_term(action_name)
        n, nl, nj = len(ids), len(self.links), term.kp_scale.shape[1]
        u = torch.rand(n, 5 + nl + 2 * nj, device=env.device, dtype=torch.float64)

        def lerp(x, r, nominal):
            return torch.full_like(x, nominal) if r is None else r[0] + (r[1] - r[0]) * x

        mu = lerp(u[:, 0], friction, nominal_friction)
        add = lerp(u[:, 1], base_mass_add, 0.0)
        com = (2.0 * u[:, 2:5] - 1.0) * (0.0 if base_com_offset is None else base_com_offset)
        scale = lerp(u[:, 5 : 5 + nl], link_mass_scale, 1.0)
        kp = lerp(u[:, 5 + nl : 5 + nl + nj], kp_scale, 1.0)
        kd = lerp(u[:, 5 + nl + nj :], kd_scale, 1.0)

        rows = ids[:, None]
        ratio = torch.ones(n, len(self.bodies), device=env.device, dtype=torch.float64)
        ratio[:, 0] = (mass0[ids, self.base].double() + add) / mass0[ids, self.base].double()
        ratio[:, 1:] = scale
        bodies = self.bodies
        masses = (mass0[rows, bodies].double() * ratio).float()
        inertias = (inertia0[rows, bodies].double() * ratio[..., None]).float()
        self.asset.set_masses_index(masses=masses, body_ids=bodies, env_ids=ids)
        self.asset.set_inertias_index(inertias=inertias, body_ids=bodies, env_ids=ids)
        coms = (com0[ids, self.base].double() + com)[:, None].float()  # (n, 1, 3)
        self.asset.set_coms_index(coms=coms, body_ids=[self.base], env_ids=ids)
        wp.to_torch(self._mu)[ids] = mu.float()[:, None]
        env.sim.physics_manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
        term.set_gain_scales(ids, kp.float(), kd.float())
        model_params(env)[ids] = torch.cat([(mu - nominal_friction)[:, None], add[:, None], com, scale - 1.0],
                                           dim=1).float()  # fmt: skip


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
    """The MuJoCo G20 task's action path on torch: its action mapping, composer layers and resolver (those of
    :mod:`dexwheel.control`, one implementation over numpy and torch), then its slew and its drive.

    Built from the MuJoCo task's config (``task_kwargs``, what ``make_cfg`` takes): the mapping is the
    MuJoCo task's :class:`~dexwheel.tasks.hand_pose.action.G20ActionMap`'s (``normalized``, ``sdk255``,
    ``nominal`` or ``delta``; its bounds, its ``normalize`` and ``hold_action``), the layers its
    :class:`~dexwheel.tasks.hand_pose.action_path.HandActionPath` (``policy`` and optionally ``hold``) with
    ``xp=torch``. Once per control step (:meth:`process_actions`) the action, in float64 as on MuJoCo, takes
    the ``out_of_range="clip"`` arithmetic (a NaN holds the previous action, 0 for ``delta``; clipped to the
    mapping's bounds; ``sdk255`` rounded to integers; never raised on: that would sync a GPU every step),
    goes through the mapping (``delta``: from the previous command) and the layers: the command. Each
    physics step (:meth:`apply_actions`) the active targets move from the last control step's toward the
    command by at most ``k * max_step`` at the ``k``-th physics step (:func:`dexwheel.sim.slew.slew_budget`;
    0 slew jumps), are completed to every joint (:class:`dexwheel.control.MimicCompletion` on torch) and:

    * ``drive="pd"``: written as the position targets of the joints' PD actuators;
    * ``drive="hard_write"``: written as the joints' positions, velocities zero, and as their PD targets
      (so the actuators push nothing; the task runs without gravity, so a free hand stays exactly at the
      written pose through the physics step). Contacts still act during each physics step: a written pose
      that penetrates is pushed for one step and written again at the next (no collision projection).

    It keeps the deepest contact over the control step's physics steps (:attr:`depth`), the accepted
    action scaled to [-1, 1] and the one before it (:attr:`normalized`, :attr:`prev_normalized`: the MuJoCo
    task's ``action`` and ``last_action``), and at a reset starts the slew and the command at the reset
    pose with the previous action the one that holds it (the MuJoCo task's reset).
    """

    cfg: HandPoseActionCfg

    def __init__(self, cfg: HandPoseActionCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        from dexwheel.control.g20_sdk import G20_MIMIC
        from dexwheel.sim.slew import slew_budget
        from dexwheel.tasks.hand_pose.action import G20ActionMap
        from dexwheel.tasks.hand_pose.action_path import HandActionPath
        from dexwheel.tasks.hand_pose.config import make_cfg

        if getattr(env, "_physics_handles_decimation", False):
            raise RuntimeError("HandPoseAction ramps its targets per physics step, but this physics backend runs "
                               "the whole decimation loop in one call (Newton actuators only)")  # fmt: skip
        task = make_cfg(**cfg.task_kwargs)
        n = self.num_envs
        ids, _ = self._asset.find_joints(list(cfg.joint_names), preserve_order=True)
        self._joint_ids = torch.tensor(ids, device=self.device, dtype=torch.int32)
        self.completion = G20_MIMIC
        self._active_cols = self._joint_ids[torch.as_tensor(G20_MIMIC.active_idx, device=self.device)].long()
        self.map = G20ActionMap(task, G20_MIMIC, 1)
        self.kind, self.hard_write = task.action, task.drive == "hard_write"
        self.path = HandActionPath(task.composer_layers, task.hold_joints, self.map.preset(task.hold_pose),
                                    (G20_MIMIC.active_lower, G20_MIMIC.active_upper), n, xp=torch,
                                    device=self.device)  # fmt: skip
        f64 = {"device": self.device, "dtype": torch.float64}
        self._low, self._high = torch.tensor(self.map.low, **f64), torch.tensor(self.map.high, **f64)
        sub, div, one = self.map.norm_params
        self._norm = (torch.tensor(sub, **f64), torch.tensor(div, **f64), float(one))
        nsub = int(env.cfg.decimation)
        #: Per physics step k of a control step (rows), the largest move of each active joint's target so far.
        self.budget = torch.tensor(slew_budget(G20_MIMIC.slew_steps(task.slew, env.physics_dt), nsub), **f64)
        na = G20_MIMIC.nactive
        start = self._asset.data.default_joint_pos.torch[:, self._active_cols].double()
        self._raw = torch.zeros(n, self.map.dim, device=self.device)
        self._accepted = torch.zeros(n, self.map.dim, **f64)  # the last accepted action (a NaN holds it)
        self.normalized = torch.zeros(n, self.map.dim, **f64)
        self.prev_normalized = torch.zeros(n, self.map.dim, **f64)
        self._command = start.clone()  # the active joints' command of this control step (after the layers)
        self._start = start.clone()  # the active targets at the start of this control step
        self._target = start.clone()  # the active targets of the last physics step
        self._zeros = torch.zeros(n, len(ids), device=self.device)
        self._substep = 0
        #: Per env, the deepest contact (m) over this control step's physics steps before the last one.
        self.depth = torch.zeros(n, device=self.device)
        self.delay = _action_delay(task.action_delay_steps, "action_delay_steps", self._accepted)
        assert na == self._command.shape[1]

    @property
    def action_dim(self) -> int:
        return self.map.dim

    @property
    def raw_actions(self) -> torch.Tensor:
        return self._raw

    @property
    def processed_actions(self) -> torch.Tensor:
        return self._command

    @property
    def targets(self) -> torch.Tensor:
        """The active joints' targets of the last physics step (the slew's state)."""
        return self._target

    @property
    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The action's range (the mapping's units: [-1, 1], 0..255, radians)."""
        return self._low, self._high

    def normalize(self, a: torch.Tensor) -> torch.Tensor:
        """Actions in their own units -> [-1, 1] (the MuJoCo task's ``G20ActionMap.normalize``)."""
        sub, div, one = self._norm
        return (a - sub) / div - one

    def hold_action(self, q_active: torch.Tensor) -> torch.Tensor:
        """The action that commands ``q_active`` (the MuJoCo task's ``G20ActionMap.hold_action``, in float64), in
        ``q_active``'s dtype."""
        q = q_active.detach().double().cpu().numpy()
        if self.kind == "sdk255":  # the SDK inverse takes one pose at a time
            hold = np.stack([self.map.hold_action(row) for row in q.reshape(-1, q.shape[-1])]).reshape(
                *q.shape[:-1], -1
            )
        else:
            hold = self.map.hold_action(q)
        return torch.as_tensor(hold, device=q_active.device, dtype=q_active.dtype)

    def process_actions(self, actions: torch.Tensor) -> None:
        self._raw[:] = actions
        a = actions.to(torch.float64)
        hold = torch.zeros_like(a) if self.kind == "delta" else self._accepted
        a = torch.where(torch.isnan(a), hold, a)
        a = torch.minimum(torch.maximum(a, self._low), self._high)
        if self.map.integer:
            a = torch.round(a)  # half to even, as np.rint
        applied = a if self.delay is None else self.delay(a)  # the MuJoCo task's latency
        goals = self.map.reference.goals(applied, self._command)  # dexwheel.control's mapping, on torch
        self._command.copy_(self.path(goals))
        self._accepted.copy_(a)
        self.prev_normalized.copy_(self.normalized)
        self.normalized.copy_(self.normalize(a))
        self._start.copy_(self._target)
        self._substep = 0
        self.depth.zero_()

    def apply_actions(self) -> None:
        if self._substep > 0:  # the contacts of the previous physics step of this control step
            torch.maximum(self.depth, contact_depth(self.num_envs, self.device), out=self.depth)
        budget = self.budget[min(self._substep, len(self.budget) - 1)]
        self._substep += 1
        diff = self._command - self._start
        # in place: rsl_rl steps under torch.inference_mode, where a new tensor would be an inference tensor that a
        # reset outside it (the evaluation episodes) cannot write
        self._target.copy_(self._command - (diff - torch.minimum(torch.maximum(diff, -budget), budget)))
        full = self.completion.complete(self._target, clip_mimic=True).float()
        asset, joints = self._asset, self._joint_ids
        if self.hard_write:
            asset.write_joint_position_to_sim_index(position=full, joint_ids=joints)
            asset.write_joint_velocity_to_sim_index(velocity=self._zeros, joint_ids=joints)
        asset.actuators.target_command.set_position_index(value=full, joint_ids=joints)

    def reset(self, env_ids=None) -> None:
        ids = _env_index(env_ids, self.num_envs, self.device)
        q0 = self._asset.data.joint_pos.torch[ids][:, self._active_cols].double()
        self._command[ids] = q0
        self._start[ids] = q0
        self._target[ids] = q0
        self.depth[ids] = 0.0
        hold = self.hold_action(q0)
        _reset_delay(self.delay, ids, hold)
        self._accepted[ids] = hold
        self._raw[ids] = hold.float()
        self.normalized[ids] = self.normalize(hold)
        self.prev_normalized[ids] = self.normalized[ids]
        manager, offset = self._env.action_manager, 0
        for name in manager.active_terms:  # this term's columns of the manager's action history
            if manager.get_term(name) is self:
                break
            offset += manager.get_term(name).action_dim
        cols = slice(offset, offset + self.action_dim)
        manager.action[ids, cols] = hold.float()
        manager.prev_action[ids, cols] = hold.float()


@configclass
class HandPoseActionCfg(ActionTermCfg):
    """:class:`HandPoseAction`'s settings: the MuJoCo task's config as ``make_cfg(**task_kwargs)``."""

    class_type: type = HandPoseAction
    joint_names: list[str] = MISSING
    """Every driven joint, in the completion's full order (ALL_JOINTS)."""
    task_kwargs: dict = MISSING
    """The MuJoCo task's config (:func:`dexwheel.tasks.hand_pose.config.make_cfg` keywords)."""


def reset_hand_pose(env: ManagerBasedRLEnv, env_ids, pose: list[float], noise: float, action_name: str,
                    asset_cfg: SceneEntityCfg = _ROBOT) -> None:  # fmt: skip
    """Start an episode at ``pose`` (the active joints) plus uniform noise of ``noise`` rad, within the limits,
    mimic joints completed (:class:`dexwheel.control.MimicCompletion`), at rest, its PD targets there."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    asset = env.scene[asset_cfg.name]
    ids = _env_index(env_ids, env.num_envs, env.device)
    q0 = torch.tensor(pose, device=env.device, dtype=torch.float64).repeat(len(ids), 1)
    if noise > 0:
        q0 += torch.empty_like(q0).uniform_(-noise, noise)
    full = term.completion.clip_and_complete(q0).float()
    joints, envs = term._joint_ids, ids.to(torch.int32)
    asset.write_joint_position_to_sim_index(position=full, joint_ids=joints, env_ids=envs)
    asset.write_joint_velocity_to_sim_index(velocity=torch.zeros_like(full), joint_ids=joints, env_ids=envs)
    asset.actuators.target_command.set_position_index(value=full, joint_ids=joints, env_ids=envs)


class HandGoalCommand(CommandTerm):
    """A goal pose of the active joints per env, drawn as the MuJoCo task's ``sample_goal`` draws it: at every
    reset and, with ``switch_steps`` > 0, every ``switch_steps`` control steps within an episode, one of
    ``presets`` (``mode="presets"``), one of ``random_goals`` (``"random"``: the MuJoCo task's collision-free
    random goals, :mod:`dexwheel.tasks.hand_pose.goal_set`), or a preset with probability ``preset_prob``
    and a random goal otherwise (``"mixed"``); each uniformly. Held joints are at their held position in
    both (the caller passes them so). Metrics: the mean and largest |q - goal| (rad)."""

    cfg: HandGoalCommandCfg

    def __init__(self, cfg: HandGoalCommandCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self.robot = env.scene[cfg.asset_name]
        ids, _ = self.robot.find_joints(list(cfg.joint_names), preserve_order=True)
        self._joint_ids = torch.tensor(ids, device=self.device).long()
        na = len(ids)
        self.presets = torch.tensor(list(cfg.presets.values()), device=self.device, dtype=torch.float32).reshape(-1, na)
        self.random_goals = torch.tensor(cfg.random_goals, device=self.device, dtype=torch.float32).reshape(-1, na)
        first = self.presets if len(self.presets) else self.random_goals
        self.goal = first[0].repeat(self.num_envs, 1)
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

    def _draw(self, pool: torch.Tensor, n: int) -> torch.Tensor:
        return pool[torch.randint(len(pool), (n,), device=self.device)]

    def _resample_command(self, env_ids) -> None:
        ids = _env_index(env_ids, self.num_envs, self.device)
        mode, n = self.cfg.mode, len(ids)
        if mode == "presets":
            self.goal[ids] = self._draw(self.presets, n)
        elif mode == "random":
            self.goal[ids] = self._draw(self.random_goals, n)
        else:
            preset = torch.rand(n, device=self.device) < self.cfg.preset_prob
            self.goal[ids] = torch.where(preset[:, None], self._draw(self.presets, n), self._draw(self.random_goals, n))

    def _update_command(self) -> None:
        pass

    def _update_metrics(self) -> None:
        err = self.errors()
        self.metrics["mean_joint_error"][:] = err.mean(dim=1)
        self.metrics["tracking_error"][:] = err.max(dim=1).values

    def errors(self) -> torch.Tensor:
        """|q - goal| per env and active joint (rad), the state as it is now."""
        return torch.abs(self.robot.data.joint_pos.torch[:, self._joint_ids] - self.goal)


@configclass
class HandGoalCommandCfg(CommandTermCfg):
    """:class:`HandGoalCommand`'s settings."""

    class_type: type = HandGoalCommand
    asset_name: str = "robot"
    joint_names: list[str] = MISSING
    """The active joints, in the goal's order."""
    presets: dict[str, list[float]] = MISSING
    """The preset goals, by name."""
    random_goals: list[list[float]] = []
    """The random goals drawn from (``mode`` ``"random"`` or ``"mixed"``)."""
    mode: str = "presets"
    """The MuJoCo task's ``goal_mode``: ``"presets"``, ``"random"`` or ``"mixed"``."""
    preset_prob: float = 0.25
    """``"mixed"``: the probability of a preset goal (the MuJoCo task's ``preset_goal_prob``)."""
    switch_steps: int = 0
    """A new goal every this many control steps within an episode (0: one goal per episode)."""
    resampling_time_range: tuple[float, float] = (0.0, 0.0)
    """Unused: :attr:`switch_steps` decides (CommandTerm's timer is a float sum of step lengths)."""


def last_action(env: ManagerBasedRLEnv, action_name: str) -> torch.Tensor:
    """The action just applied, scaled to [-1, 1] (the MuJoCo task's ``last_action`` observation)."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    return term.normalized.float()


#: What :func:`hand_step_info` records per env: the MuJoCo env's info entries of a step.
STEP_INFO_KEYS = ("mean_joint_error", "tracking_error", "max_penetration")


def hand_step_info(env: ManagerBasedRLEnv, action_name: str, command_name: str) -> torch.Tensor:
    """Never terminates; records the step's ``mean_joint_error``, ``tracking_error`` and ``max_penetration``
    (as the MuJoCo env's info: the active joints against the goal, the deepest contact over the step's physics
    steps) in ``env.dexwheel_step_info``, after the physics and before the resets (the termination terms run
    there: an evaluation reads an episode's last step from it)."""
    command: HandGoalCommand = env.command_manager.get_term(command_name)
    term: HandPoseAction = env.action_manager.get_term(action_name)
    err = command.errors()
    env.dexwheel_step_info = {"mean_joint_error": err.mean(dim=1), "tracking_error": err.max(dim=1).values,
                              "max_penetration": torch.maximum(term.depth, contact_depth(env.num_envs, env.device))}  # fmt: skip
    return torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)


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


def action_rate_l2(env: ManagerBasedRLEnv, action_name: str) -> torch.Tensor:
    """sum((a - a_prev)^2) over the action scaled to [-1, 1] (the MuJoCo task's ``action_rate_l2``)."""
    term: HandPoseAction = env.action_manager.get_term(action_name)
    return torch.sum(torch.square(term.normalized - term.prev_normalized), dim=1).float() / env.step_dt


# -- the rough task (the terrain: :mod:`dexwheel.isaaclab.terrain`) ------------------------------------------


def _terrain(env: ManagerBasedRLEnv, term: str):
    from dexwheel.isaaclab.terrain import DescriptionTerrainImporter

    terrain = env.scene.terrain
    if not isinstance(terrain, DescriptionTerrainImporter):
        raise ValueError(f"{term} reads the dexwheel terrain, and this scene has none (a task with terrain=...)")
    return terrain


def height_scan(env: ManagerBasedRLEnv, size: tuple[float, float], resolution: float, offset: float,
                asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:  # fmt: skip
    """The MuJoCo task's ``height_scan``: base height minus the ground height at its grid of points (yaw-aligned,
    x-major), minus ``offset``; the same lookup in the same description's raster
    (:func:`dexwheel.tasks.velocity.terrain.scan_heights`, on torch), not ray casts. Its clip and noise are the
    term's (:func:`~dexwheel.isaaclab.tasks.term_map.observation_term`), as on MuJoCo."""
    from dexwheel.tasks.velocity.terrain import TaskTerrain, scan_heights

    terrain = _terrain(env, "observations.height_scan")
    data = env.scene[asset_cfg.name].data
    pos, quat = data.root_link_pos_w.torch, data.root_link_quat_w.torch[:, [3, 0, 1, 2]]  # xyzw -> wxyz
    pts = torch.as_tensor(TaskTerrain.scan_pattern(tuple(size), float(resolution)), device=pos.device,
                          dtype=pos.dtype)  # fmt: skip
    return scan_heights(terrain.raster, pos, quat, pts) - offset


def terrain_out_of_bounds(
    env: ManagerBasedRLEnv, distance_buffer: float, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """The MuJoCo task's ``terrain_out_of_bounds``: the base origin within ``distance_buffer`` (m) of the
    description's outer edge (Isaac Lab's term reads a generator config this terrain has not)."""
    xmin, xmax, ymin, ymax = _terrain(env, "terminations.out_of_bounds").description.bounds
    p = env.scene[asset_cfg.name].data.root_link_pos_w.torch
    b = distance_buffer
    return (p[:, 0] < xmin + b) | (p[:, 0] > xmax - b) | (p[:, 1] < ymin + b) | (p[:, 1] > ymax - b)


class terrain_levels(ManagerTermBase):
    """The MuJoCo task's ``terrain_levels`` event as a curriculum term (Isaac Lab runs curricula first at a
    reset, before the reset events, as the MuJoCo event runs on the ending episode): Isaac Lab's
    ``terrain_levels_vel`` rule with the description's tile size. ``distance`` is the base origin's horizontal
    distance from its env origin; promote when ``distance > size_x / 2``, else demote when ``distance <
    |command (vx, vy)| * episode_length_s / 2``; past the top row a uniformly drawn level, level 0 stays 0
    (the importer's :meth:`update_env_origins`). An env's first reset only places it (the importer drew its
    tile), as the MuJoCo event's first reset draws it."""

    def __init__(self, cfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self._started = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)

    def __call__(self, env: ManagerBasedRLEnv, env_ids, command_name: str, asset_cfg: SceneEntityCfg = _ROBOT):
        terrain = _terrain(env, "events.terrain_levels")
        ids = _env_index(env_ids, env.num_envs, env.device)
        ids = ids[self._started[ids]]
        self._started[_env_index(env_ids, env.num_envs, env.device)] = True
        if len(ids):
            p = env.scene[asset_cfg.name].data.root_link_pos_w.torch[ids, :2]
            distance = torch.linalg.norm(p - env.scene.env_origins[ids, :2], dim=1)
            command = env.command_manager.get_command(command_name)[ids, :2]
            up = distance > terrain.description.tile_size[0] / 2
            down = ~up & (distance < torch.linalg.norm(command, dim=1) * env.max_episode_length_s * 0.5)
            terrain.update_env_origins(ids, up, down)
        return torch.mean(terrain.terrain_levels.float())


def record_base_position(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Never terminates; keeps each env's base origin (world, ``(N, 3)``) after the step's physics and before the
    resets in ``env.dexwheel_base_pos_w`` (the termination terms run there), so a run that judges positions reads
    an ended episode's last position, not its reset's (the step benchmark, :mod:`dexwheel.isaaclab.step_benchmark`)."""
    env.dexwheel_base_pos_w = env.scene[asset_cfg.name].data.root_link_pos_w.torch.clone()
    return torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)


def reset_base_on_terrain(env: ManagerBasedRLEnv, env_ids, asset_cfg: SceneEntityCfg = _ROBOT) -> None:
    """The MuJoCo task's ``reset_base_on_terrain``: the start pose turned to a uniform random heading about
    world z (the base origin fixed). The tile's origin is the env origin here, where :func:`reset_start_pose`
    already put the base (x, y and the ground height), so the heading is what is left to do."""
    _terrain(env, "events.reset_base_on_terrain")
    asset = env.scene[asset_cfg.name]
    ids = _env_index(env_ids, env.num_envs, env.device)
    pose = torch.cat([asset.data.root_link_pos_w.torch[ids], asset.data.root_link_quat_w.torch[ids]], dim=1)
    yaw = (2.0 * torch.rand(len(ids), device=env.device) - 1.0) * torch.pi
    cw, sz = torch.cos(yaw / 2), torch.sin(yaw / 2)  # (0, 0, sz, cw) (xyzw) times the start orientation
    x0, y0, z0, w0 = pose[:, 3].clone(), pose[:, 4].clone(), pose[:, 5].clone(), pose[:, 6].clone()
    pose[:, 3], pose[:, 4] = cw * x0 - sz * y0, cw * y0 + sz * x0
    pose[:, 5], pose[:, 6] = cw * z0 + sz * w0, cw * w0 - sz * z0
    asset.write_root_link_pose_to_sim_index(root_pose=pose, env_ids=ids.to(torch.int32))
