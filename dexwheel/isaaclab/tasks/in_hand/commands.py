"""The in-hand tasks' command (:class:`InHandCommand`): the rotation axis or the goal orientation, and what an episode
keeps of its object (where it started, the turn so far, the goals reached), as the MuJoCo task keeps them
(:class:`dexwheel.tasks.in_hand.task.InHandTask`)."""

from __future__ import annotations

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import CommandTerm, CommandTermCfg
from isaaclab.utils import configclass

from dexwheel.isaaclab.tasks.terms import env_index


def wxyz(quat_xyzw: torch.Tensor) -> torch.Tensor:
    """Isaac Lab's (x, y, z, w) as the MuJoCo tasks' (w, x, y, z)."""
    return quat_xyzw[:, [3, 0, 1, 2]]


def quat_angle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The rotation angle (rad, 0..pi) between orientations ``a`` and ``b`` (N, 4), either convention
    (:func:`dexwheel.tasks.in_hand.geometry.quat_angle`)."""
    return 2.0 * torch.arccos(torch.clamp(torch.abs(torch.sum(a * b, dim=1)), -1.0, 1.0))


def random_quat(n: int, device) -> torch.Tensor:
    """``n`` uniformly random orientations (w, x, y, z): normalised 4D Gaussians."""
    q = torch.randn(n, 4, device=device)
    return q / torch.linalg.norm(q, dim=1, keepdim=True)


class InHandCommand(CommandTerm):
    """Per env: the rotation ``axis`` (world frame, unit) and the ``goal`` orientation (w x y z; ``reorient``: a
    uniformly random one at each reset and after each goal reached, else the identity), the object's start
    position (``object_start``, env frame: the reset event sets it), the episode's turn about the axis so far
    (``rotation_angle``, rad), the goals reached (``successes``) and whether the last step reached one
    (``goal_reached``; set by the step record, :func:`.terminations.in_hand_step`), and the object's size and mass
    (``object_size``, ``object_mass``: the config's until a randomisation event draws them). The command is ``goal``
    with ``w >= 0``."""

    cfg: InHandCommandCfg

    def __init__(self, cfg: InHandCommandCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self.object = env.scene[cfg.object_name]
        n, dev = self.num_envs, self.device
        axis = torch.tensor(cfg.axis, device=dev, dtype=torch.float32)
        self.axis = (axis / torch.linalg.norm(axis)).repeat(n, 1)
        self.goal = torch.tensor([[1.0, 0.0, 0.0, 0.0]], device=dev).repeat(n, 1)
        self.object_start = torch.zeros(n, 3, device=dev)
        self.rotation_angle = torch.zeros(n, device=dev)
        self.successes = torch.zeros(n, device=dev)
        self.goal_reached = torch.zeros(n, dtype=torch.bool, device=dev)
        #: The object's physics per env (the randomisation events draw them: :mod:`.events`).
        self.object_size = torch.full((n,), float(cfg.object_size), device=dev)
        self.object_mass = torch.full((n,), float(cfg.object_mass), device=dev)
        self.metrics["rotation_angle"] = self.rotation_angle
        self.metrics["successes"] = self.successes

    @property
    def command(self) -> torch.Tensor:
        return torch.where(self.goal[:, :1] < 0.0, -self.goal, self.goal)

    # -- the object's state, as the MuJoCo task reads it (world frame; position from the env's origin) --
    def object_pos(self) -> torch.Tensor:
        return self.object.data.root_link_pos_w.torch - self._env.scene.env_origins

    def object_quat(self) -> torch.Tensor:
        return wxyz(self.object.data.root_link_quat_w.torch)

    def object_lin_vel(self) -> torch.Tensor:
        return self.object.data.root_link_lin_vel_w.torch

    def object_ang_vel(self) -> torch.Tensor:
        return self.object.data.root_link_ang_vel_w.torch

    def orientation_error(self) -> torch.Tensor:
        return quat_angle(self.object_quat(), self.goal)

    def compute(self, dt: float) -> None:
        # after the resets: the next goal where the last step reached one (a reset env's flag is cleared)
        if self.cfg.reorient:
            due = self.goal_reached.nonzero().flatten()
            if len(due) > 0:
                self.goal[due] = random_quat(len(due), self.device)
        self.goal_reached[:] = False

    def _resample_command(self, env_ids) -> None:
        ids = env_index(env_ids, self.num_envs, self.device)
        if self.cfg.reorient:
            self.goal[ids] = random_quat(len(ids), self.device)
        self.rotation_angle[ids] = 0.0
        self.successes[ids] = 0.0
        self.goal_reached[ids] = False

    def _update_command(self) -> None:
        pass

    def _update_metrics(self) -> None:
        pass


@configclass
class InHandCommandCfg(CommandTermCfg):
    """:class:`InHandCommand`'s settings (the MuJoCo config's ``commands`` section)."""

    class_type: type = InHandCommand
    object_name: str = "object"
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    reorient: bool = False
    success_tolerance: float = 0.4
    object_size: float = 0.06
    """The config's object size (m) and mass (kg)."""
    object_mass: float = 0.1
    spawn_size: float = 0.06
    """The size the object is spawned at (the largest a size event may draw: MuJoCo-Warp's contact bounds are the
    spawned shape's, so an env's object is only ever scaled down)."""
    resampling_time_range: tuple[float, float] = (1e9, 1e9)
    """Unused: goals change on a success (:meth:`InHandCommand.compute`), never on CommandTerm's timer."""
