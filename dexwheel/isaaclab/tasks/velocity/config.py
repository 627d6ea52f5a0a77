"""Velocity tracking for the wheel-leg robots on Isaac Lab, flat and rough, built from the MuJoCo task's config.

Every number comes from :class:`dexwheel.tasks.velocity.config.WheelLegEnvCfg` (the dataclasses ``Solenopsis-v0``
and ``M20Legacy-v0`` run on): command ranges and resampling, action scales and clipping, decimation, episode
length, knee and wheel gains, and the term tables: each observation, reward and termination term of the
MuJoCo config becomes the Isaac Lab term its function maps to (:data:`REWARD_MAP`, :data:`OBSERVATION_MAP`,
:data:`TERMINATION_MAP`) under the same name, in the same order, with the same weight, scale and
parameters; each event that runs (:func:`~dexwheel.tasks.velocity.config.active_events`) becomes its Isaac
Lab events (:data:`EVENT_MAP`). Isaac Lab multiplies every reward term by the control period, as the MuJoCo
task does (``scale_rewards_by_dt``).

The action path is the MuJoCo task's own (:class:`~dexwheel.tasks.velocity.action_path.WheelLegActionPath`:
the composer and resolver of :mod:`dexwheel.control` on torch, :class:`~.action.WheelLegComposerAction`),
so every ``composer`` selection runs: ``stance`` (wheels only), ``override`` (the safety stop, switched with the
action term's ``set_override``), ``policy_joints``. ``privileged_obs`` adds the "critic" group: every column,
the policy's then the table's critic terms (rsl_rl's asymmetric actor-critic, as the MuJoCo envs' ``critic``
group). ``events.randomize_model`` is :class:`~.events.randomize_model` (the same draw
from the same ``domain_rand`` ranges; the critic's domain-randomisation columns read it).

Where the two differ (and why):

* episodes start at the settled stance, as the MuJoCo task's, from the committed table of its results
  (:mod:`dexwheel.tasks.velocity.settled`; the Isaac venv has no MuJoCo 4): a config the table lacks is computed
  by the same MuJoCo function in the core venv;
* floor contacts come from a contact sensor (net normal force > 0 on a body), in MuJoCo from contact
  sensors against the floor geom; the sensor also counts contacts with the robot's own parts;
* the observed last action is the one rsl_rl sends, which its runner clips to [-1, 1] (``clip_actions`` in
  :mod:`dexwheel.isaaclab.tasks.agents`); the MuJoCo env clips it itself (the same targets);
* friction randomisation sets the robot's shapes; the ground plane, shared by every env, is set to the range's
  low end (MuJoCo takes the larger of two geoms' friction, so the robot's draw decides each contact, as in
  MuJoCo where the env's own floor takes the draw too);
* the draws come from torch's generator (Isaac Lab seeds it), not from each env's numpy generator: the same
  distributions, not the same numbers.
"""

from __future__ import annotations

from dataclasses import MISSING

import isaaclab.envs.mdp as mdp
import numpy as np
from isaaclab.assets import ArticulationCfg, AssetBaseCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.sensors import ContactSensorCfg
from isaaclab.utils import configclass

from dexwheel.isaaclab.robots import articulation_cfg
from dexwheel.isaaclab.scenarios import start_height
from dexwheel.isaaclab.sim import GROUND_FRICTION, ground_cfg, simulation_cfg
from dexwheel.isaaclab.tasks.term_map import mapped, observation_groups
from dexwheel.isaaclab.tasks.terms import ExactObsGroup, robot_joints
from dexwheel.isaaclab.tasks.velocity.action import WheelLegComposerActionCfg
from dexwheel.isaaclab.tasks.velocity.commands import ReversingVelocityCommandCfg
from dexwheel.isaaclab.tasks.velocity.curriculum import terrain_levels
from dexwheel.isaaclab.tasks.velocity.events import randomize_model, reset_base_on_terrain, reset_start_pose
from dexwheel.isaaclab.tasks.velocity.observations import (
    MODEL_PARAM_COLUMNS,
    base_lin_vel,
    height_scan,
    joint_pos_rel,
    model_param,
    velocity_commands,
)
from dexwheel.isaaclab.tasks.velocity.rewards import lin_vel_z_l2, track_lin_vel_x_exp
from dexwheel.isaaclab.tasks.velocity.terminations import terrain_out_of_bounds
from dexwheel.isaaclab.terrain import DescriptionTerrainImporterCfg, TerrainSource, hold_terrain, task_kwargs
from dexwheel.rl.isaaclab_support import task_config, unsupported
from dexwheel.robots import get_robot
from dexwheel.robots.wheel_leg import KNEE_JOINTS, POLICY_JOINT_ORDER, START_DROP_M, WHEEL_JOINTS
from dexwheel.tasks.terms import func_path
from dexwheel.tasks.velocity.config import WheelLegEnvCfg, active_events
from dexwheel.tasks.velocity.settled import settled_stance
from dexwheel.terrain import TerrainCfg

COMMAND = "base_velocity"
ACTION = "joints"
CONTACT_THRESHOLD = 0.0  # N: any contact, as MuJoCo's contact sensors count


def _contacts(bodies) -> SceneEntityCfg:
    return SceneEntityCfg("contact_forces", body_names=list(bodies), preserve_order=True)


@configclass
class VelocitySceneCfg(InteractiveSceneCfg):
    ground: AssetBaseCfg = AssetBaseCfg(prim_path="/World/ground", spawn=ground_cfg())
    robot: ArticulationCfg = MISSING
    contact_forces: ContactSensorCfg = ContactSensorCfg(prim_path="{ENV_REGEX_NS}/Robot/.*", history_length=1)


@configclass
class CommandsCfg:
    base_velocity: mdp.UniformVelocityCommandCfg = MISSING


@configclass
class ActionsCfg:
    joints: WheelLegComposerActionCfg = MISSING


@configclass
class PolicyCfg(ExactObsGroup):
    """Filled with the MuJoCo task's policy observation terms, in its column order (:func:`_observations`)."""


@configclass
class CriticCfg(ExactObsGroup):
    """With ``privileged_obs``: the policy terms, then the table's critic terms (every column, as the MuJoCo
    envs' ``critic`` group)."""


@configclass
class ObservationsCfg:
    policy: PolicyCfg = MISSING


@configclass
class RewardsCfg:
    """Filled with the MuJoCo task's reward terms, in its order (:func:`_rewards`)."""


@configclass
class TerminationsCfg:
    """``time_out`` plus the MuJoCo task's termination terms (:func:`_terminations`)."""

    time_out: DoneTerm = DoneTerm(func=mdp.time_out, time_out=True)


@configclass
class CurriculumCfg:
    """The terrain curriculum (the MuJoCo task's ``events.terrain_levels``), when the task has one."""


@configclass
class EventsCfg:
    """The start pose (``reset_start``) plus the MuJoCo task's other events (:func:`_events`)."""

    reset_start: EventTerm = MISSING


def _refuse_unsupported(task: WheelLegEnvCfg) -> None:
    bad = unsupported(task)
    if bad:
        raise ValueError(f"the Isaac Lab wheel-leg task does not support {list(bad)}: {'; '.join(bad.values())}")


def _actions(task: str, robot: str, overrides: dict) -> ActionsCfg:
    return ActionsCfg(joints=WheelLegComposerActionCfg(asset_name="robot", task=task, robot=robot,
                                                       task_overrides=overrides))  # fmt: skip


# The Isaac Lab counterpart of each MuJoCo term function: (Isaac Lab function, its params from the MuJoCo
# term's). The term tables of the MuJoCo config drive the names, order, weights, scales and parameters; a term
# whose function has no counterpart here (a user's own) is refused by name.
_CMD = {"command_name": COMMAND}
_G = "dexwheel.tasks.mdp:"  # the generic terms
_R, _O, _T, _E = (
    "dexwheel.tasks.velocity.rewards:",
    "dexwheel.tasks.velocity.observations:",
    "dexwheel.tasks.velocity.terminations:",
    "dexwheel.tasks.velocity.events:",
)
REWARD_MAP = {
    _R + "track_lin_vel_x_exp": (track_lin_vel_x_exp, lambda p: {**_CMD, "std": p["std"]}),
    _R + "track_ang_vel_z_exp": (mdp.track_ang_vel_z_exp, lambda p: {**_CMD, "std": p["std"]}),
    _R + "lin_vel_z_l2": (lin_vel_z_l2, dict),
    _R + "ang_vel_xy_l2": (mdp.ang_vel_xy_l2, dict),
    _R + "flat_orientation_l2": (mdp.flat_orientation_l2, dict),
    _G + "joint_torques_l2": (mdp.joint_torques_l2, dict),
    _G + "action_rate_l2": (mdp.action_rate_l2, dict),
    _R + "undesired_contacts": (mdp.undesired_contacts,
                                lambda p: {"threshold": CONTACT_THRESHOLD, "sensor_cfg": _contacts(p["bodies"])}),
    _G + "is_terminated": (mdp.is_terminated, dict),
}  # fmt: skip
OBSERVATION_MAP = {
    _O + "base_ang_vel": (mdp.base_ang_vel, dict),
    _O + "projected_gravity": (mdp.projected_gravity, dict),
    _O + "velocity_commands": (velocity_commands, lambda p: dict(_CMD)),
    # the offset (the stance) is the task's, filled in by _observations
    _O + "joint_pos_rel": (joint_pos_rel, lambda p: {"asset_cfg": robot_joints(KNEE_JOINTS)}),
    _O + "joint_vel_rel": (mdp.joint_vel_rel, lambda p: {"asset_cfg": robot_joints(POLICY_JOINT_ORDER)}),
    _G + "last_action": (mdp.last_action, dict),
    _O + "base_lin_vel": (base_lin_vel, dict),
    **{_O + c: (model_param, lambda p, c=c: {"column": c}) for c in MODEL_PARAM_COLUMNS},
    _O + "height_scan": (height_scan, dict),  # the same lookup in the same description's raster
}
TERMINATION_MAP = {
    _T + "illegal_contact": (mdp.illegal_contact,
                             lambda p: {"threshold": CONTACT_THRESHOLD, "sensor_cfg": _contacts(p["bodies"])}),
    _T + "bad_orientation": (mdp.bad_orientation, lambda p: {"limit_angle": p["limit_angle"]}),
    _T + "terrain_out_of_bounds": (terrain_out_of_bounds, lambda p: {"distance_buffer": p["distance_buffer"]}),
}  # fmt: skip


def _start_pose(noise: float, task: WheelLegEnvCfg) -> dict[str, EventTerm]:
    """The start pose at each reset (the settled stance), knee angles and base velocity uniform in +-``noise``,
    the base height following the knees: the MuJoCo task's start pose plus its ``reset_joints_and_base``."""
    knees, height = settled_stance(task)
    offset = height - start_height(task.robot, np.array(knees))
    return {"reset_start": EventTerm(func=reset_start_pose, mode="reset", params={
        "knees": list(knees), "height_offset": offset, "noise": noise, "robot": task.robot,
        "asset_cfg": robot_joints(KNEE_JOINTS)})}  # fmt: skip


def _randomize_model(name: str, interval, task: WheelLegEnvCfg) -> dict[str, EventTerm]:
    d = task.domain_rand
    return {name: EventTerm(func=randomize_model, mode="reset", params={
        "friction": d.friction, "base_mass_add": d.base_mass_add, "link_mass_scale": d.link_mass_scale,
        "base_com_offset": d.base_com_offset, "kp_scale": d.kp_scale, "kd_scale": d.kd_scale,
        "nominal_friction": float(get_robot(task.robot).contact.friction[0]), "action_name": ACTION})}  # fmt: skip


def _push(name: str, interval: tuple[float, float] | None, task: WheelLegEnvCfg) -> dict[str, EventTerm]:
    v = task.domain_rand.push_velocity
    return {name: EventTerm(func=mdp.push_by_setting_velocity, mode="interval", interval_range_s=interval,
                            params={"velocity_range": {"x": (-v, v), "y": (-v, v)}})}  # fmt: skip


def _curriculum(task: WheelLegEnvCfg) -> bool:
    """Whether the terrain has a curriculum: a generated grid with ``curriculum`` on (a fixed description has
    none, as on MuJoCo: :class:`~dexwheel.tasks.velocity.terrain.TaskTerrain`)."""
    return isinstance(task.terrain, TerrainCfg) and task.terrain.curriculum


def _terrain_levels(name: str, interval, task: WheelLegEnvCfg) -> dict[str, CurrTerm]:
    # the curriculum off: the importer's levels stay as drawn (every level, apply_task_cfg), as on MuJoCo
    if not _curriculum(task):
        return {}
    return {name: CurrTerm(func=terrain_levels, params={"command_name": COMMAND})}


def _reset_base_on_terrain(name: str, interval, task: WheelLegEnvCfg) -> dict[str, EventTerm]:
    return {name: EventTerm(func=reset_base_on_terrain, mode="reset")}


#: The Isaac Lab terms of each MuJoCo event function: ``(name, interval, task config) -> {name: term}``, event
#: terms or curriculum terms (``terrain_levels``: Isaac Lab runs its curriculum at the reset, before the events)
#: (they read the same config fields as the MuJoCo events).
EVENT_MAP = {
    _E + "randomize_model": _randomize_model,
    _E + "reset_joints_and_base": lambda name, interval, task: _start_pose(task.reset_noise_scale, task),
    _E + "push_by_setting_velocity": _push,
    _E + "terrain_levels": _terrain_levels,
    _E + "reset_base_on_terrain": _reset_base_on_terrain,
}


def _mapped(table, mapping, section: str) -> dict:
    return mapped(table, mapping, section, "wheel-leg")


def _rewards(task: WheelLegEnvCfg) -> RewardsCfg:
    cfg = RewardsCfg()
    for name, (func, params, t) in _mapped(task.rewards, REWARD_MAP, "rewards").items():
        setattr(cfg, name, RewTerm(func=func, weight=float(t.weight), params=params))
    return cfg


def _observations(task: WheelLegEnvCfg) -> ObservationsCfg:
    """The policy group; with ``privileged_obs`` the critic group too (policy columns first, as MuJoCo's)."""

    def params_of(func, params: dict) -> dict:
        return {**params, "offset": list(task.stance_pose)} if func is joint_pos_rel else params

    policy, critic = observation_groups(task.observations, task.privileged_obs, OBSERVATION_MAP,
                                        "wheel-leg", PolicyCfg(), CriticCfg(), params_of)  # fmt: skip
    out = ObservationsCfg(policy=policy)
    if critic is not None:
        out.critic = critic
    return out


def _terminations(task: WheelLegEnvCfg) -> TerminationsCfg:
    cfg = TerminationsCfg()
    for name, (func, params, _) in _mapped(task.terminations, TERMINATION_MAP, "terminations").items():
        setattr(cfg, name, DoneTerm(func=func, params=params))
    return cfg


def _events(task: WheelLegEnvCfg) -> tuple[EventsCfg, CurriculumCfg]:
    active = active_events(task)
    unknown = {f"events.{k}": func_path(t.func) for k, (t, _) in active.items() if func_path(t.func) not in EVENT_MAP}
    if unknown:
        raise ValueError(f"the Isaac Lab wheel-leg task has no counterpart of {unknown}; "
                         "run that config on the MuJoCo env, or add the event to dexwheel/isaaclab/tasks")  # fmt: skip
    terms = _start_pose(0.0, task)  # every reset starts from the start pose, noise or not
    for name, (t, interval) in active.items():
        terms.update(EVENT_MAP[func_path(t.func)](name, interval, task))
    cfg, curriculum = EventsCfg(reset_start=terms.pop("reset_start")), CurriculumCfg()
    for name, term in terms.items():
        setattr(curriculum if isinstance(term, CurrTerm) else cfg, name, term)
    return cfg, curriculum


def apply_task_cfg(env: ManagerBasedRLEnvCfg, task: WheelLegEnvCfg, overrides: dict | None = None,
                   name: str = "velocity") -> None:  # fmt: skip
    """Fill an Isaac Lab env config from the MuJoCo task's config (see the module docstring); ``overrides``
    are the keywords that made ``task`` from registered task ``name``'s config (the action term rebuilds it)."""
    _refuse_unsupported(task)
    desc = get_robot(task.robot)
    settled_knees, settled_height = settled_stance(task)
    knees = dict(zip(KNEE_JOINTS, settled_knees, strict=True))
    gains = {
        **{j: (task.knee_kp, task.knee_kd) for j in KNEE_JOINTS},
        **{j: (0.0, task.wheel_kd) for j in WHEEL_JOINTS},
    }
    height = settled_height + START_DROP_M
    env.decimation = task.decimation
    env.episode_length_s = task.episode_length_s
    # device "cuda:0" as Isaac Lab's default (parse_env_cfg sets the real one); CUDA graphs only act on a GPU
    env.sim = simulation_cfg(desc, "cuda:0")
    env.sim.render_interval = task.decimation
    env.scene.robot = articulation_cfg(task.robot, "{ENV_REGEX_NS}/Robot", knees, (0.0, 0.0, height), gains=gains)
    randomizes = _E + "randomize_model" in {func_path(t.func) for t, _ in active_events(task).values()}
    friction = GROUND_FRICTION
    if randomizes and task.domain_rand.friction is not None:  # the shared ground must not cap the robot's draw
        friction = min(GROUND_FRICTION, task.domain_rand.friction[0])
        env.scene.ground = AssetBaseCfg(prim_path="/World/ground", spawn=ground_cfg(friction))
    if task.terrain is not None:  # the terrain in place of the plane, the env origins its tiles' (by level)
        source = TerrainSource(task.terrain)  # a TerrainCfg, or a fixed description (every env on its origin)
        env.scene.ground = None
        env.scene.terrain = DescriptionTerrainImporterCfg(
            prim_path="/World/ground", terrain=source, friction=friction,
            max_init_terrain_level=task.terrain.max_init_terrain_level if _curriculum(task) else None)  # fmt: skip
    c = task.commands
    env.commands = CommandsCfg(base_velocity=ReversingVelocityCommandCfg(
        asset_name="robot", resampling_time_range=c.resampling_time_s, rel_standing_envs=c.rel_standing_envs,
        rel_reversal=c.rel_reversal,
        heading_command=False, rel_heading_envs=0.0, debug_vis=False,
        ranges=mdp.UniformVelocityCommandCfg.Ranges(lin_vel_x=c.lin_vel_x, lin_vel_y=(0.0, 0.0), ang_vel_z=c.ang_vel_z),
    ))  # fmt: skip
    env.actions = _actions(name, task.robot, hold_terrain(dict(overrides or {})))
    env.observations = _observations(task)
    env.rewards = _rewards(task)
    env.terminations = _terminations(task)
    env.events, env.curriculum = _events(task)


@configclass
class VelocityEnvCfg(ManagerBasedRLEnvCfg):
    """A wheel-leg velocity task on Isaac Lab: the registered task ``task`` (``velocity``, ``velocity_rough``: its
    config, :mod:`dexwheel.tasks.registry`) for ``robot``, ``task_overrides`` on top (``make_cfg`` keywords, as
    ``gymnasium.make("Solenopsis-v0", **kwargs)`` takes them); a task with terrain on the terrain built from the same
    description (:mod:`dexwheel.isaaclab.terrain`). Each registered id is a subclass naming its task and robot
    (:mod:`dexwheel.isaaclab.tasks`)."""

    task: str = "velocity"
    robot: str = "solenopsis"
    task_overrides: dict = {}
    scene: VelocitySceneCfg = VelocitySceneCfg(num_envs=4096, env_spacing=3.0)

    def __post_init__(self):
        self.task_overrides = hold_terrain(self.task_overrides)  # before configclass copies it (a frozen terrain)
        task = task_config(self.task, self.robot, task_kwargs(self.task_overrides))
        apply_task_cfg(self, task, self.task_overrides, self.task)
