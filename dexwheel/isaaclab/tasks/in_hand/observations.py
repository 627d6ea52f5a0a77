"""The in-hand tasks' observation terms that Isaac Lab's stock ones do not cover (:mod:`dexwheel.tasks.in_hand.
observations`): the object's state and the command, read through the task's command (:class:`.InHandCommand`)."""

from __future__ import annotations

import math

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import ManagerTermBase, ObservationTermCfg

from dexwheel.isaaclab.tasks.in_hand.commands import InHandCommand
from dexwheel.isaaclab.tasks.in_hand.physics import FingertipContacts


def _command(env: ManagerBasedRLEnv, command_name: str) -> InHandCommand:
    return env.command_manager.get_term(command_name)


def object_pos_rel(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The object's position (m) from where its episode started."""
    c = _command(env, command_name)
    return c.object_pos() - c.object_start


def object_quat(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The object's orientation (w x y z, w >= 0)."""
    q = _command(env, command_name).object_quat()
    return torch.where(q[:, :1] < 0.0, -q, q)


def object_lin_vel(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The object's linear velocity (m/s, world frame)."""
    return _command(env, command_name).object_lin_vel()


def object_ang_vel(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The object's angular velocity (rad/s, world frame)."""
    return _command(env, command_name).object_ang_vel()


def rotation_axis(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """The commanded rotation axis (world frame, unit)."""
    return _command(env, command_name).axis


def gait_phase(env: ManagerBasedRLEnv, period: float = 0.52) -> torch.Tensor:
    """A clock at the gait's period (s): ``sin`` and ``cos`` of ``2 pi t / period``, ``t`` the episode's time (its
    control steps since the reset times the step's ``dt``)."""
    angle = (2.0 * math.pi / period) * (env.episode_length_buf.float() * env.step_dt)
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=1)


class fingertip_contacts(ManagerTermBase):
    """Whether each fingertip (thumb, index ... pinky) touches the object (0 / 1), from MuJoCo-Warp's contacts."""

    def __init__(self, cfg: ObservationTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self._contacts: FingertipContacts | None = None  # the solver exists once the sim has started

    def __call__(self, env: ManagerBasedRLEnv) -> torch.Tensor:
        if self._contacts is None:
            self._contacts = FingertipContacts()
        return self._contacts(env.num_envs, env.device)
