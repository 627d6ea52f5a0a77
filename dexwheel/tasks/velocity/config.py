"""Typed configuration of the wheel-leg velocity-tracking task (``Solenopsis-v0``, ``M20Legacy-v0``).

Sections follow Isaac Lab / mjlab managers: commands, actions, the term tables (``observations``,
``rewards``, ``terminations``, ``events``: :data:`OBSERVATIONS`, :data:`REWARDS`, :data:`TERMINATIONS`,
:data:`EVENTS`, each entry a function, its weight, scale or mode and parameters; :mod:`dexwheel.tasks.terms`),
domain randomisation, plus the composer's layer choice. :func:`make_cfg` builds a config from plain keyword arguments, so
``gymnasium.make`` and a Hydra layer reach every field: a section by its name with a dict
(``rewards={"action_rate_l2": -0.02}``), a top-level field by its name, or a name of :data:`RENAMES`: the flat
aliases (``action_scale_knee=0.25``, ``layers=("policy", "stance")``) and the earlier sections' keys
(``rewards.lin_vel_std``, ``observations.privileged``, ...), through the one config builder of every task
(:mod:`dexwheel.tasks.config_builder`). Unknown names fail with the list of valid ones.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dexwheel.fields import ConfigFieldError, check_types
from dexwheel.robots import WHEEL_LEG_ROBOTS
from dexwheel.robots.wheel_leg import (
    KNEE_JOINTS,
    KNEE_KD,
    KNEE_KP,
    LINKS,
    NON_WHEEL_BODIES,
    PARAMS,
    POLICY_JOINT_ORDER,
    WHEEL_JOINTS,
    WHEEL_KD,
    mirror_permutation,
)
from dexwheel.sim.randomization import DomainRandCfg
from dexwheel.tasks.action_delay import delay_range
from dexwheel.tasks.config_builder import build_cfg
from dexwheel.tasks.terms import (
    EventTermCfg,
    ObservationTermCfg,
    RewardTermCfg,
    TerminationTermCfg,
    check_params,
    func_path,
    interval_range,
    validate_terms,
)
from dexwheel.terrain.config import TerrainCfg, make_terrain_cfg
from dexwheel.terrain.config import validate as validate_terrain
from dexwheel.terrain.description import TerrainDescription

LAYER_NAMES = ("policy", "stance", "override")
_JOINT_GROUPS = {"all": POLICY_JOINT_ORDER, "knees": KNEE_JOINTS, "wheels": WHEEL_JOINTS}


@dataclass(frozen=True)
class CommandCfg:
    """Uniform velocity commands, resampled per env; no lateral command (the arms only pitch)."""

    lin_vel_x: tuple[float, float] = (-1.0, 1.0)  # m/s, base frame
    ang_vel_z: tuple[float, float] = (-1.0, 1.0)  # rad/s
    resampling_time_s: tuple[float, float] = (5.0, 5.0)
    rel_standing_envs: float = 0.1  # probability that a sample is a zero (stand still) command
    # Probability that a mid-episode resample drives the other way: the new forward command keeps its drawn
    # magnitude and takes the sign opposite the current one (0 draws nothing extra). Uniform draws alone left
    # full-speed reversals rare in training, and braking from backward to forward at 0.8-1.0 m/s is what pitched
    # policies past the tilt limit; 0.5 made some seeds too timid to track (docs/notes/2026-12-training-time.md).
    # With lin_vel_x (0.8, 1.0) and 1.0 every resample is a hard reversal: the stress test.
    rel_reversal: float = 0.25


@dataclass(frozen=True)
class ActionCfg:
    """``[-1, 1]`` actions: knee offsets around the stance, wheel velocity targets.

    The wheel scale is sized for the commands' corners, not for rolling (1 m/s is |a| ~ 0.34 at radius
    ~0.099 m): a skid turn drags all four wheels sideways, and a stalled wheel's torque is ``wheel_kd *
    target``. On the spot at the A stance, +-10 rad/s barely turns Solenopsis (0.05 rad/s), +-15 turns it
    at 0.6 and +-20 at 1.1 rad/s; from 1 m/s, outer wheels at 20 rad/s turn it at 0.3 rad/s (and slow it to 0.7).
    At 20 rad/s per unit the fast turns sat at the clip and every policy under-turned them by 0.3-0.5 rad/s.
    """

    knee_scale: float = 0.25  # rad per unit action (reference)
    wheel_velocity_scale: float = 30.0  # rad/s per unit action; stalled: 0.6 * 30 = 18 N m of 21.6
    clip: bool = True  # clip actions to [-1, 1] before mapping them
    # Latency: the action of this many policy steps ago is applied (an int, or (low, high) drawn per env at
    # each reset: latency randomisation); dexwheel.tasks.action_delay.
    delay_steps: int | tuple[int, int] = 0


@dataclass(frozen=True)
class ComposerCfg:
    """Which composer layers exist and what they hold (see ``docs/spec/composer.md``).

    ``policy`` takes the action; ``stance`` holds its joints at the stance (knees: so
    ``layers=("policy", "stance")`` is the wheels-only variant); ``override`` is a safety layer that wins
    over every other (stop: wheels to zero velocity, knees stiff at the stance). ``policy_joints`` None
    means every joint no other ordinary layer holds; a name list or "all"/"knees"/"wheels" otherwise.
    """

    layers: tuple[str, ...] = ("policy",)
    policy_joints: tuple[str, ...] | str | None = None
    stance_joints: tuple[str, ...] | str = KNEE_JOINTS
    override_joints: tuple[str, ...] | str = POLICY_JOINT_ORDER
    override_active: bool = True
    override_knee_kp: float = 2.0 * KNEE_KP
    override_knee_kd: float = 2.0 * KNEE_KD
    override_wheel_kd: float = 4.0 * WHEEL_KD


_R = "dexwheel.tasks.velocity.rewards:"
_G = "dexwheel.tasks.mdp:"  # the generic terms
_O = "dexwheel.tasks.velocity.observations:"
_T = "dexwheel.tasks.velocity.terminations:"
_E = "dexwheel.tasks.velocity.events:"

#: The reward terms, in the order they are summed. Weights follow the reference (Isaac Lab's velocity tasks)
#: but for the tracking widths (sharper: with sqrt(0.5) the policy stops improving near 0.13 m/s; 0.5 rad/s is
#: Isaac Lab's velocity-task width), the yaw weight (5, not 3: the reference left yaw the cheaper error to
#: give up; docs/notes/2026-12-training-time.md) and ``termination_penalty``, Isaac Lab's humanoid
#: ``is_terminated`` term: -4 per fall at 50 Hz on top of the lost future reward.
REWARDS: dict[str, RewardTermCfg] = {
    "track_lin_vel_x_exp": RewardTermCfg(_R + "track_lin_vel_x_exp", 5.0, {"std": 0.25}),
    "track_ang_vel_z_exp": RewardTermCfg(_R + "track_ang_vel_z_exp", 5.0, {"std": 0.5}),
    "lin_vel_z_l2": RewardTermCfg(_R + "lin_vel_z_l2", -2.0),
    "ang_vel_xy_l2": RewardTermCfg(_R + "ang_vel_xy_l2", -0.02),
    "flat_orientation_l2": RewardTermCfg(_R + "flat_orientation_l2", -50.0),
    "joint_torques_l2": RewardTermCfg(_G + "joint_torques_l2", -1.0e-5),
    "action_rate_l2": RewardTermCfg(_G + "action_rate_l2", -0.01),
    "undesired_contacts": RewardTermCfg(_R + "undesired_contacts", -1.0, {"bodies": NON_WHEEL_BODIES}),
    "termination_penalty": RewardTermCfg(_G + "is_terminated", -200.0),
}
REWARD_TERMS = tuple(REWARDS)  # the default table's names (the Isaac Lab task maps each)

#: The observation terms, in column order (scales as in the reference). The "critic" group (privileged:
#: base velocity, the domain-randomisation draws) is appended only with ``privileged_obs=True``.
OBSERVATIONS: dict[str, ObservationTermCfg] = {
    "base_ang_vel": ObservationTermCfg(_O + "base_ang_vel", scale=0.25),
    "projected_gravity": ObservationTermCfg(_O + "projected_gravity"),
    "velocity_commands": ObservationTermCfg(_O + "velocity_commands"),
    "joint_pos_rel": ObservationTermCfg(_O + "joint_pos_rel"),
    "joint_vel_rel": ObservationTermCfg(_O + "joint_vel_rel", scale=0.05),
    "last_action": ObservationTermCfg(_G + "last_action"),
    "base_lin_vel": ObservationTermCfg(_O + "base_lin_vel", group="critic"),
    "friction": ObservationTermCfg(_O + "friction", group="critic"),
    "base_mass_add": ObservationTermCfg(_O + "base_mass_add", group="critic"),
    "base_com_offset": ObservationTermCfg(_O + "base_com_offset", group="critic"),
    "link_mass_scale": ObservationTermCfg(_O + "link_mass_scale", group="critic"),
}

#: The termination terms (``info["terminated_<name>"]``): a non-wheel body on the floor, or the base tilted
#: past 1 rad.
TERMINATIONS: dict[str, TerminationTermCfg] = {
    "contact": TerminationTermCfg(_T + "illegal_contact", {"bodies": NON_WHEEL_BODIES}),
    "tilt": TerminationTermCfg(_T + "bad_orientation", {"limit_angle": 1.0}),
}

#: The event terms (:mod:`~dexwheel.tasks.velocity.events`): at each reset, in this order, the domain-randomisation
#: draw (its ranges: ``domain_rand``) and the start-pose noise (``reset_noise_scale``); pushes every
#: ``domain_rand.push_interval_s`` (a path: the number stays there). The ``domain_randomization`` ones run only
#: with ``domain_rand.enabled``, as before.
EVENTS: dict[str, EventTermCfg] = {
    "randomize_model": EventTermCfg(_E + "randomize_model", "reset", domain_randomization=True),
    "reset_joints_and_base": EventTermCfg(_E + "reset_joints_and_base", "reset"),
    "push": EventTermCfg(_E + "push_by_setting_velocity", "interval", interval_range_s="domain_rand.push_interval_s",
                         domain_randomization=True),
}  # fmt: skip

_TERM_KINDS = {"rewards": RewardTermCfg, "observations": ObservationTermCfg, "terminations": TerminationTermCfg,
               "events": EventTermCfg}  # fmt: skip


@dataclass(frozen=True)
class WheelLegEnvCfg:
    robot: str = "solenopsis"
    decimation: int = 4  # physics steps per policy step (dt 0.005 s -> 50 Hz)
    episode_length_s: float = 20.0
    stance: tuple[float, float, float, float] | None = None  # knee angles fl, fr, hl, hr; None: robot default
    knee_kp: float = KNEE_KP
    knee_kd: float = KNEE_KD
    wheel_kd: float = WHEEL_KD
    reset_noise_scale: float = 0.05  # +- rad on the knees, +- m/s and rad/s on the base (reset_joints_and_base)
    commands: CommandCfg = field(default_factory=CommandCfg)
    actions: ActionCfg = field(default_factory=ActionCfg)
    composer: ComposerCfg = field(default_factory=ComposerCfg)
    observations: dict[str, ObservationTermCfg] = field(default_factory=lambda: dict(OBSERVATIONS))
    rewards: dict[str, RewardTermCfg] = field(default_factory=lambda: dict(REWARDS))
    terminations: dict[str, TerminationTermCfg] = field(default_factory=lambda: dict(TERMINATIONS))
    events: dict[str, EventTermCfg] = field(default_factory=lambda: dict(EVENTS))
    privileged_obs: bool = False  # append the "critic" observation group (an asymmetric actor-critic)
    # Each weighted reward term times the control period, as Isaac Lab does, so weights do not depend on the rate.
    scale_rewards_by_dt: bool = True
    domain_rand: DomainRandCfg = field(default_factory=DomainRandCfg)
    # The ground: None is the flat floor (Solenopsis-v0); a TerrainCfg the generated terrain grid the rough tasks
    # run on (dexwheel.terrain, docs/reference/tasks.md#rough-terrain), one for all envs; a TerrainDescription a
    # fixed scene as it is, no curriculum (the step benchmark's, dexwheel.protocols.steps).
    terrain: TerrainCfg | TerrainDescription | None = None

    @property
    def stance_pose(self) -> tuple[float, ...]:
        return tuple(self.stance) if self.stance is not None else PARAMS[self.robot].stance


#: Flat aliases and earlier names -> the dotted path that holds them now (:mod:`dexwheel.tasks.config_builder`): the
#: flat keywords (``action_scale_knee=0.25``, ``layers=("policy", "stance")``) and the earlier sections' keys
#: (``rewards={"lin_vel_std": 0.3}``, ``observations={"privileged": True}``).
RENAMES: dict[str, str] = {
    "frame_skip": "decimation",
    "action_scale_knee": "actions.knee_scale",
    "wheel_velocity_scale": "actions.wheel_velocity_scale",
    "clip_actions": "actions.clip",
    "action_delay_steps": "actions.delay_steps",
    "layers": "composer.layers",
    "policy_joints": "composer.policy_joints",
    "override_active": "composer.override_active",
    "lin_vel_x_range": "commands.lin_vel_x",
    "ang_vel_z_range": "commands.ang_vel_z",
    "resampling_time_s": "commands.resampling_time_s",
    "rel_standing_envs": "commands.rel_standing_envs",
    "rel_reversal": "commands.rel_reversal",
    "max_tilt": "terminations.tilt.params.limit_angle",
    "domain_randomization": "domain_rand",
    "reward_weights": "rewards",
    "rewards.lin_vel_std": "rewards.track_lin_vel_x_exp.params.std",
    "rewards.ang_vel_std": "rewards.track_ang_vel_z_exp.params.std",
    "rewards.undesired_contact_bodies": "rewards.undesired_contacts.params.bodies",
    "rewards.scale_by_step_dt": "scale_rewards_by_dt",
    "observations.ang_vel_scale": "observations.base_ang_vel.scale",
    "observations.joint_vel_scale": "observations.joint_vel_rel.scale",
    "observations.privileged": "privileged_obs",
    "terminations.max_tilt_rad": "terminations.tilt.params.limit_angle",
    "terminations.contact_bodies": "terminations.contact.params.bodies",
}


def _domain_rand(cfg: WheelLegEnvCfg, value: Any, key: str) -> Any:
    """``domain_rand`` (or ``domain_randomization``): True, False or a dict of its fields."""
    if isinstance(value, bool):
        return {"enabled": value}
    if key == "domain_randomization" and not isinstance(value, dict):
        raise ConfigFieldError(key, f"{key}: expected True, False or a dict of domain_rand fields, got {value!r}")
    return value


#: Each keyword's conversion to what its field takes; each section's completion of its merged changes.
CONVERT = {"domain_rand": _domain_rand, "terrain": lambda cfg, value, key: make_terrain_cfg(cfg.terrain, value)}
FINISH = {"domain_rand": lambda c: {"enabled": True, **c} if c else c}  # giving ranges means wanting them


def velocity_cfg(robot: str = "solenopsis") -> WheelLegEnvCfg:
    """The flat velocity task's config for ``robot``."""
    return WheelLegEnvCfg(robot=robot)


def make_cfg(cfg: WheelLegEnvCfg | None = None, **kwargs: Any) -> WheelLegEnvCfg:
    """Apply keyword overrides (section dicts, term tables, top-level fields, :data:`RENAMES`) to ``cfg``
    (:func:`~dexwheel.tasks.config_builder.build_cfg`) and validate."""
    cfg = build_cfg(cfg if cfg is not None else WheelLegEnvCfg(), kwargs, tables=_TERM_KINDS, renames=RENAMES,
                    convert=CONVERT, finish=FINISH)  # fmt: skip
    cfg = dataclasses.replace(cfg, observations=_params_to_fields(cfg.observations))
    validate(cfg)
    return cfg


def joint_group(value: tuple[str, ...] | str, what: str) -> tuple[str, ...]:
    """A joint list given as names or as "all"/"knees"/"wheels" (in task order)."""
    if isinstance(value, str):
        if value not in _JOINT_GROUPS:
            raise ConfigFieldError(
                what, f"{what}: unknown joint group {value!r}; use a name list or one of {list(_JOINT_GROUPS)}"
            )
        return _JOINT_GROUPS[value]
    unknown = [j for j in value if j not in POLICY_JOINT_ORDER]
    if unknown:
        raise ConfigFieldError(what, f"{what}: unknown joint(s) {unknown}; joints: {list(POLICY_JOINT_ORDER)}")
    return tuple(j for j in POLICY_JOINT_ORDER if j in value)


def _bad(field: str, detail: str) -> ConfigFieldError:
    return ConfigFieldError(field, f"{field}: {detail}")


def validate(cfg: WheelLegEnvCfg) -> None:
    """Fail early, naming the field and the allowed values (:class:`~dexwheel.fields.ConfigFieldError`)."""
    check_types(cfg)
    if cfg.robot not in WHEEL_LEG_ROBOTS:
        raise _bad("robot", f"{cfg.robot!r} is not a wheel-leg robot; choose one of {list(WHEEL_LEG_ROBOTS)}")
    if cfg.decimation < 1:
        raise _bad("decimation", f"must be a positive integer, got {cfg.decimation!r}")
    if not (math.isfinite(cfg.episode_length_s) and cfg.episode_length_s > 0):
        raise _bad("episode_length_s", f"must be finite and > 0, got {cfg.episode_length_s}")
    if len(cfg.stance_pose) != len(KNEE_JOINTS) or not all(map(math.isfinite, cfg.stance_pose)):
        raise _bad("stance", f"{len(KNEE_JOINTS)} finite knee angles (fl, fr, hl, hr), got {cfg.stance_pose!r}")
    non_negative = {n: getattr(cfg, n) for n in ("knee_kp", "knee_kd", "wheel_kd", "reset_noise_scale")}
    non_negative |= {f"composer.{n}": getattr(cfg.composer, n)
                     for n in ("override_knee_kp", "override_knee_kd", "override_wheel_kd")}  # fmt: skip
    for name, value in non_negative.items():
        if not (math.isfinite(value) and value >= 0):
            raise _bad(name, f"must be a finite number >= 0, got {value!r}")
    c = cfg.commands
    for name in ("lin_vel_x", "ang_vel_z", "resampling_time_s"):
        r = getattr(c, name)
        if not (math.isfinite(r[0]) and math.isfinite(r[1]) and r[0] <= r[1]):
            raise _bad(f"commands.{name}", f"expected finite (low, high) with low <= high, got {r!r}")
    if c.resampling_time_s[0] <= 0:
        raise _bad("commands.resampling_time_s", f"must be > 0, got {c.resampling_time_s!r}")
    for name in ("rel_standing_envs", "rel_reversal"):
        if not 0.0 <= getattr(c, name) <= 1.0:
            raise _bad(f"commands.{name}", f"must be in [0, 1], got {getattr(c, name)}")
    for name in ("knee_scale", "wheel_velocity_scale"):
        value = getattr(cfg.actions, name)
        if not (math.isfinite(value) and value > 0):
            raise _bad(f"actions.{name}", f"must be a finite number > 0, got {value!r}")
    delay_range(cfg.actions.delay_steps, "actions.delay_steps")
    layers = cfg.composer.layers
    unknown = [n for n in layers if n not in LAYER_NAMES]
    if unknown:
        raise _bad("composer.layers", f"unknown layer(s) {unknown}; available: {list(LAYER_NAMES)}")
    if "policy" not in layers:
        raise _bad("composer.layers", f"a 'policy' layer is required (it takes the action), got {layers}")
    for section in _TERM_KINDS:
        table = getattr(cfg, section)
        validate_terms(table, section)
        check_params(table, section)
    cfg.domain_rand.validate("domain_rand")
    if cfg.terrain is not None:
        validate_terrain(cfg.terrain, "terrain")
    for name, term in cfg.events.items():  # an interval path that names no field fails here, naming the event
        if term.mode == "interval":
            interval_range(term, cfg, f"events.{name}")


def active_events(cfg: WheelLegEnvCfg) -> dict[str, tuple[EventTermCfg, tuple[float, float] | None]]:
    """The events that run, in table order, each with its interval (``(low, high)`` s; None for a reset
    event): a ``domain_randomization`` event only with ``domain_rand.enabled``, an interval event only
    while its interval is set (``domain_rand.push_interval_s=None`` turns pushes off). What runs, and so
    what is drawn, is fixed when the task is built."""
    out = {}
    for name, term in cfg.events.items():
        if term.domain_randomization and not cfg.domain_rand.enabled:
            continue
        interval = interval_range(term, cfg, f"events.{name}") if term.mode == "interval" else None
        if term.mode == "interval" and interval is None:
            continue
        out[name] = (term, interval)
    return out


#: Parameters that became fields of every observation term (:class:`~dexwheel.tasks.terms.ObservationTermCfg`):
#: ``(function, parameter) -> (field, the field's value from the parameter's)``. A table entry, a saved run's
#: config or a ``gym.make`` change giving the parameter has it moved there.
PARAMS_TO_FIELDS = {
    (_O + "height_scan", "clip"): ("clip", lambda c: (-float(c), float(c))),
    (_O + "height_scan", "noise"): ("noise", lambda x: float(x) if x else None),
}


def _params_to_fields(table: dict[str, ObservationTermCfg]) -> dict[str, ObservationTermCfg]:
    """``table`` with :data:`PARAMS_TO_FIELDS` applied."""
    out = {}
    for name, term in table.items():
        moved = {k: v for k, v in term.params.items() if (func_path(term.func), k) in PARAMS_TO_FIELDS}
        if moved:
            fields = {}
            for k, v in moved.items():
                field_name, convert = PARAMS_TO_FIELDS[(func_path(term.func), k)]
                fields[field_name] = convert(v)
            params = {k: v for k, v in term.params.items() if k not in moved}
            term = dataclasses.replace(term, params=params, **fields)
        out[name] = term
    return out


# The left-right mirror of each observation term (rsl_ppo's symmetry augmentation): a sign per column, or
# the columns of mirrored joints / links swapped. Angular velocity is a pseudovector: (wx, wy, wz) -> (-wx, wy, -wz).
_MIRROR_SIGNS = {"base_ang_vel": (-1, 1, -1), "projected_gravity": (1, -1, 1), "velocity_commands": (1, -1),
                 "base_lin_vel": (1, -1, 1), "friction": (1,), "base_mass_add": (1,), "base_com_offset": (1, -1, 1)}  # fmt: skip
_MIRROR_NAMES = {"joint_pos_rel": KNEE_JOINTS, "joint_vel_rel": POLICY_JOINT_ORDER, "link_mass_scale": LINKS}


def mirror_maps(slices: dict[str, slice], policy_joints: tuple[str, ...],
                extra: Mapping[str, np.ndarray] | None = None) -> tuple[tuple[np.ndarray, np.ndarray], ...]:  # fmt: skip
    """``((obs_index, obs_sign), (action_index, action_sign))``: the mirror image of an observation ``o`` is
    ``o[..., obs_index] * obs_sign``, of an action (over ``policy_joints``) likewise. ``extra``: the column
    permutation of terms whose mirror depends on their parameters (the height scan's grid)."""
    extra = extra or {}
    names = {**_MIRROR_NAMES, "last_action": policy_joints}
    dim = max(sl.stop for sl in slices.values())
    index, sign = np.arange(dim), np.ones(dim, dtype=np.float32)
    for name, sl in slices.items():
        if name in extra:
            index[sl] = sl.start + np.asarray(extra[name])
        elif name in _MIRROR_SIGNS:
            sign[sl] = _MIRROR_SIGNS[name]
        elif name not in names:
            raise ValueError(
                f"observations.{name}: no left-right mirror is known for this term, and mirrored "
                "batches need one; train without them (algo.params.symmetry=false)"
            )
        else:
            index[sl] = sl.start + np.array(mirror_permutation(names[name]))
    actions = np.array(mirror_permutation(policy_joints))
    return (index, sign), (actions, np.ones(len(actions), dtype=np.float32))
