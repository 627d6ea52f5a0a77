"""Flat-ground velocity tracking for the wheel-leg robots on Isaac Lab, built from the MuJoCo task's config.

Every number comes from :class:`dexwheel.envs.wheel_leg_cfg.WheelLegEnvCfg` (the dataclasses ``Solenopsis-v0``
and ``M20Legacy-v0`` run on): command ranges and resampling, action scales and clipping, observation terms
and scales, reward terms under the same names with the same weights and widths, terminations, decimation,
episode length, knee and wheel gains. Isaac Lab multiplies every reward term by the control period, as
the MuJoCo task does (``rewards.scale_by_step_dt``).

Where the two differ (and why):

* episodes start at the commanded stance 0.5 mm above the ground and sag into the settled stance in the
  first ~0.3 s; the MuJoCo task pre-settles once and starts there;
* floor contacts come from a contact sensor (net normal force > 0 on a body), in MuJoCo from contact
  sensors against the floor geom; the sensor also counts contacts with the robot's own parts;
* actions are clipped after scaling (the same targets); the observed last action is the one rsl_rl sends,
  which its runner clips to [-1, 1] (``clip_actions`` in :mod:`dexwheel.isaaclab.tasks.agents`);
* not yet here: the composer's ``stance`` and ``override`` layers, privileged observations and domain
  randomisation (a config that asks for them is refused, naming the field).
"""

from __future__ import annotations

from dataclasses import MISSING

import isaaclab.envs.mdp as mdp
import numpy as np
from isaaclab.assets import ArticulationCfg, AssetBaseCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.sensors import ContactSensorCfg
from isaaclab.utils import configclass

from dexwheel.envs.wheel_leg_cfg import REWARD_TERMS, WheelLegEnvCfg, make_cfg
from dexwheel.isaaclab.robots import articulation_cfg
from dexwheel.isaaclab.scenarios import DROP_M, start_height
from dexwheel.isaaclab.sim import ground_cfg, simulation_cfg
from dexwheel.isaaclab.tasks import mdp as dw
from dexwheel.robots import get_robot
from dexwheel.robots.wheel_leg import KNEE_JOINTS, POLICY_JOINT_ORDER, WHEEL_JOINTS

COMMAND = "base_velocity"
CONTACT_THRESHOLD = 0.0  # N: any contact, as MuJoCo's contact sensors count


def _contacts(bodies) -> SceneEntityCfg:
    return SceneEntityCfg("contact_forces", body_names=list(bodies), preserve_order=True)


@configclass
class WheelLegSceneCfg(InteractiveSceneCfg):
    ground: AssetBaseCfg = AssetBaseCfg(prim_path="/World/ground", spawn=ground_cfg())
    robot: ArticulationCfg = MISSING
    contact_forces: ContactSensorCfg = ContactSensorCfg(prim_path="{ENV_REGEX_NS}/Robot/.*", history_length=1)


@configclass
class CommandsCfg:
    base_velocity: mdp.UniformVelocityCommandCfg = MISSING


@configclass
class ActionsCfg:
    knees: mdp.JointPositionActionCfg = MISSING
    wheels: mdp.JointVelocityActionCfg = MISSING


@configclass
class PolicyCfg(dw.ExactObsGroup):
    base_ang_vel: ObsTerm = MISSING
    projected_gravity: ObsTerm = ObsTerm(func=mdp.projected_gravity)
    velocity_commands: ObsTerm = ObsTerm(func=dw.velocity_commands, params={"command_name": COMMAND})
    joint_pos_rel: ObsTerm = ObsTerm(func=mdp.joint_pos_rel, params={"asset_cfg": dw.robot_joints(KNEE_JOINTS)})
    joint_vel_rel: ObsTerm = MISSING
    last_action: ObsTerm = ObsTerm(func=mdp.last_action)


@configclass
class ObservationsCfg:
    policy: PolicyCfg = MISSING


@configclass
class RewardsCfg:
    track_lin_vel_x_exp: RewTerm = MISSING
    track_ang_vel_z_exp: RewTerm = MISSING
    lin_vel_z_l2: RewTerm = MISSING
    ang_vel_xy_l2: RewTerm = MISSING
    flat_orientation_l2: RewTerm = MISSING
    joint_torques_l2: RewTerm = MISSING
    action_rate_l2: RewTerm = MISSING
    undesired_contacts: RewTerm = MISSING
    termination_penalty: RewTerm = MISSING


@configclass
class TerminationsCfg:
    time_out: DoneTerm = DoneTerm(func=mdp.time_out, time_out=True)
    contact: DoneTerm = MISSING
    tilt: DoneTerm = MISSING


@configclass
class EventsCfg:
    reset_base: EventTerm = MISSING
    reset_knees: EventTerm = MISSING


def _refuse_unsupported(task: WheelLegEnvCfg) -> None:
    unsupported = {
        "composer.layers": task.composer.layers != ("policy",),
        "composer.policy_joints": task.composer.policy_joints not in (None, "all", POLICY_JOINT_ORDER),
        "observations.privileged": task.observations.privileged,
        "domain_rand.enabled": task.domain_rand.enabled,
        "rewards.scale_by_step_dt": not task.rewards.scale_by_step_dt,  # Isaac Lab always scales
    }
    bad = [name for name, is_bad in unsupported.items() if is_bad]
    if bad:
        raise ValueError(f"the Isaac Lab wheel-leg task does not support {bad} yet; use the MuJoCo env for them")


def _actions(task: WheelLegEnvCfg) -> ActionsCfg:
    a, stance = task.actions, dict(zip(KNEE_JOINTS, task.stance_pose, strict=True))
    knee_clip = {j: (q - a.knee_scale, q + a.knee_scale) for j, q in stance.items()} if a.clip else None
    wheel_clip = {".*": (-a.wheel_velocity_scale, a.wheel_velocity_scale)} if a.clip else None
    return ActionsCfg(
        knees=mdp.JointPositionActionCfg(asset_name="robot", joint_names=list(KNEE_JOINTS), preserve_order=True,
                                         scale=a.knee_scale, use_default_offset=True, clip=knee_clip),
        wheels=mdp.JointVelocityActionCfg(asset_name="robot", joint_names=list(WHEEL_JOINTS), preserve_order=True,
                                          scale=a.wheel_velocity_scale, use_default_offset=False, clip=wheel_clip),
    )  # fmt: skip


def _rewards(task: WheelLegEnvCfg) -> RewardsCfg:
    r, cmd = task.rewards, {"command_name": COMMAND}
    terms = {
        "track_lin_vel_x_exp": (dw.track_lin_vel_x_exp, {**cmd, "std": r.lin_vel_std}),
        "track_ang_vel_z_exp": (mdp.track_ang_vel_z_exp, {**cmd, "std": r.ang_vel_std}),
        "lin_vel_z_l2": (dw.lin_vel_z_l2, {}),
        "ang_vel_xy_l2": (mdp.ang_vel_xy_l2, {}),
        "flat_orientation_l2": (mdp.flat_orientation_l2, {}),
        "joint_torques_l2": (mdp.joint_torques_l2, {}),
        "action_rate_l2": (mdp.action_rate_l2, {}),
        "undesired_contacts": (mdp.undesired_contacts, {"threshold": CONTACT_THRESHOLD,
                                                        "sensor_cfg": _contacts(r.undesired_contact_bodies)}),
        "termination_penalty": (mdp.is_terminated, {}),
    }  # fmt: skip
    assert tuple(terms) == REWARD_TERMS, "the MuJoCo task's reward terms changed: map the new ones here"
    return RewardsCfg(
        **{name: RewTerm(func=f, weight=float(getattr(r, name)), params=p) for name, (f, p) in terms.items()}
    )


def apply_task_cfg(env: ManagerBasedRLEnvCfg, task: WheelLegEnvCfg) -> None:
    """Fill an Isaac Lab env config from the MuJoCo task's config (see the module docstring)."""
    _refuse_unsupported(task)
    desc = get_robot(task.robot)
    knees = dict(zip(KNEE_JOINTS, task.stance_pose, strict=True))
    gains = {
        **{j: (task.knee_kp, task.knee_kd) for j in KNEE_JOINTS},
        **{j: (0.0, task.wheel_kd) for j in WHEEL_JOINTS},
    }
    height = start_height(task.robot, np.array(task.stance_pose)) + DROP_M
    env.decimation = task.decimation
    env.episode_length_s = task.episode_length_s
    # device "cuda:0" as Isaac Lab's default (parse_env_cfg sets the real one); CUDA graphs only act on a GPU
    env.sim = simulation_cfg(desc, "cuda:0")
    env.sim.render_interval = task.decimation
    env.scene.robot = articulation_cfg(task.robot, "{ENV_REGEX_NS}/Robot", knees, (0.0, 0.0, height), gains=gains)
    c = task.commands
    env.commands = CommandsCfg(base_velocity=dw.ReversingVelocityCommandCfg(
        asset_name="robot", resampling_time_range=c.resampling_time_s, rel_standing_envs=c.rel_standing_envs,
        rel_reversal=c.rel_reversal,
        heading_command=False, rel_heading_envs=0.0, debug_vis=False,
        ranges=mdp.UniformVelocityCommandCfg.Ranges(lin_vel_x=c.lin_vel_x, lin_vel_y=(0.0, 0.0), ang_vel_z=c.ang_vel_z),
    ))  # fmt: skip
    env.actions = _actions(task)
    o = task.observations
    env.observations = ObservationsCfg(policy=PolicyCfg(
        base_ang_vel=ObsTerm(func=mdp.base_ang_vel, scale=o.ang_vel_scale),
        joint_vel_rel=ObsTerm(func=mdp.joint_vel_rel, scale=o.joint_vel_scale,
                              params={"asset_cfg": dw.robot_joints(POLICY_JOINT_ORDER)}),
    ))  # fmt: skip
    env.rewards = _rewards(task)
    t = task.terminations
    env.terminations = TerminationsCfg(
        contact=DoneTerm(func=mdp.illegal_contact, params={"threshold": CONTACT_THRESHOLD,
                                                           "sensor_cfg": _contacts(t.contact_bodies)}),
        tilt=DoneTerm(func=mdp.bad_orientation, params={"limit_angle": t.max_tilt_rad}),
    )  # fmt: skip
    noise = task.reset_noise_scale
    env.events = EventsCfg(
        reset_base=EventTerm(func=mdp.reset_root_state_uniform, mode="reset", params={
            "pose_range": {}, "velocity_range": {k: (-noise, noise) for k in ("x", "y", "z", "roll", "pitch", "yaw")}}),
        reset_knees=EventTerm(func=mdp.reset_joints_by_offset, mode="reset", params={
            "position_range": (-noise, noise), "velocity_range": (0.0, 0.0), "asset_cfg": dw.robot_joints(KNEE_JOINTS)}),
    )  # fmt: skip


@configclass
class WheelLegFlatEnvCfg(ManagerBasedRLEnvCfg):
    """A wheel-leg robot's flat velocity-tracking task; ``robot`` and ``task_overrides`` pick the config
    (``make_cfg`` keywords, as ``gymnasium.make("Solenopsis-v0", **kwargs)`` takes them)."""

    robot: str = "solenopsis"
    task_overrides: dict = {}
    scene: WheelLegSceneCfg = WheelLegSceneCfg(num_envs=4096, env_spacing=3.0)

    def __post_init__(self):
        apply_task_cfg(self, make_cfg(robot=self.robot, **self.task_overrides))


@configclass
class SolenopsisFlatEnvCfg(WheelLegFlatEnvCfg):
    robot: str = "solenopsis"


@configclass
class M20LegacyFlatEnvCfg(WheelLegFlatEnvCfg):
    robot: str = "m20_legacy"
