"""G20Hand-v0's configuration (:class:`G20HandConfig`), its term tables and its choices, without MuJoCo.

The term tables (:data:`REWARDS`, :data:`OBSERVATIONS`, :data:`TERMINATIONS`, :data:`EVENTS`; entries of
:mod:`dexwheel.tasks.terms`) name each term's function, weight or scale and parameters. :func:`make_cfg`
builds a config from plain keyword arguments (what ``gymnasium.make`` and Hydra pass): a table by its name
with changes by term (``rewards={"action_rate_l2": -0.02}``), any other field by its name, and the earlier
flat reward fields (``tracking_std=0.2``) through :data:`RENAMES`. This module imports no MuJoCo (its
checks need only the robot description, the composer's layer check and numba's thread count), so a
backend without mujoco 4 (the Isaac Lab venv: :mod:`dexwheel.isaaclab.tasks.hand_pose.config`) builds from the
same config.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dexwheel.fields import ConfigFieldError, check_types
from dexwheel.robots.g20 import GOAL_PRESETS
from dexwheel.tasks.config_builder import build_cfg
from dexwheel.tasks.hand.config import (
    KIND_SHORTHANDS,
    HandActionCfg,
    HandCollisionCfg,
    HandComposerCfg,
    HandDriveCfg,
    check_sections,
    control_substeps,
    projection_on,
)
from dexwheel.tasks.terms import (
    EventTermCfg,
    ObservationTermCfg,
    RewardTermCfg,
    TerminationTermCfg,
    check_params,
    validate_terms,
)

GOAL_MODES = ("mixed", "presets", "random")
HANDS = ("left", "right")
_R = "dexwheel.tasks.hand_pose.rewards:"
_G = "dexwheel.tasks.mdp:"  # the generic terms
_O = "dexwheel.tasks.hand_pose.observations:"
_E = "dexwheel.tasks.hand_pose.events:"

#: The reward terms, in the order they are summed (mjlab names): a wide and a narrow tracking term (see
#: :func:`~dexwheel.tasks.hand_pose.rewards.joint_pos_tracking_exp`), the deepest contact (m) at -100 per
#: metre, and the action rate.
REWARDS: dict[str, RewardTermCfg] = {
    "joint_pos_tracking": RewardTermCfg(_R + "joint_pos_tracking_exp", 1.0, {"std": 0.3}),
    "joint_pos_tracking_fine": RewardTermCfg(_R + "joint_pos_tracking_exp", 1.0, {"std": 0.1}),
    "penetration": RewardTermCfg(_R + "max_penetration", -100.0),
    "action_rate_l2": RewardTermCfg(_G + "action_rate_l2", -0.01),
}
REWARD_TERMS = tuple(REWARDS)  # the default table's names (the Isaac Lab task maps each)

#: The observation terms, in column order; each term's name is its ``obs_slices`` key.
OBSERVATIONS: dict[str, ObservationTermCfg] = {
    "qpos": ObservationTermCfg(_G + "joint_pos"),
    "qvel": ObservationTermCfg(_G + "joint_vel"),
    "goal": ObservationTermCfg(_O + "goal_pose"),
    "last_action": ObservationTermCfg(_G + "last_action"),
}

#: No termination by default: pose tracking ends by time (``max_episode_steps``) only.
TERMINATIONS: dict[str, TerminationTermCfg] = {}

#: Reset events, in the order they run: noise on the open-hand start pose.
EVENTS: dict[str, EventTermCfg] = {
    "reset_joints": EventTermCfg(_E + "reset_joints_by_offset", params={"scale": 0.05}),
}

#: The earlier flat fields -> the table entry that holds them now (times the factor: weights are signed now):
#: ``penetration_weight=100`` is the ``penetration`` term's weight -100 (:mod:`dexwheel.tasks.config_builder`).
RENAMES: dict[str, tuple[str, float]] = {
    "tracking_weight": ("rewards.joint_pos_tracking.weight", 1.0),
    "tracking_std": ("rewards.joint_pos_tracking.params.std", 1.0),
    "tracking_fine_weight": ("rewards.joint_pos_tracking_fine.weight", 1.0),
    "tracking_fine_std": ("rewards.joint_pos_tracking_fine.params.std", 1.0),
    "penetration_weight": ("rewards.penetration.weight", -1.0),
    "action_rate_weight": ("rewards.action_rate_l2.weight", -1.0),
    "reset_noise_scale": ("events.reset_joints.params.scale", 1.0),
}
_TERM_KINDS = {"rewards": RewardTermCfg, "observations": ObservationTermCfg, "terminations": TerminationTermCfg,
               "events": EventTermCfg}  # fmt: skip


def _bad(field: str, detail: str) -> ConfigFieldError:
    """The error of a bad config field; ``detail`` starts with the field's name."""
    return ConfigFieldError(field, detail, "G20Hand")


def _choice(name: str, value: Any, allowed: Sequence[Any], field: str | None = None) -> None:
    if value not in allowed:
        raise _bad(field or name, f"{name}={value!r} is not allowed; choose one of {list(allowed)}")


@dataclass(frozen=True)
class G20HandConfig:
    """Every tunable of G20Hand-v0; the env's keyword arguments are exactly these fields, a section as a dict of its
    fields (``drive={"kind": "pd"}``, or by its kind alone: ``drive="pd"``).

    Plain Python types only, so a config layer (Hydra) can pass each one through.
    """

    hand: str = "left"
    #: The hand sections (:mod:`dexwheel.tasks.hand.config`), shared with the object tasks.
    actions: HandActionCfg = field(default_factory=HandActionCfg)
    drive: HandDriveCfg = field(default_factory=HandDriveCfg)
    composer: HandComposerCfg = field(default_factory=HandComposerCfg)
    collision: HandCollisionCfg = field(default_factory=HandCollisionCfg)
    control_hz: float = 50.0
    #: Truncate after this many steps (None: never). ``gymnasium.make(..., max_episode_steps=k)``
    #: applies a TimeLimit wrapper instead; ``make_vec`` passes it here.
    max_episode_steps: int | None = None
    #: Where goals come from: ``"mixed"`` (presets with ``preset_goal_prob``, else random), ``"presets"``, ``"random"``.
    goal_mode: str = "mixed"
    goal_presets: tuple[str, ...] = ("open", "half_fist", "full_fist")
    preset_goal_prob: float = 0.25
    #: Draw a new goal every this many steps within an episode (0: one goal per episode).
    goal_switch_steps: int = 0
    #: Random goals: tries to find a collision-free pose before falling back to the open hand.
    random_goal_tries: int = 64
    #: The term tables (:mod:`dexwheel.tasks.terms`); :func:`make_cfg` applies changes by term name.
    rewards: dict[str, RewardTermCfg] = field(default_factory=lambda: dict(REWARDS))
    observations: dict[str, ObservationTermCfg] = field(default_factory=lambda: dict(OBSERVATIONS))
    terminations: dict[str, TerminationTermCfg] = field(default_factory=lambda: dict(TERMINATIONS))
    events: dict[str, EventTermCfg] = field(default_factory=lambda: dict(EVENTS))

    def __post_init__(self) -> None:
        check_types(self, env="G20Hand")
        _choice("hand", self.hand, HANDS)
        _choice("goal_mode", self.goal_mode, GOAL_MODES)
        object.__setattr__(self, "goal_presets", tuple(self.goal_presets))
        check_sections(self, "G20Hand")
        if not self.goal_presets and self.goal_mode != "random":
            raise _bad("goal_presets", f"goal_presets is empty; goal_mode={self.goal_mode!r} needs at least one")
        for name in self.goal_presets:
            _choice("goal_presets entry", name, tuple(GOAL_PRESETS), "goal_presets")
        if not (math.isfinite(self.control_hz) and self.control_hz > 0):
            raise _bad("control_hz", f"control_hz must be finite and > 0, got {self.control_hz!r}")
        for section in _TERM_KINDS:
            table = getattr(self, section)
            if not isinstance(table, Mapping):
                raise _bad(section, f"{section}: expected a dict of terms by name, got {table!r}")
            validate_terms(table, section)
            check_params(table, section)
            for name, term in table.items():
                _check_term(f"{section}.{name}", term)
        if not 0.0 <= self.preset_goal_prob <= 1.0:
            raise _bad("preset_goal_prob", f"preset_goal_prob must be in [0, 1], got {self.preset_goal_prob!r}")
        if int(self.random_goal_tries) != self.random_goal_tries or self.random_goal_tries < 1:
            raise _bad(
                "random_goal_tries", f"random_goal_tries must be an integer >= 1, got {self.random_goal_tries!r}"
            )
        if int(self.goal_switch_steps) != self.goal_switch_steps or self.goal_switch_steps < 0:
            raise _bad(
                "goal_switch_steps", f"goal_switch_steps must be an integer >= 0, got {self.goal_switch_steps!r}"
            )
        if self.max_episode_steps is not None and (
            int(self.max_episode_steps) != self.max_episode_steps or self.max_episode_steps < 1
        ):
            raise _bad(
                "max_episode_steps",
                f"max_episode_steps must be None or an integer >= 1, got {self.max_episode_steps!r}",
            )

    @property
    def projection(self) -> bool:
        """Whether collision projection runs: hard-write only, never under ``track_test``."""
        return projection_on(self)

    def substeps(self, timestep: float) -> int:
        """Physics steps per control step; ``control_hz`` must divide ``1 / timestep``."""
        return control_substeps(self.control_hz, timestep)


def _check_term(where: str, term: Any) -> None:
    """What the hand task needs of an entry (the parameters: :func:`~dexwheel.tasks.terms.check_params`)."""
    if isinstance(term, ObservationTermCfg) and term.group != "policy":
        raise _bad(f"{where}.group", f"{where}.group: {term.group!r}; G20Hand has one observation group, 'policy'")
    if isinstance(term, EventTermCfg) and term.mode != "reset":
        raise _bad(f"{where}.mode", f"{where}.mode: {term.mode!r}; G20Hand runs 'reset' events only")
    if isinstance(term, EventTermCfg) and term.domain_randomization:
        raise _bad(f"{where}.domain_randomization", f"{where}.domain_randomization: G20Hand has no domain "
                                                    "randomisation switch; leave it False")  # fmt: skip


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def hand_pose_cfg(robot: str = "g20_left") -> G20HandConfig:
    """The pose task's config for ``robot`` (``g20_left`` / ``g20_right``): a goal for 250 steps, 5 s at 50 Hz."""
    return G20HandConfig(hand=robot.removeprefix("g20_"), max_episode_steps=250)


def make_cfg(cfg: G20HandConfig | None = None, **kwargs: Any) -> G20HandConfig:
    """``cfg`` (default: the defaults) with keyword changes applied and checked
    (:func:`~dexwheel.tasks.config_builder.build_cfg`): a term table by term name, a flat field of :data:`RENAMES`
    on the entry that holds it now, any other keyword a field. An unknown keyword fails, naming it and the valid
    ones."""
    cfg = cfg if cfg is not None else G20HandConfig()
    return build_cfg(cfg, kwargs, tables=_TERM_KINDS, renames=RENAMES, convert=KIND_SHORTHANDS, env="G20Hand")
