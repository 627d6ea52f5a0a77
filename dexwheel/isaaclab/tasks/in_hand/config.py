"""The G20's object tasks on Isaac Lab, built from the MuJoCo tasks' config (:class:`~dexwheel.tasks.in_hand.config.
InHandCfg`: ``task_overrides`` are ``gymnasium.make("G20Rotate-v0", ...)``'s keywords).

``Dexwheel-InHand-Rotate-G20Left-v0`` / ``-G20Right-v0`` are ``G20Rotate-v0`` (the capsule lying across the fingers,
rolled about ``+y``), ``Dexwheel-InHand-RotateZ-*`` ``G20RotateZ-v0``, ``Dexwheel-InHand-Reorient-G20Left-v0``
/ ``-G20Right-v0`` ``G20Reorient-v0``: the hand palm up on its fixed mount (the description's USD turned by
:data:`~dexwheel.tasks.in_hand.objects.PALM_UP`) with the object spawned from the same
:class:`~dexwheel.tasks.in_hand.objects.ObjectSpec` and the config's ``physics`` section (:mod:`.scene`: the physics
step, the joints' armature, the contact model with its fingertip pads; the object's shape, size, length, mass and
friction); the control rate (``control_hz`` -> decimation) and the episode length
(``episode_length_s``); the actions through the G20's one action path, slew and PD drive
(:class:`~dexwheel.isaaclab.tasks.hand_pose.action.HandPoseAction` from the config's ``actions``, ``drive`` and
``composer`` sections); the command (:class:`.InHandCommand`: the axis or the goal); and the term tables: each
observation, reward, termination and reset event of the config becomes the Isaac Lab term its function maps to
(:data:`REWARD_MAP`, :data:`OBSERVATION_MAP`, :data:`TERMINATION_MAP`, :data:`EVENT_MAP`) under the same name, in
the same order, with the same weight, scale, noise, history and parameters; the "critic" group (``privileged_obs``)
holds every column, the policy's first, as the MuJoCo env's observation. A term without a counterpart is refused by
name. MuJoCo-Warp's contact buffers hold every pair of collision shapes that can touch, the object's too
(:func:`~dexwheel.isaaclab.tasks.hand_pose.config.shape_pairs`).

Where the two differ (and why):

* the grasp drawn at a reset, the reorientation goals and the domain randomisations' values come from torch's
  generator: the same distributions, not the same draws as a MuJoCo env with the same seed;
* Newton zeroes the geom margins (the MuJoCo scene's are 0.5 mm): the object rests 1.1 mm lower on the palm
  (the cross-backend in-hand case, docs/how-to/isaaclab.md);
* actions take the ``out_of_range="clip"`` arithmetic and are never raised on (a GPU sync per step); no divergence
  containment;
* refused by name (:data:`~dexwheel.rl.isaaclab_support.HAND_REFUSED`): other contact excludes (the USD carries
  the description's) and rendering.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import MISSING

import isaaclab.envs.mdp as mdp
from isaaclab.assets import ArticulationCfg, RigidObjectCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.utils import configclass

from dexwheel.control.g20_sdk import G20_MIMIC
from dexwheel.isaaclab.sim import simulation_cfg
from dexwheel.isaaclab.tasks.hand_pose.action import HandPoseActionCfg
from dexwheel.isaaclab.tasks.hand_pose.config import action_kwargs, one_hand, preset_poses, shape_pairs
from dexwheel.isaaclab.tasks.hand_pose.observations import last_action
from dexwheel.isaaclab.tasks.hand_pose.rewards import action_rate_l2
from dexwheel.isaaclab.tasks.in_hand import observations as obs
from dexwheel.isaaclab.tasks.in_hand import rewards as rew
from dexwheel.isaaclab.tasks.in_hand.commands import InHandCommandCfg
from dexwheel.isaaclab.tasks.in_hand.events import (
    randomize_friction,
    randomize_object_mass,
    randomize_object_size,
    reset_from_grasps,
)
from dexwheel.isaaclab.tasks.in_hand.scene import contact_model, hand_cfg, object_cfg
from dexwheel.isaaclab.tasks.in_hand.terminations import in_hand_step, object_dropped
from dexwheel.isaaclab.tasks.term_map import mapped, observation_groups
from dexwheel.isaaclab.tasks.terms import ExactObsGroup, robot_joints
from dexwheel.rl.isaaclab_support import task_config, unsupported
from dexwheel.robots import get_robot
from dexwheel.robots.g20 import ALL_JOINTS
from dexwheel.tasks.hand.config import control_substeps
from dexwheel.tasks.in_hand.config import InHandCfg
from dexwheel.tasks.in_hand.objects import DROP_POINT, PALM_NORMAL, PALM_UP
from dexwheel.tasks.registry import task_record

COMMAND = "object_goal"
ACTION = "joint_targets"
_R = "dexwheel.tasks.in_hand.rewards:"
_G = "dexwheel.tasks.mdp:"
_O = "dexwheel.tasks.in_hand.observations:"
_T = "dexwheel.tasks.in_hand.terminations:"
_E = "dexwheel.tasks.in_hand.events:"
_CMD = {"command_name": COMMAND}


def _with_command(p: dict) -> dict:
    return {**p, **_CMD}


#: The MuJoCo tasks' term functions and their Isaac Lab counterparts (:func:`~dexwheel.isaaclab.tasks.term_map.mapped`).
REWARD_MAP = {
    _R + "rotation_velocity": (rew.rotation_velocity, _with_command),
    _R + "object_lin_vel_l2": (rew.object_lin_vel_l2, _with_command),
    _R + "object_drift_l2": (rew.object_drift_l2, _with_command),
    _R + "object_drift_excess": (rew.object_drift_excess, _with_command),
    _R + "object_tilt": (rew.object_tilt, _with_command),
    _G + "joint_torques_l2": (rew.joint_torques_l2, lambda p: {}),
    _G + "action_rate_l2": (action_rate_l2, lambda p: {"action_name": ACTION}),
    _R + "orientation_tracking": (rew.orientation_tracking, _with_command),
    _R + "goal_reached": (rew.goal_reached, _with_command),
    _G + "is_terminated": (rew.is_terminated, lambda p: {}),
}
OBSERVATION_MAP = {
    _G + "joint_pos": (mdp.joint_pos, lambda p: {"asset_cfg": robot_joints(ALL_JOINTS)}),
    _G + "joint_vel": (mdp.joint_vel, lambda p: {"asset_cfg": robot_joints(ALL_JOINTS)}),
    _G + "last_action": (last_action, lambda p: {"action_name": ACTION}),
    _O + "object_pos_rel": (obs.object_pos_rel, _with_command),
    _O + "object_quat": (obs.object_quat, _with_command),
    _O + "object_lin_vel": (obs.object_lin_vel, _with_command),
    _O + "object_ang_vel": (obs.object_ang_vel, _with_command),
    _O + "fingertip_contacts": (obs.fingertip_contacts, lambda p: {}),
    _O + "rotation_axis": (obs.rotation_axis, _with_command),
    _O + "goal_quat": (mdp.generated_commands, _with_command),
    _O + "gait_phase": (obs.gait_phase, lambda p: {"period": p.get("period", 0.52)}),
}
TERMINATION_MAP = {_T + "object_dropped": (object_dropped, _with_command)}


def _defaults(name: str, p: dict) -> dict:
    """``p`` over the MuJoCo event ``name``'s parameter defaults (an entry may leave them out)."""
    from dexwheel.tasks.in_hand import events

    sig = inspect.signature(getattr(events, name)).parameters.values()
    return {**{q.name: q.default for q in sig if q.default is not inspect.Parameter.empty}, **p}


#: Reset events, in table order: the grasp, then the domain randomisations (each env's own draw per episode, as the
#: MuJoCo task's): the object's mass and size (:mod:`.events`: its shape and inertia with them), the friction of the
#: object and the hand, one value (:class:`.randomize_friction`), and each joint's PD gains times a factor (Isaac
#: Lab's ``randomize_actuator_gains``).
EVENT_MAP = {
    _E + "reset_from_grasps": (reset_from_grasps, lambda p: {"action_name": ACTION, **_CMD}),
    _E + "randomize_object_mass": (randomize_object_mass, lambda p: {
        "mass_range": tuple(_defaults("randomize_object_mass", p)["mass_range"]), **_CMD}),
    _E + "randomize_object_size": (randomize_object_size, lambda p: {
        "sizes": [float(v) for v in _defaults("randomize_object_size", p)["sizes"]], **_CMD}),
    _E + "randomize_friction": (randomize_friction, lambda p: {
        "friction_range": tuple(_defaults("randomize_friction", p)["friction_range"])}),
    _E + "randomize_pd_gains": (mdp.randomize_actuator_gains, lambda p: {
        "asset_cfg": SceneEntityCfg("robot"), "operation": "scale", "distribution": "uniform",
        "stiffness_distribution_params": tuple(_defaults("randomize_pd_gains", p)["kp_scale"]),
        "damping_distribution_params": tuple(_defaults("randomize_pd_gains", p)["kd_scale"])}),
}  # fmt: skip


@configclass
class InHandSceneCfg(InteractiveSceneCfg):
    # no ground: the MuJoCo scene's floor is render-only
    robot: ArticulationCfg = MISSING
    object: RigidObjectCfg = MISSING


@configclass
class CommandsCfg:
    object_goal: InHandCommandCfg = MISSING


@configclass
class ActionsCfg:
    joint_targets: HandPoseActionCfg = MISSING


@configclass
class PolicyCfg(ExactObsGroup):
    """The ``policy`` terms of the observation table."""


@configclass
class CriticCfg(ExactObsGroup):
    """With ``privileged_obs``: the policy terms, then the table's critic terms (every column, as the MuJoCo env's
    observation)."""


@configclass
class ObservationsCfg:
    policy: PolicyCfg = PolicyCfg()


@configclass
class RewardsCfg:
    """Filled from the reward table (:func:`apply_task_cfg`)."""


@configclass
class TerminationsCfg:
    time_out: DoneTerm = DoneTerm(func=mdp.time_out, time_out=True)
    # never terminates: the goals reached and the step's record, before the rewards and resets
    in_hand_step: DoneTerm = DoneTerm(func=in_hand_step, params=_CMD)


@configclass
class EventsCfg:
    """Filled from the event table (:func:`apply_task_cfg`)."""


def _refuse_unsupported(task: InHandCfg) -> None:
    bad = unsupported(task)
    if bad:
        why = "; ".join(f"{name}: {reason}" for name, reason in bad.items())
        raise ValueError(f"the Isaac Lab G20 object tasks do not support {list(bad)} as set ({why})")


def _observations(task: InHandCfg) -> ObservationsCfg:
    policy, critic = observation_groups(task.observations, task.privileged_obs, OBSERVATION_MAP, "G20 object",
                                        PolicyCfg(), CriticCfg())  # fmt: skip
    out = ObservationsCfg(policy=policy)
    if critic is not None:
        out.critic = critic
    return out


def _terms(task: InHandCfg) -> tuple[RewardsCfg, TerminationsCfg, EventsCfg]:
    rewards, terminations, events = RewardsCfg(), TerminationsCfg(), EventsCfg()
    for name, (func, params, t) in mapped(task.rewards, REWARD_MAP, "rewards", "G20 object").items():
        setattr(rewards, name, RewTerm(func=func, weight=float(t.weight), params=params))
    for name, (func, params, _) in mapped(task.terminations, TERMINATION_MAP, "terminations", "G20 object").items():
        setattr(terminations, name, DoneTerm(func=func, params=params))
    grasps = {
        "hand": task.hand,
        "object": dataclasses.asdict(task.object),
        "path": task.grasps,
        "sizes": event_sizes(task),
        "physics": task.physics.as_dict(),
    }
    for name, (func, params, _) in mapped(task.events, EVENT_MAP, "events", "G20 object").items():
        extra = grasps if func is reset_from_grasps else {}
        setattr(events, name, EventTerm(func=func, mode="reset", params={**extra, **params}))
    return rewards, terminations, events


def event_sizes(task: InHandCfg) -> list[float]:
    """Every object size the config's ``randomize_object_size`` events may draw (none without one)."""
    mapped_events = mapped(task.events, EVENT_MAP, "events", "G20 object").values()
    return [size for func, params, _ in mapped_events if func is randomize_object_size for size in params["sizes"]]


def _refuse_scaled_length(task: InHandCfg) -> None:
    """A size event scales the whole object: refused for an object with its own length, as the MuJoCo task does."""
    for name, (func, _, _) in mapped(task.events, EVENT_MAP, "events", "G20 object").items():
        if func is randomize_object_size and task.object.length is not None:
            raise ValueError(f"events.{name}: scales the whole object; the {task.object.shape}'s own length "
                             f"(object.length={task.object.length:g}) would scale with it")  # fmt: skip


def apply_task_cfg(env: ManagerBasedRLEnvCfg, task: InHandCfg) -> None:
    """Fill an Isaac Lab env config from the MuJoCo task's config (see the module docstring)."""
    _refuse_unsupported(task)
    _refuse_scaled_length(task)
    robot = f"g20_{task.hand}"
    desc = get_robot(robot)
    physics = task.physics
    env.decimation = control_substeps(task.control_hz, physics.timestep, "G20InHand")
    env.episode_length_s = task.episode_length_s
    env.sim = simulation_cfg(desc, "cuda:0", dt=physics.timestep)  # parse_env_cfg / open_task set the real device
    contacts = contact_model(task.hand, task.object, physics)
    added = {}
    for pad in contacts["pads"]:
        added[pad["body"]] = added.get(pad["body"], 0) + 1
    env.sim.physics.solver_cfg.nconmax = shape_pairs(desc, free_shapes=1, added=added)
    env.sim.render_interval = env.decimation
    open_pose = G20_MIMIC.complete(preset_poses(task.hand)["open"], clip_mimic=True)
    w, x, y, z = PALM_UP
    env.scene.robot = hand_cfg(task.hand, physics, contacts, "{ENV_REGEX_NS}/Robot",
                               dict(zip(ALL_JOINTS, open_pose.tolist(), strict=True)), rot=(x, y, z, w))  # fmt: skip
    spawned = dataclasses.replace(task.object, size=max([task.object.size, *event_sizes(task)]))
    rest = tuple(float(v) for v in DROP_POINT + PALM_NORMAL * spawned.half_height)
    qw, qx, qy, qz = spawned.rest_quat
    env.scene.object = object_cfg(spawned, contacts, "{ENV_REGEX_NS}/Object",
                                  RigidObjectCfg.InitialStateCfg(pos=rest, rot=(qx, qy, qz, qw)))  # fmt: skip
    env.commands = CommandsCfg(object_goal=InHandCommandCfg(
        axis=tuple(float(v) for v in task.commands.axis), reorient=task.task == "reorient",
        success_tolerance=float(task.commands.success_tolerance), object_size=float(task.object.size),
        object_mass=float(task.object.mass), spawn_size=float(spawned.size)))  # fmt: skip
    env.actions = ActionsCfg(joint_targets=HandPoseActionCfg(asset_name="robot", joint_names=list(ALL_JOINTS),
                                                             task_kwargs=action_kwargs(task)))  # fmt: skip
    env.observations = _observations(task)
    env.rewards, env.terminations, env.events = _terms(task)


@configclass
class InHandEnvCfg(ManagerBasedRLEnvCfg):
    """A G20 object task: the registered task ``task``'s config for ``robot``, ``task_overrides`` on top
    (:class:`InHandCfg` fields, as ``gymnasium.make("G20Rotate-v0", **kwargs)`` takes them). Each registered id is a
    subclass naming its task and robot (:mod:`dexwheel.isaaclab.tasks`)."""

    task: str = "in_hand_rotate"
    robot: str = "g20_left"
    task_overrides: dict = {}
    scene: InHandSceneCfg = InHandSceneCfg(num_envs=4096, env_spacing=0.5)

    def __post_init__(self):
        overrides = one_hand(self.robot, self.task_overrides)
        mine = task_record(self.task).default_config(self.robot).task
        if overrides.get("task", mine) != mine:  # a run's config names its object task, as the MuJoCo env's
            raise ValueError(f"task={overrides['task']!r}: this is the {mine} task ({self.task}); use its own Isaac "
                             "Lab id")  # fmt: skip
        apply_task_cfg(self, task_config(self.task, self.robot, overrides))
