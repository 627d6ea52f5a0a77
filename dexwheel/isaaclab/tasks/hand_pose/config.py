"""G20 pose tracking on Isaac Lab, built from the MuJoCo task's config: every drive, action mapping, layer and goal mode.

Every number comes from :class:`dexwheel.tasks.hand_pose.config.G20HandConfig` (the dataclass ``G20Hand-v0`` runs on;
``task_overrides`` are its keywords, :data:`~dexwheel.rl.isaaclab_support.TASK_DEFAULTS` the registered tasks'
defaults: the PD drive and the presets), the robot description and the action path of :mod:`dexwheel.control`, run on
torch (one implementation over numpy and torch, :mod:`dexwheel.control._xp`): the action mappings ``normalized``,
``sdk255``, ``nominal`` and ``delta`` (their ``goals()``), the composer layers (``policy``, ``hold``: the MuJoCo task's
:class:`~dexwheel.tasks.hand.action_path.HandActionPath` with ``xp=torch``) and resolver, the mimic completion
(:data:`~dexwheel.control.g20_sdk.G20_MIMIC` on torch); the slew (``slew_rad_s`` per physics step, a source slowed by
its fastest mimic, 0 jumps), the control rate (``control_hz`` -> decimation), the episode length (``G20Hand-v0``'s
registered ``max_episode_steps``), the goals and the term tables: each observation, reward and reset event of the
config becomes the Isaac Lab term its function maps to (:data:`REWARD_MAP`, :data:`OBSERVATION_MAP`,
:data:`EVENT_MAP`) under the same name, in the same order, with the same weight, scale and parameters; a term without
a counterpart is refused by name. The PD gains, effort limits and armature are the description's
(:func:`~dexwheel.isaaclab.robots.articulation_cfg`); the USD has no mimic constraints, so each mimic joint has its own
actuator driven to its completed target, as in the MuJoCo PD model. The reward is the per-step sum of the terms, as
in MuJoCo (:mod:`.rewards`). MuJoCo-Warp's contact buffers hold every pair of collision shapes
that can touch (:func:`shape_pairs`).

Drives: ``"pd"`` writes the slewed, completed targets to the PD actuators each physics step. ``"hard_write"`` writes
them as the joint positions each physics step (velocities zero, the PD targets there too, gravity off: the written
pose is the state, as MuJoCo's ``mj_forward``-only hard-write), the vendor's Isaac hand simulation
(``set_dof_positions`` every physics step). Its collision projection is MuJoCo's collision check of each pose, which
Isaac Lab has no counterpart of: ``collision.projection=True`` with hard-write is refused by name (``drive.track_test`` or
``collision.projection=False`` turn it off). Without it a written pose that penetrates stays written, and Isaac Lab's
contacts push the joints apart for the one physics step before the next write (the joint state then differs from
the written pose by that push: 1.9e-3 rad for the full fist's thumb in the palm).

Goals: ``"presets"``, ``"random"`` and ``"mixed"`` (``preset_goal_prob``), switching every ``goal_switch_steps``. The
random goals are the MuJoCo task's (:meth:`~dexwheel.tasks.hand_pose.task.G20HandTask.sample_goal`: uniform poses its
collision check finds free), as a seeded set of them (:mod:`dexwheel.tasks.hand_pose.goal_set`) drawn from uniformly.

Where the two differ (and why):

* the reset noise is not checked for collisions (MuJoCo keeps the open hand when the noisy pose penetrates
  deeper than ``penetration_tol``);
* ``penetration`` is the deepest of MuJoCo-Warp's contacts; Newton zeroes the geom margins (the MuJoCo
  model's are 0.5 mm), which changes the forces between nearly touching fingers (docs/how-to/isaaclab.md) but not
  the depth;
* actions take the ``out_of_range="clip"`` arithmetic (a NaN holds the previous action; clipped to the mapping's
  range; ``sdk255`` rounded) and are never raised on (a GPU sync per step); the evaluation and training wrappers do
  not clip the hand's actions to [-1, 1], the term clips to its mapping's range;
* no divergence containment (the MuJoCo env truncates an episode whose physics blew up);
* refused by name (:data:`~dexwheel.rl.isaaclab_support.HAND_REFUSED`): the hard-write collision projection, custom
  ``contact_excludes`` (the USD carries the description's), no episode limit and rendering; reset options (``goal``,
  ``init_qpos``): Isaac Lab's reset takes none.
"""

from __future__ import annotations

import dataclasses
from dataclasses import MISSING
from itertools import combinations
from typing import Any

import isaaclab.envs.mdp as mdp
import numpy as np
from isaaclab.assets import ArticulationCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.utils import configclass

from dexwheel.control.g20_sdk import G20_MIMIC, G20SdkMapping
from dexwheel.isaaclab.robots import articulation_cfg
from dexwheel.isaaclab.sim import simulation_cfg
from dexwheel.isaaclab.tasks.hand_pose.action import HandPoseActionCfg
from dexwheel.isaaclab.tasks.hand_pose.commands import HandGoalCommandCfg
from dexwheel.isaaclab.tasks.hand_pose.events import reset_hand_pose
from dexwheel.isaaclab.tasks.hand_pose.observations import last_action
from dexwheel.isaaclab.tasks.hand_pose.rewards import action_rate_l2, joint_pos_tracking, penetration
from dexwheel.isaaclab.tasks.hand_pose.terminations import hand_step_info
from dexwheel.isaaclab.tasks.term_map import corrupted, mapped, observation_term
from dexwheel.isaaclab.tasks.terms import ExactObsGroup, robot_joints
from dexwheel.rl.isaaclab_support import task_config, unsupported
from dexwheel.robots import get_robot
from dexwheel.robots.description import RobotDescription
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, GOAL_PRESETS
from dexwheel.tasks.hand.action_path import joint_group
from dexwheel.tasks.hand_pose import goal_set
from dexwheel.tasks.hand_pose.config import G20HandConfig

#: The MuJoCo env this task is (its registered episode length is the default here).
COMMAND = "goal"
ACTION = "joint_targets"
_R = "dexwheel.tasks.hand_pose.rewards:"
_O = "dexwheel.tasks.hand_pose.observations:"
_G = "dexwheel.tasks.mdp:"  # the generic terms
_E = "dexwheel.tasks.hand_pose.events:"
_GOAL = {"command_name": COMMAND, "asset_cfg": robot_joints(ACTIVE_JOINTS)}
#: The MuJoCo task's term functions and their Isaac Lab counterparts (:func:`~.term_map.mapped`).
REWARD_MAP = {
    _R + "joint_pos_tracking_exp": (joint_pos_tracking, lambda p: {**_GOAL, "std": p["std"]}),
    _R + "max_penetration": (penetration, lambda p: {"action_name": ACTION}),
    _G + "action_rate_l2": (action_rate_l2, lambda p: {"action_name": ACTION}),
}
OBSERVATION_MAP = {
    _G + "joint_pos": (mdp.joint_pos, lambda p: {"asset_cfg": robot_joints(ALL_JOINTS)}),
    _G + "joint_vel": (mdp.joint_vel, lambda p: {"asset_cfg": robot_joints(ALL_JOINTS)}),
    _O + "goal_pose": (mdp.generated_commands, lambda p: {"command_name": COMMAND}),
    _G + "last_action": (last_action, lambda p: {"action_name": ACTION}),
}
#: The hand sections the action term builds its action path from (:class:`~.mdp.HandPoseAction`): every hand task's.
ACTION_SECTIONS = ("actions", "drive", "composer")
#: Reset events; the open-hand pose is the task's (filled in by :func:`apply_task_cfg`).
EVENT_MAP = {
    _E + "reset_joints_by_offset": (reset_hand_pose, lambda p: {"noise": float(p["scale"]), "action_name": ACTION}),
}


def action_kwargs(task: Any) -> dict[str, Any]:
    """The action term's settings (``make_cfg`` keywords of the pose task) from a hand task's config: its hand and its
    :data:`ACTION_SECTIONS`, the same for the pose and the object tasks."""
    return {"hand": task.hand, **{name: dataclasses.asdict(getattr(task, name)) for name in ACTION_SECTIONS}}


def preset_poses(hand: str) -> dict[str, np.ndarray]:
    """Every goal preset's active joint positions (ACTIVE_JOINTS order): its SDK command through the hand's
    SDK table (the MuJoCo env's ``G20ActionMap.preset``)."""
    sdk = G20SdkMapping(hand)
    return {name: sdk.goals(np.asarray(cmd, dtype=np.float64)) for name, cmd in GOAL_PRESETS.items()}


def shape_pairs(desc: RobotDescription, free_shapes: int = 0, added: dict[str, int] | None = None) -> int:
    """How many pairs of collision shapes can touch in one hand (and ``free_shapes`` more shapes that may touch any
    of its shapes: an object in it; ``added``: more shapes fixed to the named bodies, as the object tasks' fingertip
    pads): MuJoCo-Warp's contact capacity per world.

    The broadphase reports at most one candidate per shape pair, and MuJoCo-Warp keeps candidates and
    contacts in buffers of ``nconmax`` per world; past them it drops the rest (and with them contacts:
    a fist's ~260 candidates overflow the solver's default, 128, and the last envs' contacts go missing).
    Shapes as the URDF (and so the USD) has them, :mod:`dexwheel.robots.urdf`: a capsule is a cylinder and
    two spheres. Pairs on one body or of excluded bodies never collide.
    """
    shapes = {b.name: sum(3 if g.type == "capsule" else 1 for g in b.collision) for b in desc.bodies}
    for body, n in (added or {}).items():
        shapes[body] += n
    excluded = {frozenset(pair) for pair in desc.contact_excludes}
    hand = sum(shapes[a] * shapes[b] for a, b in combinations(shapes, 2) if frozenset((a, b)) not in excluded)
    return hand + free_shapes * sum(shapes.values())


@configclass
class HandPoseSceneCfg(InteractiveSceneCfg):
    # no ground: the MuJoCo scene's floor is render-only
    robot: ArticulationCfg = MISSING


@configclass
class CommandsCfg:
    goal: HandGoalCommandCfg = MISSING


@configclass
class ActionsCfg:
    joint_targets: HandPoseActionCfg = MISSING


@configclass
class PolicyCfg(ExactObsGroup):
    """Filled from the observation table (:func:`apply_task_cfg`)."""


@configclass
class ObservationsCfg:
    policy: PolicyCfg = PolicyCfg()


@configclass
class RewardsCfg:
    """Filled from the reward table (:func:`apply_task_cfg`)."""


@configclass
class TerminationsCfg:
    time_out: DoneTerm = DoneTerm(func=mdp.time_out, time_out=True)  # pose tracking never terminates
    # never terminates: records the step's info (joint errors, penetration) before the resets, for evaluations
    step_info: DoneTerm = DoneTerm(func=hand_step_info, params={"action_name": ACTION, "command_name": COMMAND})


@configclass
class EventsCfg:
    """Filled from the event table (:func:`apply_task_cfg`)."""


def _refuse_unsupported(task: G20HandConfig) -> None:
    bad = unsupported(task)
    if bad:
        why = "; ".join(f"{name}: {reason}" for name, reason in bad.items())
        raise ValueError(f"the Isaac Lab G20 pose task does not support {list(bad)} as set ({why})")


def held(task: G20HandConfig, goals: np.ndarray) -> np.ndarray:
    """``goals`` with the joints the ``hold`` layer holds at their held position (the MuJoCo task's ``held``)."""
    composer = task.composer
    if "hold" not in composer.layers:
        return goals
    goals = np.array(goals, dtype=np.float64)
    idx = [ACTIVE_JOINTS.index(j) for j in joint_group(composer.hold_joints, "composer.hold_joints")]
    goals[..., idx] = preset_poses(task.hand)[composer.hold_pose][idx]
    return goals


def _terms(task: G20HandConfig, open_pose: list[float]) -> tuple[PolicyCfg, RewardsCfg, EventsCfg]:
    """The observation, reward and event tables as Isaac Lab terms (unmapped terms refused by name)."""
    policy, rewards, events = PolicyCfg(), RewardsCfg(), EventsCfg()
    if task.terminations:
        raise ValueError(f"the Isaac Lab G20 pose task has no counterpart of terminations {list(task.terminations)}; "
                         "run that config on the MuJoCo env")  # fmt: skip
    for name, (func, params, t) in mapped(task.observations, OBSERVATION_MAP, "observations", "G20 pose").items():
        setattr(policy, name, observation_term(func, params, t, f"observations.{name}"))
    policy.enable_corruption = corrupted(task.observations)
    for name, (func, params, t) in mapped(task.rewards, REWARD_MAP, "rewards", "G20 pose").items():
        setattr(rewards, name, RewTerm(func=func, weight=float(t.weight), params=params))
    for name, (func, params, _) in mapped(task.events, EVENT_MAP, "events", "G20 pose").items():
        setattr(events, name, EventTerm(func=func, mode="reset", params={"pose": open_pose, **params}))
    return policy, rewards, events


def apply_task_cfg(env: ManagerBasedRLEnvCfg, task: G20HandConfig) -> None:
    """Fill an Isaac Lab env config from the MuJoCo task's config (see the module docstring)."""
    _refuse_unsupported(task)
    robot = f"g20_{task.hand}"
    desc = get_robot(robot)
    if tuple(desc.joint_names) != ALL_JOINTS or tuple(G20_MIMIC.layout.names) != ALL_JOINTS:
        raise AssertionError(f"{robot}: joint order {desc.joint_names} is not the completion's {ALL_JOINTS}")
    presets = preset_poses(task.hand)
    open_pose = G20_MIMIC.complete(presets["open"], clip_mimic=True)
    env.decimation = task.substeps(desc.timestep)
    env.episode_length_s = task.max_episode_steps * env.decimation * desc.timestep
    # device "cuda:0" as Isaac Lab's default (parse_env_cfg sets the real one); CUDA graphs only act on a GPU
    env.sim = simulation_cfg(desc, "cuda:0")
    if task.drive.kind == "hard_write":  # the written pose is the state: nothing but contacts may move it in a step
        env.sim.gravity = (0.0, 0.0, 0.0)
    env.sim.physics.solver_cfg.nconmax = shape_pairs(desc)
    env.sim.render_interval = env.decimation
    start = dict(zip(ALL_JOINTS, open_pose.tolist(), strict=True))
    env.scene.robot = articulation_cfg(robot, "{ENV_REGEX_NS}/Robot", start)
    random = [] if task.goal_mode == "presets" else goal_set.goal_set(task).tolist()  # held already
    env.commands = CommandsCfg(goal=HandGoalCommandCfg(
        joint_names=list(ACTIVE_JOINTS), presets={name: held(task, presets[name]).tolist() for name in task.goal_presets},
        random_goals=random, mode=task.goal_mode, preset_prob=float(task.preset_goal_prob),
        switch_steps=int(task.goal_switch_steps),
    ))  # fmt: skip
    env.actions = ActionsCfg(joint_targets=HandPoseActionCfg(asset_name="robot", joint_names=list(ALL_JOINTS),
                                                                task_kwargs=action_kwargs(task)))  # fmt: skip
    policy, env.rewards, env.events = _terms(task, presets["open"].tolist())
    env.observations = ObservationsCfg(policy=policy)
    env.terminations = TerminationsCfg()


@configclass
class HandPoseEnvCfg(ManagerBasedRLEnvCfg):
    """The G20's pose-tracking task with the PD drive: the registered task ``task``'s config for ``robot``
    (``g20_left`` / ``g20_right``), ``task_overrides`` on top (:class:`G20HandConfig` fields, as
    ``gymnasium.make("G20Hand-v0", **kwargs)`` takes them). Each registered id is a subclass naming its task and robot
    (:mod:`dexwheel.isaaclab.tasks`)."""

    task: str = "hand_pose"
    robot: str = "g20_left"
    task_overrides: dict = {}
    scene: HandPoseSceneCfg = HandPoseSceneCfg(num_envs=4096, env_spacing=0.5)

    def __post_init__(self):
        apply_task_cfg(self, task_config(self.task, self.robot, one_hand(self.robot, self.task_overrides)))


def one_hand(robot: str, overrides: dict) -> dict:
    """``overrides`` without their ``hand``, which must be ``robot``'s (a run's config names its hand, as the MuJoCo
    env's): a config of the other hand is refused, naming the Isaac Lab id to use."""
    overrides = dict(overrides)
    hand, mine = overrides.pop("hand", robot.removeprefix("g20_")), robot.removeprefix("g20_")
    if hand != mine:
        raise ValueError(f"hand={hand!r}: this is the {mine} hand's task; use the g20_{hand} robot's Isaac Lab id")
    return overrides
