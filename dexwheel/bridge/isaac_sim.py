"""The bridge's Isaac Lab simulation: ``Dexwheel-HandPose-G20<Hand>-v0`` (one env) stepped with the composed targets.

Runs in the Isaac Lab venv (``scripts/bridge.py backend=isaaclab`` re-launches itself there), kit-less, on the CPU.
The targets go through the task's own action term (:class:`~dexwheel.isaaclab.tasks.hand_pose.action.HandPoseAction`, ``action=
"nominal"``: its slew, mimic completion and drive), so the hard-write drive writes the pose as the joint positions
every physics step (the vendor's Isaac hand simulation, ``set_dof_positions``). Each bridge step is the env's
physics part only (the action term, ``decimation`` physics steps, the scene's update): no observations, rewards or
resets, so the task's episode length never snaps the hand back to its start.

The viewer (``headless=false``) is Newton's GL visualizer (Isaac Lab's ``NewtonGLVisualizerCfg``, kit-less: pyglet
and OpenGL), at the vendor bridges' compare view (vendor document 000 §5.6), drawn between steps at the state rate.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import torch

from dexwheel.bridge.config import BridgeConfig
from dexwheel.robots.g20 import ALL_JOINTS
from dexwheel.sim.model_checks import ModelError

ACTION = "joint_targets"
VIEWER = "the Isaac Lab bridge's viewer (Newton's GL visualizer)"


def compare_view(hand: str) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """The robot description's compare camera (MuJoCo's free camera: look-at, distance, azimuth, elevation) as a
    visualizer's eye and look-at points."""
    from dexwheel.robots import get_robot

    cam = get_robot(f"g20_{hand}").camera
    assert cam is not None
    az, el = math.radians(cam.azimuth), math.radians(cam.elevation)
    forward = (math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el))
    lookat = tuple(float(v) for v in cam.lookat)
    eye = tuple(p - cam.distance * f for p, f in zip(lookat, forward, strict=True))
    return eye, lookat  # type: ignore[return-value]


class IsaacLabHand:
    """The Isaac Lab G20 pose task as the bridge's :class:`~dexwheel.bridge.node.HandSimulation`."""

    name = "Isaac Lab"

    def __init__(self, cfg: BridgeConfig, start: np.ndarray, device: str = "cpu") -> None:
        self.viewer = not cfg.headless
        if self.viewer:
            from dexwheel.sim.rendering import RenderingError, check_window

            check_window(VIEWER, instead="run with headless=true")  # before anything is built or loaded
            platform = os.environ.get("PYOPENGL_PLATFORM", "")
            if sys.platform.startswith("linux") and platform not in ("", "glx"):
                # pyglet's window is an X11 (GLX) one; mujoco's import with MUJOCO_GL=egl points PyOpenGL at EGL,
                # where the viewer's GL calls find no context (scripts/bridge.py unsets MUJOCO_GL first)
                raise RenderingError(f"{VIEWER} draws with OpenGL on X11 (GLX), but PyOpenGL was set to "
                                     f"PYOPENGL_PLATFORM={platform!r} (MUJOCO_GL=egl does that): unset both, or run "
                                     "with headless=true")  # fmt: skip
        import gymnasium as gym

        import dexwheel.isaaclab.tasks  # noqa: F401  (registers the tasks)
        from dexwheel.isaaclab.tasks import HandPoseG20LeftEnvCfg, HandPoseG20RightEnvCfg

        overrides = {**cfg.hand_sections, "control_hz": cfg.control_hz, "reset_noise_scale": 0.0, "goal_mode": "presets",
                     "goal_presets": ("open",)}  # fmt: skip
        try:
            env_cfg = (HandPoseG20LeftEnvCfg if cfg.hand == "left" else HandPoseG20RightEnvCfg)(
                task_overrides=overrides
            )
        except (ValueError, AssertionError) as exc:  # a refused setting or a model that lacks a joint
            raise ModelError(f"the Isaac Lab G20 task: {exc}") from None
        env_cfg.sim.device, env_cfg.scene.num_envs, env_cfg.seed = device, 1, 0
        if self.viewer:
            from isaaclab_visualizers.newton.newton_visualizer_cfg import NewtonGLVisualizerCfg

            eye, lookat = compare_view(cfg.hand)
            env_cfg.sim.visualizer_cfgs = NewtonGLVisualizerCfg(eye=eye, lookat=lookat, window_width=960,
                                                                window_height=720)  # fmt: skip
        self.device = device
        self.env = gym.make(f"Dexwheel-HandPose-G20{cfg.hand.capitalize()}-v0", cfg=env_cfg)
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
        self.start = start
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

    def render(self) -> bool:
        """Draw the current pose in the viewer; False once its window is closed."""
        self._u.sim.render()
        return bool(self._u.sim.is_running())

    def velocities(self) -> np.ndarray:
        return self._qdot

    def close(self) -> None:
        self.env.close()
