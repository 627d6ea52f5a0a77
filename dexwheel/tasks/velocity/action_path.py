"""The wheel-leg task's action path for N envs, on numpy (the MuJoCo task) or torch (the Isaac Lab task).

One implementation for both backends (MuJoCo-free: numpy and :mod:`dexwheel.control` only)::

    action [-1, 1] -> policy JointTargetBuffer (knees: stance + knee_scale a; wheels: vel = wheel_scale a)
      -> JointCommandComposer (layers: policy, stance, override) -> task-order MotorFrame
      -> JointCommandResolver -> robot-order MotorFrame (ROBOT_JOINT_ORDER), gains included

The layers come from ``cfg.composer`` (:class:`~dexwheel.tasks.velocity.config.ComposerCfg`): ``policy`` takes
the action, ``stance`` holds its joints at the stance with the task's gains (``layers=("policy", "stance")``
is the wheels-only variant), ``override`` is the safety stop that wins over every other layer (wheels to zero
velocity, knees stiff at the stance; :meth:`WheelLegActionPath.set_override` switches it). The composer and
the resolver run on layouts whose joint names carry an env prefix (``env3/fl_knee_joint``), so one
``compose()`` merges every env's layers; the wiring is first built and checked with the plain joint names, so
a wiring error names the joint. The action mapping itself (into :attr:`WheelLegActionPath.policy_block`) is
the backend's: a compiled numpy kernel on MuJoCo, torch on Isaac Lab, both with :attr:`act_scale` and
:attr:`act_offset`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from dexwheel.control import JointCommandComposer, JointCommandLayer, JointCommandResolver, JointTargetBuffer
from dexwheel.control.layout import env_layout
from dexwheel.control.targets import MotorFrame
from dexwheel.robots.wheel_leg import KNEE_JOINTS, POLICY_JOINT_ORDER, ROBOT_JOINT_ORDER
from dexwheel.tasks.velocity.config import WheelLegEnvCfg, joint_group


class WheelLegActionPath:
    """The layer buffers, composers and resolver of ``num_envs`` wheel-leg envs (``xp``: numpy or torch, on
    ``device``). ``stacklevel`` points the "policy controls nothing" warning at the caller that builds the env."""

    def __init__(self, cfg: WheelLegEnvCfg, num_envs: int, *, xp: ModuleType | None = None, device: Any = None,
                 stacklevel: int = 2) -> None:  # fmt: skip
        cc, n = cfg.composer, int(num_envs)
        self.cfg, self.num_envs, self.xp, self.device = cfg, n, xp, device
        self.stance = np.asarray(cfg.stance_pose, dtype=np.float64)
        self.stance_joints = joint_group(cc.stance_joints, "composer.stance_joints") if "stance" in cc.layers else ()
        self.override_joints = joint_group(cc.override_joints, "composer.override_joints")
        if cc.policy_joints is None:
            self.policy_joints = tuple(j for j in POLICY_JOINT_ORDER if j not in self.stance_joints)
        else:
            self.policy_joints = joint_group(cc.policy_joints, "composer.policy_joints")
        if not self.policy_joints:
            raise ValueError(f"composer: the policy layer holds no joint (layers {cc.layers})")
        self._composer(1, self._buffers(1, None, None), True)  # checks the wiring with plain joint names
        self.action_dim = len(self.policy_joints)
        #: How many of the policy's joints are knees (they come first, in POLICY_JOINT_ORDER).
        self.nk = sum(j in KNEE_JOINTS for j in self.policy_joints)
        self.buffers = self._buffers(n, xp, device)
        self._composers: dict[bool, JointCommandComposer | None] = {True: self._composer(n, self.buffers, True)}
        self._composers[False] = None if "override" in cc.layers else self._composers[True]
        self.resolver = JointCommandResolver(env_layout(ROBOT_JOINT_ORDER, n, "robot"), xp=xp, device=device)
        self.override_active = "override" in cc.layers
        self._bind_frames()
        if self.override_active and not cc.override_active:
            self.set_override(False)
        controlled = [j for j in self.policy_joints if not (self.override_active and j in self.override_joints)]
        if not controlled:
            warnings.warn(
                f"composer: the active override layer holds every joint of the policy ({', '.join(self.policy_joints)}),"
                " so the policy controls nothing until set_override(False); to train a policy, use "
                "composer.override_active=false (the stop then engages when switched on) or composer.override_joints "
                "without some of them",
                UserWarning,
                stacklevel=stacklevel + 1,
            )
        #: The policy layer's ``(5, N, action_dim)`` block (rows position, kp, kd, vel, torque): the action lands here.
        self.policy_block = self.buffers["policy"].block.reshape(5, n, self.action_dim)
        a = cfg.actions
        nw = self.action_dim - self.nk
        #: Per policy column: rad (knees) or rad/s (wheels) per unit action, and the knees' offset (the stance).
        self.act_scale = np.array([a.knee_scale] * self.nk + [a.wheel_velocity_scale] * nw)
        self.act_offset = np.array([self.stance[KNEE_JOINTS.index(j)] for j in self.policy_joints[: self.nk]])

    def _layer_buffer(self, kind: str, joints: Sequence[str], n: int, xp, device) -> JointTargetBuffer:
        """A layer's buffer with its fixed values (knee position/gains, wheel damping) for every env."""
        c, cc = self.cfg, self.cfg.composer
        pos, kp, kd = [], [], []
        for j in joints:
            knee = j in KNEE_JOINTS
            pos.append(self.stance[KNEE_JOINTS.index(j)] if knee else 0.0)
            if kind == "override":
                kp.append(cc.override_knee_kp if knee else 0.0)
                kd.append(cc.override_knee_kd if knee else cc.override_wheel_kd)
            else:
                kp.append(c.knee_kp if knee else 0.0)
                kd.append(c.knee_kd if knee else c.wheel_kd)
        return JointTargetBuffer(env_layout(joints, n, kind), position=np.tile(pos, n), kp=np.tile(kp, n),
                                 kd=np.tile(kd, n), xp=xp, device=device)  # fmt: skip

    def _buffers(self, n: int, xp, device) -> dict[str, JointTargetBuffer]:
        joints = {"policy": self.policy_joints, "stance": self.stance_joints, "override": self.override_joints}
        return {name: self._layer_buffer(name, joints[name], n, xp, device) for name in self.cfg.composer.layers}

    def _composer(self, n: int, buffers: dict[str, JointTargetBuffer], with_override: bool) -> JointCommandComposer:
        layers = [JointCommandLayer(name, buf.view, override=name == "override")
                  for name, buf in buffers.items() if with_override or name != "override"]  # fmt: skip
        return JointCommandComposer(env_layout(POLICY_JOINT_ORDER, n, "task"), layers)

    def _bind_frames(self) -> None:
        composer = self._composers[self.override_active]
        assert composer is not None
        self.composer = composer
        out = self.resolver.bind(composer.output_layout)
        #: The robot-order frame's ``(5, N, len(ROBOT_JOINT_ORDER))`` block, refreshed by :meth:`compose`.
        self.robot_block = out.block.reshape(5, self.num_envs, len(ROBOT_JOINT_ORDER))

    def set_override(self, active: bool) -> None:
        """Switch the override layer on or off (it must be among the configured layers).

        Both composers read the same layer buffers, so switching keeps every target; switching off
        fails, naming the joints, when the override is the only layer covering some joint.
        """
        if "override" not in self.cfg.composer.layers:
            raise ValueError(f"composer: no 'override' layer configured (layers {self.cfg.composer.layers})")
        if not active and self._composers[False] is None:
            self._composer(1, self._buffers(1, None, None), False)  # names the uncovered joints
            self._composers[False] = self._composer(self.num_envs, self.buffers, False)
        self.override_active = bool(active)
        self._bind_frames()

    def compose(self) -> MotorFrame:
        """Merge the layers and resolve them onto the robot's joints: the frame behind :attr:`robot_block`."""
        return self.resolver.resolve_into(self.composer.compose())
