"""G20 pose tracking with the PD drive on Isaac Lab, built from the MuJoCo task's config.

Every number comes from :class:`dexwheel.envs.g20_cfg.G20HandConfig` (the dataclass ``G20Hand-v0`` runs on,
with ``drive="pd"``), the robot description and the action path of :mod:`dexwheel.control` (its numpy parts:
no numba kernel runs here): the goal presets
(their SDK commands through the hand's SDK table), the normalized action mapping (-1 -> lower limit, +1 ->
upper), the mimic completion (``dip = 0.89 pip``, ``thumb_ip = 1.02 thumb_mcp``, each clipped to its
limits), the slew (``slew_rad_s`` per physics step, a source slowed by its fastest mimic), the control rate
(``control_hz`` -> decimation), the episode length (``G20Hand-v0``'s registered ``max_episode_steps``, which
``gymnasium.make`` and the Hydra task use), the reset noise, the observation ``[qpos (21), qvel (21), goal
(16), last_action (16)]`` and the reward terms under the same names with the same weights and width
(``joint_pos_tracking`` +``tracking_weight``, ``joint_pos_tracking_fine`` +``tracking_fine_weight``,
``penetration`` -``penetration_weight``, ``action_rate_l2`` -``action_rate_weight``). The PD gains, effort limits and armature are the description's
(:func:`~dexwheel.isaaclab.robots.articulation_cfg`: one force-clamped motor per hinge, as in MuJoCo); the
USD has no mimic constraints, so each mimic joint has its own actuator driven to its completed target, as
in the MuJoCo PD model. The reward is the per-step sum of the terms, as in MuJoCo: Isaac Lab multiplies
each term by the control period, so the terms divide by it (:mod:`dexwheel.isaaclab.tasks.mdp`).
MuJoCo-Warp's contact buffers hold every pair of collision shapes that can touch (:func:`shape_pairs`);
at its default size a fist's contacts overflow them and go missing.

Where the two differ (and why):

* goals come from the presets only (``goal_mode="presets"``, the default here): the MuJoCo task's random
  goals are poses its collision check finds free, which Isaac Lab has no counterpart of (``"mixed"`` and
  ``"random"`` are refused);
* the reset noise is not checked for collisions (MuJoCo keeps the open hand when the noisy pose penetrates
  deeper than ``penetration_tol``);
* ``penetration`` is the deepest of MuJoCo-Warp's contacts; Newton zeroes the geom margins (the MuJoCo
  model's are 0.5 mm), which changes the forces between nearly touching fingers (docs/isaaclab.md, cross-backend
  dynamics) but not the depth (a contact within the margin has none in MuJoCo either);
* actions are clipped to [-1, 1] (the ``out_of_range="clip"`` arithmetic; a NaN is not held at the
  previous action) and never raised on; the observed last action is the one rsl_rl sends, which its runner
  clips to [-1, 1] (``clip_actions`` in :mod:`dexwheel.isaaclab.tasks.agents`);
* no divergence containment (the MuJoCo env truncates an episode whose physics blew up);
* not here: the hard-write drive and its collision projection, the ``sdk255``/``nominal``/``delta``
  actions, the ``hold`` composer layer, custom ``contact_excludes`` (the USD carries the description's) and
  rendering (a config that asks for them is refused, naming the field); reset options (``goal``,
  ``init_qpos``): Isaac Lab's reset takes none.
"""

from __future__ import annotations

from dataclasses import MISSING
from itertools import combinations

import gymnasium as gym
import isaaclab.envs.mdp as mdp
import numpy as np
import torch
from isaaclab.assets import ArticulationCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.utils import configclass

from dexwheel.control.g20_sdk import G20_MIMIC, G20SdkMapping, g20_normalized_mapping
from dexwheel.envs.g20_cfg import REWARD_TERMS, G20HandConfig
from dexwheel.isaaclab.robots import articulation_cfg
from dexwheel.isaaclab.sim import simulation_cfg
from dexwheel.isaaclab.tasks import mdp as dw
from dexwheel.robots import get_robot
from dexwheel.robots.description import RobotDescription
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, GOAL_PRESETS

#: The MuJoCo env this task is (its registered episode length is the default here).
MUJOCO_ENV_ID = "G20Hand-v0"
COMMAND = "goal"
ACTION = "joint_targets"
#: What this task sets on top of G20HandConfig's defaults: the PD drive and the presets as goals.
TASK_DEFAULTS = {"drive": "pd", "goal_mode": "presets"}
#: Each reward term's weight: the MuJoCo config field and its sign (g20_hand: the tracking term adds, the
#: penetration and action-rate terms subtract; their config fields are magnitudes).
REWARD_WEIGHTS: dict[str, tuple[str, float]] = {
    "joint_pos_tracking": ("tracking_weight", 1.0),
    "joint_pos_tracking_fine": ("tracking_fine_weight", 1.0),
    "penetration": ("penetration_weight", -1.0),
    "action_rate_l2": ("action_rate_weight", -1.0),
}


def task_cfg(hand: str = "left", **overrides) -> G20HandConfig:
    """The MuJoCo task's config this task runs: :data:`TASK_DEFAULTS`, ``G20Hand-v0``'s registered
    ``max_episode_steps``, then ``overrides`` (``G20HandConfig`` fields)."""
    import dexwheel  # noqa: F401  (registers G20Hand-v0)

    base = {**TASK_DEFAULTS, "max_episode_steps": gym.spec(MUJOCO_ENV_ID).max_episode_steps}
    return G20HandConfig(**{**base, "hand": hand, **overrides})


def preset_poses(hand: str) -> dict[str, np.ndarray]:
    """Every goal preset's active joint positions (ACTIVE_JOINTS order): its SDK command through the hand's
    SDK table (the MuJoCo env's ``G20ActionMap.preset``)."""
    sdk = G20SdkMapping(hand)
    return {name: sdk.goals(np.asarray(cmd, dtype=np.float64)) for name, cmd in GOAL_PRESETS.items()}


def shape_pairs(desc: RobotDescription) -> int:
    """How many pairs of collision shapes can touch in one hand: MuJoCo-Warp's contact capacity per world.

    The broadphase reports at most one candidate per shape pair, and MuJoCo-Warp keeps candidates and
    contacts in buffers of ``nconmax`` per world; past them it drops the rest (and with them contacts:
    a fist's ~260 candidates overflow the solver's default, 128, and the last envs' contacts go missing).
    Shapes as the URDF (and so the USD) has them, :mod:`dexwheel.robots.urdf`: a capsule is a cylinder and
    two spheres. Pairs on one body or of excluded bodies never collide.
    """
    shapes = {b.name: sum(3 if g.type == "capsule" else 1 for g in b.collision) for b in desc.bodies}
    excluded = {frozenset(pair) for pair in desc.contact_excludes}
    return sum(shapes[a] * shapes[b] for a, b in combinations(shapes, 2) if frozenset((a, b)) not in excluded)


@configclass
class HandPoseSceneCfg(InteractiveSceneCfg):
    # no ground: the MuJoCo scene's floor is render-only
    robot: ArticulationCfg = MISSING


@configclass
class CommandsCfg:
    goal: dw.HandGoalCommandCfg = MISSING


@configclass
class ActionsCfg:
    joint_targets: dw.HandPoseActionCfg = MISSING


@configclass
class PolicyCfg(dw.ExactObsGroup):
    qpos: ObsTerm = ObsTerm(func=mdp.joint_pos, params={"asset_cfg": dw.robot_joints(ALL_JOINTS)})
    qvel: ObsTerm = ObsTerm(func=mdp.joint_vel, params={"asset_cfg": dw.robot_joints(ALL_JOINTS)})
    goal: ObsTerm = ObsTerm(func=mdp.generated_commands, params={"command_name": COMMAND})
    last_action: ObsTerm = ObsTerm(func=mdp.last_action)


@configclass
class ObservationsCfg:
    policy: PolicyCfg = PolicyCfg()


@configclass
class RewardsCfg:
    joint_pos_tracking: RewTerm = MISSING
    joint_pos_tracking_fine: RewTerm = MISSING
    penetration: RewTerm = MISSING
    action_rate_l2: RewTerm = MISSING


@configclass
class TerminationsCfg:
    time_out: DoneTerm = DoneTerm(func=mdp.time_out, time_out=True)  # pose tracking never terminates


@configclass
class EventsCfg:
    reset_hand: EventTerm = MISSING


def _refuse_unsupported(task: G20HandConfig) -> None:
    unsupported = {
        "drive": task.drive != "pd",
        "action": task.action != "normalized",
        "goal_mode": task.goal_mode != "presets",
        "composer_layers": task.composer_layers != ("policy",),
        "contact_excludes": task.contact_excludes is not None,
        "max_episode_steps": task.max_episode_steps is None,
        "render_mode": task.render_mode is not None,
    }
    bad = [name for name, is_bad in unsupported.items() if is_bad]
    if bad:
        raise ValueError(f"the Isaac Lab G20 pose task does not support {bad} as set; use the MuJoCo env for them")


def _rewards(task: G20HandConfig) -> RewardsCfg:
    goal = {"command_name": COMMAND, "asset_cfg": dw.robot_joints(ACTIVE_JOINTS)}
    terms = {
        "joint_pos_tracking": (dw.joint_pos_tracking, {**goal, "std": task.tracking_std}),
        "joint_pos_tracking_fine": (dw.joint_pos_tracking, {**goal, "std": task.tracking_fine_std}),
        "penetration": (dw.penetration, {"action_name": ACTION}),
        "action_rate_l2": (dw.action_rate_l2, {}),
    }
    assert tuple(terms) == REWARD_TERMS == tuple(REWARD_WEIGHTS), "the MuJoCo task's reward terms changed"
    weights = {name: sign * float(getattr(task, field)) for name, (field, sign) in REWARD_WEIGHTS.items()}
    return RewardsCfg(**{name: RewTerm(func=f, weight=weights[name], params=p) for name, (f, p) in terms.items()})


def apply_task_cfg(env: ManagerBasedRLEnvCfg, task: G20HandConfig) -> None:
    """Fill an Isaac Lab env config from the MuJoCo task's config (see the module docstring)."""
    _refuse_unsupported(task)
    robot = f"g20_{task.hand}"
    desc = get_robot(robot)
    if tuple(desc.joint_names) != ALL_JOINTS or tuple(G20_MIMIC.layout.names) != ALL_JOINTS:
        raise AssertionError(f"{robot}: joint order {desc.joint_names} is not the completion's {ALL_JOINTS}")
    presets = preset_poses(task.hand)
    completion = tuple(np.asarray(a).tolist() for a in G20_MIMIC.arrays)
    open_pose = dw.MimicCompletion(completion, "cpu", torch.float64)(torch.from_numpy(presets["open"]))
    env.decimation = task.substeps(desc.timestep)
    env.episode_length_s = task.max_episode_steps * env.decimation * desc.timestep
    # device "cuda:0" as Isaac Lab's default (parse_env_cfg sets the real one); CUDA graphs only act on a GPU
    env.sim = simulation_cfg(desc, "cuda:0")
    env.sim.physics.solver_cfg.nconmax = shape_pairs(desc)
    env.sim.render_interval = env.decimation
    start = dict(zip(ALL_JOINTS, open_pose.tolist(), strict=True))
    env.scene.robot = articulation_cfg(robot, "{ENV_REGEX_NS}/Robot", start)
    env.commands = CommandsCfg(goal=dw.HandGoalCommandCfg(
        joint_names=list(ACTIVE_JOINTS), presets={name: presets[name].tolist() for name in task.goal_presets},
        switch_steps=int(task.goal_switch_steps),
    ))  # fmt: skip
    mapping = g20_normalized_mapping()
    env.actions = ActionsCfg(joint_targets=dw.HandPoseActionCfg(
        asset_name="robot", joint_names=list(ALL_JOINTS), completion=completion,
        action_lower=mapping.lower.tolist(), action_half_span=mapping.half_span.tolist(),
        max_step=G20_MIMIC.slew_steps(task.slew, desc.timestep).tolist(),
    ))  # fmt: skip
    env.observations = ObservationsCfg()
    env.rewards = _rewards(task)
    env.terminations = TerminationsCfg()
    env.events = EventsCfg(reset_hand=EventTerm(func=dw.reset_hand_pose, mode="reset", params={
        "pose": presets["open"].tolist(), "noise": float(task.reset_noise_scale), "action_name": ACTION}))  # fmt: skip


@configclass
class G20PoseEnvCfg(ManagerBasedRLEnvCfg):
    """The G20's pose-tracking task with the PD drive; ``hand`` and ``task_overrides`` pick the config
    (:class:`G20HandConfig` fields, as ``gymnasium.make("G20Hand-v0", **kwargs)`` takes them)."""

    hand: str = "left"
    task_overrides: dict = {}
    scene: HandPoseSceneCfg = HandPoseSceneCfg(num_envs=4096, env_spacing=0.5)

    def __post_init__(self):
        apply_task_cfg(self, task_cfg(self.hand, **self.task_overrides))


@configclass
class G20LeftPoseEnvCfg(G20PoseEnvCfg):
    hand: str = "left"


@configclass
class G20RightPoseEnvCfg(G20PoseEnvCfg):
    hand: str = "right"
