"""The bridge's Isaac Lab simulation: ``Dexwheel-Pose-G20<Hand>-v0`` (one env) stepped with the composed targets.

Runs in the Isaac Lab venv (``scripts/bridge.py backend=isaaclab`` re-launches itself there), kit-less, on the CPU.
The targets go through the task's own action term (:class:`~dexwheel.isaaclab.tasks.mdp.HandPoseAction`, ``action=
"nominal"``: its slew, mimic completion and drive), so the hard-write drive writes the pose as the joint positions
every physics step (the vendor's Isaac hand simulation, ``set_dof_positions``). Each bridge step is the env's
physics part only (the action term, ``decimation`` physics steps, the scene's update): no observations, rewards or
resets, so the task's episode length never snaps the hand back to its start.
"""

from __future__ import annotations

import numpy as np
import torch

from dexwheel.bridge.config import BridgeConfig
from dexwheel.robots.g20 import ALL_JOINTS
from dexwheel.sim.model_checks import ModelError

ACTION = "joint_targets"


class IsaacLabHand:
    """The Isaac Lab G20 pose task as the bridge's :class:`~dexwheel.bridge.node.HandSimulation`."""

    name = "Isaac Lab"

    def __init__(self, cfg: BridgeConfig, start: np.ndarray, device: str = "cpu") -> None:
        import gymnasium as gym

        import dexwheel.isaaclab.tasks  # noqa: F401  (registers the tasks)
        from dexwheel.isaaclab.tasks.g20_pose import G20LeftPoseEnvCfg, G20RightPoseEnvCfg

        overrides = {"drive": cfg.drive, "action": "nominal", "slew_rad_s": cfg.slew_rad_s,
                     "collision_projection": cfg.collision_projection, "track_test": cfg.track_test,
                     "control_hz": cfg.control_hz, "reset_noise_scale": 0.0, "goal_mode": "presets",
                     "goal_presets": ("open",)}  # fmt: skip
        try:
            env_cfg = (G20LeftPoseEnvCfg if cfg.hand == "left" else G20RightPoseEnvCfg)(task_overrides=overrides)
        except (ValueError, AssertionError) as exc:  # a refused setting or a model that lacks a joint
            raise ModelError(f"the Isaac Lab G20 task: {exc}") from None
        env_cfg.sim.device, env_cfg.scene.num_envs, env_cfg.seed = device, 1, 0
        self.device = device
        self.env = gym.make(f"Dexwheel-Pose-G20{cfg.hand.capitalize()}-v0", cfg=env_cfg)
        self.env.reset(seed=0)
        u = self._u = self.env.unwrapped
        self.robot = u.scene["robot"]
        missing = [j for j in ALL_JOINTS if j not in self.robot.joint_names]
        if missing:
            raise ModelError(f"g20_{cfg.hand} USD: missing joint(s) {missing}; it has {list(self.robot.joint_names)}")
        self._cols = torch.tensor([self.robot.joint_names.index(j) for j in ALL_JOINTS], device=device)
        self._term = u.action_manager.get_term(ACTION)
        self.dt = float(u.step_dt)
        self._hard_write = cfg.drive == "hard_write"
        self._action = torch.zeros(1, self._term.action_dim, device=device)
        self._q = self._read_q()
        self._qdot = np.zeros_like(self._q)
        self.step(start)  # builds what the first step builds before real time

    def _read_q(self) -> np.ndarray:
        return self.robot.data.joint_pos.torch[0, self._cols].double().cpu().numpy()

    def step(self, target: np.ndarray) -> None:
        """One control step: the action term takes ``target`` (radians, active joints), then the physics steps."""
        u = self._u
        self._action[0] = torch.as_tensor(target, device=self.device)
        u.action_manager.process_action(self._action)
        for _ in range(u.cfg.decimation):
            u.action_manager.apply_action()
            u.scene.write_data_to_sim()
            u.sim.step(render=False)
            u.scene.update(dt=u.physics_dt)
        q = self._read_q()
        if self._hard_write:  # the written pose is the state: its motion per step, as MuJoCo's hard-write reports
            self._qdot = (q - self._q) / self.dt
        else:
            self._qdot = self.robot.data.joint_vel.torch[0, self._cols].double().cpu().numpy()
        self._q = q

    def positions(self) -> np.ndarray:
        return self._q

    def velocities(self) -> np.ndarray:
        return self._qdot

    def close(self) -> None:
        self.env.close()
