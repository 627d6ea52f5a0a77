"""The G20's joint targets after the action mapping: composer layers, then the resolver.

The mapped action (:mod:`dexwheel.control`'s G20 mappings) is the ``policy`` layer's position target;
the other configured layers join it in one :class:`~dexwheel.control.JointCommandComposer`, and a
:class:`~dexwheel.control.JointCommandResolver` lays the composed frame out in the drive's joint
order (the 16 active joints; the drive completes the mimic joints). Layers (``composer.layers``):

* ``policy``: every active joint, from the action;
* ``hold``: an override layer holding the joints ``hold_joints`` (a group of
  :data:`~dexwheel.robots.g20.JOINT_GROUPS`, e.g. ``thumb``, or joint names) at the goal preset
  ``hold_pose``, so that the policy (or a teleoperation stream, in the bridge) drives the rest; without
  this layer, a ``hold_joints`` or ``hold_pose`` other than its default is refused (nothing would apply it).

For several envs the layouts carry an env prefix, so one ``compose()`` serves every env. The path runs on
numpy (the MuJoCo task) or torch (``xp=torch``, ``device``: the Isaac Lab task), the composer's and the
resolver's own two libraries (:mod:`dexwheel.control._xp`): one implementation for both backends. Frames are
float32 (the composer's vocabulary; targets are clipped back into the joint limits, which float32 can
round outward); the hand's drives read their position targets and keep their actuator gains (the frames carry the actuators' kp and kv, which the composer requires of every source).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from dexwheel.control import JointCommandComposer, JointCommandLayer, JointCommandResolver, JointTargetBuffer, _xp
from dexwheel.control.layout import env_layout
from dexwheel.fields import ConfigFieldError
from dexwheel.robots.g20 import ACTIVE_JOINTS, ACTUATOR_KP, ACTUATOR_KV, JOINT_GROUPS

LAYERS = ("policy", "hold")
#: The ``hold`` layer's settings when none are given: a config without that layer may only leave them so.
HOLD_JOINTS, HOLD_POSE = "thumb", "open"


def joint_group(value: str | Sequence[str], field: str) -> tuple[str, ...]:
    """A group name of :data:`JOINT_GROUPS` or active joint names, as joint names (error naming ``field``)."""
    if isinstance(value, str):
        if value not in JOINT_GROUPS:
            raise ConfigFieldError(field, f"{field}: unknown joint group {value!r}; groups: {list(JOINT_GROUPS)} "
                                   "(or a list of active joint names)")  # fmt: skip
        return JOINT_GROUPS[value]
    names = tuple(value)
    bad = [j for j in names if j not in ACTIVE_JOINTS]
    if bad or not names:
        raise ConfigFieldError(field, f"{field}: {bad or 'an empty list'} are not active G20 joints; "
                               f"choose from {list(ACTIVE_JOINTS)}")  # fmt: skip
    twice = sorted({j for j in names if names.count(j) > 1}, key=names.index)
    if twice:
        raise ConfigFieldError(field, f"{field}: {twice} named more than once; name each joint once")
    return names


class HandActionPath:
    """``(N, 16)`` mapped goals -> the composed ``(N, 16)`` joint targets the drive moves toward (numpy, or
    torch tensors on ``device`` with ``xp=torch``)."""

    def __init__(self, layers: Sequence[str], hold_joints: str | Sequence[str], hold_pose: np.ndarray,
                 limits: tuple[np.ndarray, np.ndarray], num_envs: int, *, xp: ModuleType | None = None,
                 device: Any = None) -> None:  # fmt: skip
        layers = self.check(layers, hold_joints)
        self.xp, self.device = xp, device
        n, na = num_envs, len(ACTIVE_JOINTS)
        if _xp.resolve(xp) is np:
            self._lower, self._upper = limits
            self.command = np.zeros((n, na))
        else:
            self._lower, self._upper = (xp.as_tensor(np.asarray(v), dtype=xp.float64, device=device) for v in limits)
            self.command = xp.zeros((n, na), dtype=xp.float64, device=device)
        self.layers = layers
        self.policy = self._buffer("policy", ACTIVE_JOINTS, np.zeros(na), n)
        sources = [JointCommandLayer("policy", self.policy.view)]
        self.hold_joints: tuple[str, ...] = ()
        if "hold" in layers:
            self.hold_joints = joint_group(hold_joints, "composer.hold_joints")
            pose = np.asarray(hold_pose)[[ACTIVE_JOINTS.index(j) for j in self.hold_joints]]
            self.hold = self._buffer("hold", self.hold_joints, pose, n)
            sources.append(JointCommandLayer("hold", self.hold.view, override=True))
        self.composer = JointCommandComposer(env_layout(ACTIVE_JOINTS, n, "task"), sources)
        self.resolver = JointCommandResolver(env_layout(ACTIVE_JOINTS, n, "robot"), xp=xp, device=device)
        self._targets = self.resolver.bind(self.composer.output_layout).qpos.reshape(n, na)
        self._goals = self.policy.position.reshape(n, na)

    @staticmethod
    def check(layers: Sequence[str], hold_joints: str | Sequence[str], hold_pose: str = HOLD_POSE) -> tuple[str, ...]:
        """The layers, checked (a config error names ``composer.layers``, ``composer.hold_joints`` or
        ``composer.hold_pose``: the hand section that holds them, :class:`~dexwheel.tasks.hand.config.HandComposerCfg`)."""
        layers = tuple(layers)
        unknown = [name for name in layers if name not in LAYERS]
        if unknown or "policy" not in layers or len(set(layers)) != len(layers):
            raise ConfigFieldError("composer.layers", f"composer.layers: {list(layers)}; the G20 takes 'policy' "
                                   f"and optionally {list(LAYERS[1:])}, each once")  # fmt: skip
        if "hold" not in layers:  # nothing would apply the hold settings: only their defaults are accepted
            settings = {"hold_joints": (hold_joints, HOLD_JOINTS), "hold_pose": (hold_pose, HOLD_POSE)}
            given = {k: v for k, (v, default) in settings.items() if v != default}
            if given:
                what = " and ".join(f"composer.{k}={v!r}" for k, v in given.items())
                raise ConfigFieldError(f"composer.{next(iter(given))}", f"{what} would be ignored: "
                                       f"composer.layers {list(layers)} has no 'hold' layer; add 'hold' "
                                       "(composer=hold_thumb) or leave hold_joints and hold_pose unset")  # fmt: skip
        elif set(joint_group(hold_joints, "composer.hold_joints")) == set(ACTIVE_JOINTS):
            raise ConfigFieldError("composer.hold_joints", f"composer.hold_joints: {hold_joints!r} holds every active "
                                   "joint, so the policy would control nothing; hold a group (thumb, index, ..., "
                                   "fingers) instead")  # fmt: skip
        return layers

    def _buffer(self, name: str, joints: Sequence[str], position: np.ndarray, n: int) -> JointTargetBuffer:
        k = len(joints)
        return JointTargetBuffer(env_layout(joints, n, name), position=np.tile(position, n),
                                 kp=np.full(n * k, ACTUATOR_KP), kd=np.full(n * k, ACTUATOR_KV),
                                 xp=self.xp, device=self.device)  # fmt: skip

    def __call__(self, goals: np.ndarray) -> np.ndarray:
        """The composed targets of ``goals`` (a reused buffer: copy it to keep it)."""
        self._goals[...] = goals
        self.resolver.resolve_into(self.composer.compose())
        # float32 can round a limit outward (1.74 -> 1.7400000095): back within the limits, so that mimic
        # joints complete from in-range values
        xp = _xp.namespace(self.command)
        return xp.minimum(xp.maximum(self._targets, self._lower, out=self.command), self._upper, out=self.command)

    def describe(self) -> Mapping[str, tuple[str, ...]]:
        """Which joints each layer owns (``hold`` overrides the policy's)."""
        return {"policy": tuple(j for j in ACTIVE_JOINTS if j not in self.hold_joints), "hold": self.hold_joints}
