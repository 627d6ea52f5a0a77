"""The G20 task's goal-pose command, drawn as the MuJoCo task's ``sample_goal`` draws it."""

from __future__ import annotations

from dataclasses import MISSING

import torch
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import CommandTerm, CommandTermCfg
from isaaclab.utils import configclass

from dexwheel.isaaclab.tasks.terms import env_index


class HandGoalCommand(CommandTerm):
    """A goal pose of the active joints per env, drawn as the MuJoCo task's ``sample_goal`` draws it: at every
    reset and, with ``switch_steps`` > 0, every ``switch_steps`` control steps within an episode, one of
    ``presets`` (``mode="presets"``), one of ``random_goals`` (``"random"``: the MuJoCo task's collision-free
    random goals, :mod:`dexwheel.tasks.hand_pose.goal_set`), or a preset with probability ``preset_prob``
    and a random goal otherwise (``"mixed"``); each uniformly. Held joints are at their held position in
    both (the caller passes them so). Metrics: the mean and largest |q - goal| (rad)."""

    cfg: HandGoalCommandCfg

    def __init__(self, cfg: HandGoalCommandCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self.robot = env.scene[cfg.asset_name]
        ids, _ = self.robot.find_joints(list(cfg.joint_names), preserve_order=True)
        self._joint_ids = torch.tensor(ids, device=self.device).long()
        na = len(ids)
        self.presets = torch.tensor(list(cfg.presets.values()), device=self.device, dtype=torch.float32).reshape(-1, na)
        self.random_goals = torch.tensor(cfg.random_goals, device=self.device, dtype=torch.float32).reshape(-1, na)
        first = self.presets if len(self.presets) else self.random_goals
        self.goal = first[0].repeat(self.num_envs, 1)
        self.metrics["mean_joint_error"] = torch.zeros(self.num_envs, device=self.device)
        self.metrics["tracking_error"] = torch.zeros(self.num_envs, device=self.device)

    @property
    def command(self) -> torch.Tensor:
        return self.goal

    def compute(self, dt: float) -> None:
        # goals change on the step count, not on a float timer (CommandTerm's time_left)
        self._update_metrics()
        if self.cfg.switch_steps > 0:
            steps = self._env.episode_length_buf
            due = ((steps % self.cfg.switch_steps == 0) & (steps > 0)).nonzero().flatten()
            if len(due) > 0:
                self._resample(due)

    def _draw(self, pool: torch.Tensor, n: int) -> torch.Tensor:
        return pool[torch.randint(len(pool), (n,), device=self.device)]

    def _resample_command(self, env_ids) -> None:
        ids = env_index(env_ids, self.num_envs, self.device)
        mode, n = self.cfg.mode, len(ids)
        if mode == "presets":
            self.goal[ids] = self._draw(self.presets, n)
        elif mode == "random":
            self.goal[ids] = self._draw(self.random_goals, n)
        else:
            preset = torch.rand(n, device=self.device) < self.cfg.preset_prob
            self.goal[ids] = torch.where(preset[:, None], self._draw(self.presets, n), self._draw(self.random_goals, n))

    def _update_command(self) -> None:
        pass

    def _update_metrics(self) -> None:
        err = self.errors()
        self.metrics["mean_joint_error"][:] = err.mean(dim=1)
        self.metrics["tracking_error"][:] = err.max(dim=1).values

    def errors(self) -> torch.Tensor:
        """|q - goal| per env and active joint (rad), the state as it is now."""
        return torch.abs(self.robot.data.joint_pos.torch[:, self._joint_ids] - self.goal)


@configclass
class HandGoalCommandCfg(CommandTermCfg):
    """:class:`HandGoalCommand`'s settings."""

    class_type: type = HandGoalCommand
    asset_name: str = "robot"
    joint_names: list[str] = MISSING
    """The active joints, in the goal's order."""
    presets: dict[str, list[float]] = MISSING
    """The preset goals, by name."""
    random_goals: list[list[float]] = []
    """The random goals drawn from (``mode`` ``"random"`` or ``"mixed"``)."""
    mode: str = "presets"
    """The MuJoCo task's ``goal_mode``: ``"presets"``, ``"random"`` or ``"mixed"``."""
    preset_prob: float = 0.25
    """``"mixed"``: the probability of a preset goal (the MuJoCo task's ``preset_goal_prob``)."""
    switch_steps: int = 0
    """A new goal every this many control steps within an episode (0: one goal per episode)."""
    resampling_time_range: tuple[float, float] = (0.0, 0.0)
    """Unused: :attr:`switch_steps` decides (CommandTerm's timer is a float sum of step lengths)."""
