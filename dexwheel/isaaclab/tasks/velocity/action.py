"""The wheel-leg task's action term: the MuJoCo task's action path on torch."""

from __future__ import annotations

from dataclasses import MISSING

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import ActionTerm, ActionTermCfg
from isaaclab.utils import configclass

from dexwheel.isaaclab.tasks.action_delay import action_delay, reset_delay
from dexwheel.isaaclab.tasks.terms import env_index


class WheelLegComposerAction(ActionTerm):
    """The wheel-leg action path of :mod:`dexwheel.control` on torch: the MuJoCo task's own
    :class:`~dexwheel.tasks.velocity.action_path.WheelLegActionPath` (the same layers, composer and resolver,
    built from the same config), its robot-order frame written as the joints' targets and gains.

    Per control step (:meth:`process_actions`) the action, clipped to [-1, 1] when ``actions.clip``, is mapped
    into the policy layer as the MuJoCo kernel maps it (knees ``stance + knee_scale a``, wheel velocity
    ``wheel_scale a``, float64 from the float32 action, rounded once), the layers are merged (``stance``,
    ``override``) and resolved; each physics step (:meth:`apply_actions`) writes the frame's position and
    velocity targets. The frame's gains times the per-env factors :attr:`kp_scale` / :attr:`kd_scale` (the PD
    gain randomisation, as the MuJoCo drive applies them) become the joints' stiffness and damping, written
    only when they change (the override switch, a new draw). The layers carry no feed-forward torque.
    """

    cfg: WheelLegComposerActionCfg

    def __init__(self, cfg: WheelLegComposerActionCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        from dexwheel.isaaclab.terrain import task_kwargs
        from dexwheel.rl.isaaclab_support import task_config
        from dexwheel.robots.wheel_leg import ROBOT_JOINT_ORDER
        from dexwheel.tasks.velocity.action_path import WheelLegActionPath

        task = task_config(cfg.task, cfg.robot, task_kwargs(cfg.task_overrides))
        self.path = WheelLegActionPath(task, self.num_envs, xp=torch, device=self.device, stacklevel=6)
        ids, _ = self._asset.find_joints(list(ROBOT_JOINT_ORDER), preserve_order=True)
        self._joint_ids = torch.tensor(ids, device=self.device, dtype=torch.int32)
        f64 = {"device": self.device, "dtype": torch.float64}
        self._scale = torch.tensor(self.path.act_scale, **f64)
        self._offset = torch.tensor(self.path.act_offset, **f64)
        self._clip = task.actions.clip
        n, nj = self.num_envs, len(ROBOT_JOINT_ORDER)
        self._raw = torch.zeros(n, self.path.action_dim, device=self.device)
        #: Per env and joint (ROBOT_JOINT_ORDER): factors on the frame's kp and kd (PD gain randomisation).
        self.kp_scale = torch.ones(n, nj, device=self.device)
        self.kd_scale = torch.ones(n, nj, device=self.device)
        self._gains = torch.full((2, n, nj), float("nan"), device=self.device)  # as last written
        self._scales_changed = True
        self.delay = action_delay(task.actions.delay_steps, "actions.delay_steps", self._raw)
        self.path.compose()

    @property
    def action_dim(self) -> int:
        return self.path.action_dim

    @property
    def raw_actions(self) -> torch.Tensor:
        return self._raw

    @property
    def processed_actions(self) -> torch.Tensor:
        """The policy layer's targets: knee positions, then wheel velocities."""
        block, nk = self.path.policy_block, self.path.nk
        return torch.cat([block[0, :, :nk], block[3, :, nk:]], dim=1)

    def set_override(self, active: bool) -> None:
        """Switch the ``override`` layer (the safety stop) on or off in every env, as the MuJoCo task's
        ``set_override``; the next step's frame carries it."""
        self.path.set_override(active)
        self.path.compose()

    def set_gain_scales(self, env_ids: torch.Tensor, kp_scale: torch.Tensor, kd_scale: torch.Tensor) -> None:
        """Envs ``env_ids``' gain factors (ROBOT_JOINT_ORDER); written with the next frame."""
        self.kp_scale[env_ids] = kp_scale
        self.kd_scale[env_ids] = kd_scale
        self._scales_changed = True

    def process_actions(self, actions: torch.Tensor) -> None:
        self._raw[:] = actions
        a = torch.clamp(actions, -1.0, 1.0) if self._clip else actions
        if self.delay is not None:  # the action of delay steps ago (the MuJoCo task's latency)
            a = self.delay(a.to(torch.float32))
        y = a.to(torch.float32).to(torch.float64) * self._scale
        block, nk = self.path.policy_block, self.path.nk
        block[0, :, :nk] = (y[:, :nk] + self._offset).to(block.dtype)
        block[3, :, nk:] = y[:, nk:].to(block.dtype)
        self.path.compose()

    def _write_gains(self) -> None:
        gains = self.path.robot_block[1:3]
        if not self._scales_changed and torch.equal(gains, self._gains):
            return
        self._gains.copy_(gains)
        self._scales_changed = False
        self._asset.write_joint_stiffness_to_sim_index(stiffness=gains[0] * self.kp_scale, joint_ids=self._joint_ids)
        self._asset.write_joint_damping_to_sim_index(damping=gains[1] * self.kd_scale, joint_ids=self._joint_ids)

    def apply_actions(self) -> None:
        self._write_gains()
        block = self.path.robot_block
        self._asset.actuators.target_command.set_position_index(value=block[0], joint_ids=self._joint_ids)
        self._asset.actuators.target_command.set_velocity_index(value=block[3], joint_ids=self._joint_ids)

    def reset(self, env_ids=None) -> None:
        ids = env_index(env_ids, self.num_envs, self.device)
        self._raw[ids] = 0.0
        reset_delay(self.delay, ids, 0.0)


@configclass
class WheelLegComposerActionCfg(ActionTermCfg):
    """:class:`WheelLegComposerAction`'s settings: the registered task ``task``'s config for ``robot`` with
    ``task_overrides`` (:func:`~dexwheel.rl.isaaclab_support.task_config`)."""

    class_type: type = WheelLegComposerAction
    task: str = "velocity"
    robot: str = MISSING
    task_overrides: dict = {}
