"""G20Hand-v0's configuration (:class:`G20HandConfig`) and its choices, without MuJoCo.

:mod:`dexwheel.envs.g20_hand` re-exports every name here; this module imports no MuJoCo (its checks need
only the robot description, the composer's layer check and numba's thread count), so a backend without
mujoco 4 (the Isaac Lab venv: :mod:`dexwheel.isaaclab.tasks.g20_pose`) builds from the same config.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numba

from dexwheel.envs.g20_command import HandCommandPath
from dexwheel.fields import ConfigFieldError, check_types
from dexwheel.robots.g20 import GOAL_PRESETS

DRIVES = ("hard_write", "pd")
ACTIONS = ("normalized", "sdk255", "nominal", "delta")
GOAL_MODES = ("mixed", "presets", "random")
HANDS = ("left", "right")
OUT_OF_RANGE = ("raise", "clip")
RENDER_MODES = ("human", "rgb_array")
#: Reward terms, in the order they are summed (mjlab names).
REWARD_TERMS = ("joint_pos_tracking", "joint_pos_tracking_fine", "penetration", "action_rate_l2")


def _bad(field: str, detail: str) -> ConfigFieldError:
    """The error of a bad config field; ``detail`` starts with the field's name."""
    return ConfigFieldError(field, detail, "G20Hand")


def _choice(name: str, value: Any, allowed: Sequence[Any], field: str | None = None) -> None:
    if value not in allowed:
        raise _bad(field or name, f"{name}={value!r} is not allowed; choose one of {list(allowed)}")


@dataclass(frozen=True)
class G20HandConfig:
    """Every tunable of G20Hand-v0; the env's keyword arguments are exactly these fields.

    Plain Python types only, so a config layer (Hydra) can pass each one through.
    """

    hand: str = "left"
    drive: str = "hard_write"
    action: str = "normalized"
    #: ``"raise"``: out-of-range/NaN/inf actions raise ActionError; ``"clip"``: clipped (NaN holds).
    out_of_range: str = "raise"
    #: ``action="delta"``: radians per step at action 1.
    delta_scale: float = 0.05
    slew_rad_s: float = 5.0
    #: Hard-write only (PD has real contacts); ignored with ``drive="pd"``.
    collision_projection: bool = True
    penetration_tol: float = 5e-4
    projection_iters: int = 12
    #: Try the joints that move no body of a too-deep contact together first (one check); False: strictly per joint.
    projection_group_free: bool = True
    #: Body pairs whose contacts are excluded (None: the spec's pairs, ``robots.g20``); e.g. add
    #: ``("thumb_distal", "hand_base")`` to let the thumb pass through the palm.
    contact_excludes: tuple[tuple[str, str], ...] | None = None
    #: The vendor bridge's ``--track-test``: projection off and slew 0 (overrides both).
    track_test: bool = False
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
    #: Uniform noise (rad) on the open-hand start pose of each episode.
    reset_noise_scale: float = 0.05
    tracking_weight: float = 1.0
    tracking_std: float = 0.3
    #: The same term with a narrow width: near the goal the wide one is flat (0.97 at 0.05 rad), this one
    #: still pulls (0.78), as mjlab's and Isaac Lab's coarse + fine tracking pairs do.
    tracking_fine_weight: float = 1.0
    tracking_fine_std: float = 0.1
    penetration_weight: float = 100.0
    action_rate_weight: float = 0.01
    render_mode: str | None = None
    width: int = 480
    height: int = 480
    #: Free-camera settings (lookat, distance, azimuth, elevation); default: the vendor bridge's compare view.
    default_camera_config: dict[str, Any] | None = field(default=None, hash=False, compare=False)
    #: Worker threads of the vector env (None: one per core); single envs always use one.
    num_threads: int | None = None
    #: Composer layers (:mod:`dexwheel.envs.g20_command`): ``policy`` and optionally ``hold``, an override
    #: layer holding ``hold_joints`` (a group: thumb, index, middle, ring, pinky, fingers; or joint names)
    #: at the goal preset ``hold_pose``.
    composer_layers: tuple[str, ...] = ("policy",)
    hold_joints: str | tuple[str, ...] = "thumb"
    hold_pose: str = "open"

    def __post_init__(self) -> None:
        check_types(self, env="G20Hand")
        _choice("hand", self.hand, HANDS)
        _choice("drive", self.drive, DRIVES)
        _choice("action", self.action, ACTIONS)
        _choice("out_of_range", self.out_of_range, OUT_OF_RANGE)
        _choice("goal_mode", self.goal_mode, GOAL_MODES)
        if self.render_mode is not None:
            _choice("render_mode", self.render_mode, RENDER_MODES)
        object.__setattr__(self, "goal_presets", tuple(self.goal_presets))
        object.__setattr__(self, "composer_layers", tuple(self.composer_layers))
        if not isinstance(self.hold_joints, str):
            object.__setattr__(self, "hold_joints", tuple(self.hold_joints))
        _choice("hold_pose", self.hold_pose, tuple(GOAL_PRESETS))
        HandCommandPath.check(self.composer_layers, self.hold_joints)
        if self.contact_excludes is not None:
            pairs = tuple(tuple(p) for p in self.contact_excludes)
            bad = [p for p in pairs if len(p) != 2]
            if bad:
                raise _bad("contact_excludes", f"contact_excludes entries must be (body, body) pairs, got {bad}")
            object.__setattr__(self, "contact_excludes", pairs)
        if not self.goal_presets and self.goal_mode != "random":
            raise _bad("goal_presets", f"goal_presets is empty; goal_mode={self.goal_mode!r} needs at least one")
        for name in self.goal_presets:
            _choice("goal_presets entry", name, tuple(GOAL_PRESETS), "goal_presets")
        positive = {
            "control_hz": self.control_hz,
            "delta_scale": self.delta_scale,
            "tracking_std": self.tracking_std,
            "tracking_fine_std": self.tracking_fine_std,
        }
        for name, value in positive.items():
            if not (math.isfinite(value) and value > 0):
                raise _bad(name, f"{name} must be finite and > 0, got {value!r}")
        non_negative = {
            "slew_rad_s": self.slew_rad_s,
            "penetration_tol": self.penetration_tol,
            "reset_noise_scale": self.reset_noise_scale,
            "tracking_weight": self.tracking_weight,
            "tracking_fine_weight": self.tracking_fine_weight,
            "penetration_weight": self.penetration_weight,
            "action_rate_weight": self.action_rate_weight,
        }
        for name, value in non_negative.items():
            if not (math.isfinite(value) and value >= 0):
                raise _bad(name, f"{name} must be finite and >= 0, got {value!r}")
        if not 0.0 <= self.preset_goal_prob <= 1.0:
            raise _bad("preset_goal_prob", f"preset_goal_prob must be in [0, 1], got {self.preset_goal_prob!r}")
        for name in ("projection_iters", "random_goal_tries"):
            if int(getattr(self, name)) != getattr(self, name) or getattr(self, name) < 1:
                raise _bad(name, f"{name} must be an integer >= 1, got {getattr(self, name)!r}")
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
        if self.num_threads is not None and (int(self.num_threads) != self.num_threads or self.num_threads < 1):
            raise _bad("num_threads", f"num_threads must be None or an integer >= 1, got {self.num_threads!r}")
        most = numba.config.NUMBA_NUM_THREADS  # numba's pool, which runs the hard-write vector step
        if self.drive == "hard_write" and self.num_threads is not None and self.num_threads > most:
            raise _bad(
                "num_threads",
                f"num_threads must be between 1 and {most} (numba's thread pool, NUMBA_NUM_THREADS) "
                f"for the hard_write drive, got {self.num_threads!r}",
            )
        if int(self.width) < 1 or int(self.height) < 1:
            raise _bad("width" if int(self.width) < 1 else "height",
                       f"width and height must be >= 1, got {self.width}x{self.height}")  # fmt: skip

    @property
    def slew(self) -> float:
        """The slew actually used (0 under ``track_test``)."""
        return 0.0 if self.track_test else float(self.slew_rad_s)

    @property
    def projection(self) -> bool:
        """Whether collision projection runs: hard-write only, never under ``track_test``."""
        return bool(self.collision_projection) and self.drive == "hard_write" and not self.track_test

    def substeps(self, timestep: float) -> int:
        """Physics steps per control step; ``control_hz`` must divide ``1 / timestep``."""
        n = round(1.0 / (self.control_hz * timestep))
        if n < 1 or abs(n * timestep * self.control_hz - 1.0) > 1e-6:
            raise _bad(
                "control_hz",
                f"control_hz={self.control_hz!r} must be (1 / timestep) / k for an integer k >= 1; "
                f"the timestep is {timestep} s, so e.g. {1 / timestep:g}, {1 / (2 * timestep):g}, {1 / (10 * timestep):g}",
            )
        return n
