"""The G20 task's action term: the MuJoCo task's action path on torch, then its slew and its drive."""

from __future__ import annotations

from dataclasses import MISSING

import numpy as np
import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import ActionTerm, ActionTermCfg
from isaaclab.utils import configclass

from dexwheel.isaaclab.tasks.action_delay import action_delay, reset_delay
from dexwheel.isaaclab.tasks.hand_pose.contacts import contact_depth
from dexwheel.isaaclab.tasks.terms import env_index


class HandPoseAction(ActionTerm):
    """The MuJoCo G20 task's action path on torch: its action mapping, composer layers and resolver (those of
    :mod:`dexwheel.control`, one implementation over numpy and torch), then its slew and its drive.

    Built from the MuJoCo task's config (``task_kwargs``, what ``make_cfg`` takes): the mapping is the
    MuJoCo task's :class:`~dexwheel.tasks.hand.action.G20ActionMap`'s (``normalized``, ``sdk255``,
    ``nominal`` or ``delta``; its bounds, its ``normalize`` and ``hold_action``), the layers its
    :class:`~dexwheel.tasks.hand.action_path.HandActionPath` (``policy`` and optionally ``hold``) with
    ``xp=torch``. Once per control step (:meth:`process_actions`) the action, in float64 as on MuJoCo, takes
    the ``out_of_range="clip"`` arithmetic (a NaN holds the previous action, 0 for ``delta``; clipped to the
    mapping's bounds; ``sdk255`` rounded to integers; never raised on: that would sync a GPU every step),
    goes through the mapping (``delta``: from the previous command) and the layers: the command. Each
    physics step (:meth:`apply_actions`) the active targets move from the last control step's toward the
    command by at most ``k * max_step`` at the ``k``-th physics step (:func:`dexwheel.sim.slew.slew_budget`;
    0 slew jumps), are completed to every joint (:class:`dexwheel.control.MimicCompletion` on torch) and:

    * ``drive="pd"``: written as the position targets of the joints' PD actuators;
    * ``drive="hard_write"``: written as the joints' positions, velocities zero, and as their PD targets
      (so the actuators push nothing; the task runs without gravity, so a free hand stays exactly at the
      written pose through the physics step). Contacts still act during each physics step: a written pose
      that penetrates is pushed for one step and written again at the next (no collision projection).

    It keeps the deepest contact over the control step's physics steps (:attr:`depth`), the accepted
    action scaled to [-1, 1] and the one before it (:attr:`normalized`, :attr:`prev_normalized`: the MuJoCo
    task's ``action`` and ``last_action``), and at a reset starts the slew and the command at the reset
    pose with the previous action the one that holds it (the MuJoCo task's reset).
    """

    cfg: HandPoseActionCfg

    def __init__(self, cfg: HandPoseActionCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        from dexwheel.control.g20_sdk import G20_MIMIC
        from dexwheel.sim.slew import slew_budget
        from dexwheel.tasks.hand.action import G20ActionMap
        from dexwheel.tasks.hand.action_path import HandActionPath
        from dexwheel.tasks.hand_pose.config import make_cfg

        if getattr(env, "_physics_handles_decimation", False):
            raise RuntimeError("HandPoseAction ramps its targets per physics step, but this physics backend runs "
                               "the whole decimation loop in one call (Newton actuators only)")  # fmt: skip
        task = make_cfg(**cfg.task_kwargs)
        n = self.num_envs
        ids, _ = self._asset.find_joints(list(cfg.joint_names), preserve_order=True)
        self._joint_ids = torch.tensor(ids, device=self.device, dtype=torch.int32)
        self.completion = G20_MIMIC
        self._active_cols = self._joint_ids[torch.as_tensor(G20_MIMIC.active_idx, device=self.device)].long()
        a, composer = task.actions, task.composer
        self.map = G20ActionMap(a.kind, task.hand, G20_MIMIC, 1, out_of_range=a.out_of_range, delta_scale=a.delta_scale)
        self.kind, self.hard_write = a.kind, task.drive.kind == "hard_write"
        self.path = HandActionPath(composer.layers, composer.hold_joints, self.map.preset(composer.hold_pose),
                                    (G20_MIMIC.active_lower, G20_MIMIC.active_upper), n, xp=torch,
                                    device=self.device)  # fmt: skip
        f64 = {"device": self.device, "dtype": torch.float64}
        self._low, self._high = torch.tensor(self.map.low, **f64), torch.tensor(self.map.high, **f64)
        sub, div, one = self.map.norm_params
        self._norm = (torch.tensor(sub, **f64), torch.tensor(div, **f64), float(one))
        nsub = int(env.cfg.decimation)
        #: Per physics step k of a control step (rows), the largest move of each active joint's target so far.
        self.budget = torch.tensor(slew_budget(G20_MIMIC.slew_steps(task.drive.slew, env.physics_dt), nsub), **f64)
        na = G20_MIMIC.nactive
        start = self._asset.data.default_joint_pos.torch[:, self._active_cols].double()
        self._raw = torch.zeros(n, self.map.dim, device=self.device)
        self._accepted = torch.zeros(n, self.map.dim, **f64)  # the last accepted action (a NaN holds it)
        self.normalized = torch.zeros(n, self.map.dim, **f64)
        self.prev_normalized = torch.zeros(n, self.map.dim, **f64)
        self._command = start.clone()  # the active joints' command of this control step (after the layers)
        self._start = start.clone()  # the active targets at the start of this control step
        self._target = start.clone()  # the active targets of the last physics step
        self._zeros = torch.zeros(n, len(ids), device=self.device)
        self._substep = 0
        #: Per env, the deepest contact (m) over this control step's physics steps before the last one.
        self.depth = torch.zeros(n, device=self.device)
        self.delay = action_delay(a.delay_steps, "actions.delay_steps", self._accepted)
        assert na == self._command.shape[1]

    @property
    def action_dim(self) -> int:
        return self.map.dim

    @property
    def raw_actions(self) -> torch.Tensor:
        return self._raw

    @property
    def processed_actions(self) -> torch.Tensor:
        return self._command

    @property
    def targets(self) -> torch.Tensor:
        """The active joints' targets of the last physics step (the slew's state)."""
        return self._target

    @property
    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The action's range (the mapping's units: [-1, 1], 0..255, radians)."""
        return self._low, self._high

    def normalize(self, a: torch.Tensor) -> torch.Tensor:
        """Actions in their own units -> [-1, 1] (the MuJoCo task's ``G20ActionMap.normalize``)."""
        sub, div, one = self._norm
        return (a - sub) / div - one

    def hold_action(self, q_active: torch.Tensor) -> torch.Tensor:
        """The action that commands ``q_active`` (the MuJoCo task's ``G20ActionMap.hold_action``, in float64), in
        ``q_active``'s dtype."""
        q = q_active.detach().double().cpu().numpy()
        if self.kind == "sdk255":  # the SDK inverse takes one pose at a time
            hold = np.stack([self.map.hold_action(row) for row in q.reshape(-1, q.shape[-1])]).reshape(
                *q.shape[:-1], -1
            )
        else:
            hold = self.map.hold_action(q)
        return torch.as_tensor(hold, device=q_active.device, dtype=q_active.dtype)

    def process_actions(self, actions: torch.Tensor) -> None:
        self._raw[:] = actions
        a = actions.to(torch.float64)
        hold = torch.zeros_like(a) if self.kind == "delta" else self._accepted
        a = torch.where(torch.isnan(a), hold, a)
        a = torch.minimum(torch.maximum(a, self._low), self._high)
        if self.map.integer:
            a = torch.round(a)  # half to even, as np.rint
        applied = a if self.delay is None else self.delay(a)  # the MuJoCo task's latency
        goals = self.map.reference.goals(applied, self._command)  # dexwheel.control's mapping, on torch
        self._command.copy_(self.path(goals))
        self._accepted.copy_(a)
        self.prev_normalized.copy_(self.normalized)
        self.normalized.copy_(self.normalize(a))
        self._start.copy_(self._target)
        self._substep = 0
        self.depth.zero_()

    def apply_actions(self) -> None:
        if self._substep > 0:  # the contacts of the previous physics step of this control step
            torch.maximum(self.depth, contact_depth(self.num_envs, self.device), out=self.depth)
        budget = self.budget[min(self._substep, len(self.budget) - 1)]
        self._substep += 1
        diff = self._command - self._start
        # in place: rsl_rl steps under torch.inference_mode, where a new tensor would be an inference tensor that a
        # reset outside it (the evaluation episodes) cannot write
        self._target.copy_(self._command - (diff - torch.minimum(torch.maximum(diff, -budget), budget)))
        full = self.completion.complete(self._target, clip_mimic=True).float()
        asset, joints = self._asset, self._joint_ids
        if self.hard_write:
            asset.write_joint_position_to_sim_index(position=full, joint_ids=joints)
            asset.write_joint_velocity_to_sim_index(velocity=self._zeros, joint_ids=joints)
        asset.actuators.target_command.set_position_index(value=full, joint_ids=joints)

    def reset(self, env_ids=None) -> None:
        ids = env_index(env_ids, self.num_envs, self.device)
        q0 = self._asset.data.joint_pos.torch[ids][:, self._active_cols].double()
        self._command[ids] = q0
        self._start[ids] = q0
        self._target[ids] = q0
        self.depth[ids] = 0.0
        hold = self.hold_action(q0)
        reset_delay(self.delay, ids, hold)
        self._accepted[ids] = hold
        self._raw[ids] = hold.float()
        self.normalized[ids] = self.normalize(hold)
        self.prev_normalized[ids] = self.normalized[ids]
        manager, offset = self._env.action_manager, 0
        for name in manager.active_terms:  # this term's columns of the manager's action history
            if manager.get_term(name) is self:
                break
            offset += manager.get_term(name).action_dim
        cols = slice(offset, offset + self.action_dim)
        manager.action[ids, cols] = hold.float()
        manager.prev_action[ids, cols] = hold.float()


@configclass
class HandPoseActionCfg(ActionTermCfg):
    """:class:`HandPoseAction`'s settings: the MuJoCo task's config as ``make_cfg(**task_kwargs)``."""

    class_type: type = HandPoseAction
    joint_names: list[str] = MISSING
    """Every driven joint, in the completion's full order (ALL_JOINTS)."""
    task_kwargs: dict = MISSING
    """The MuJoCo task's config (:func:`dexwheel.tasks.hand_pose.config.make_cfg` keywords)."""
