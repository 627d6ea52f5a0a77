"""The bridge's MuJoCo simulations: ``G20Hand-v0`` (``action="nominal"``) stepped with the composed targets, or,
with an object (``object.shape``), the in-hand tasks' scene (``G20Rotate-v0``: the hand palm up holding the object).

Slew, collision projection, mimic completion and the hard-write or PD drive are the env's (vendor bridge §5).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from dexwheel.bridge.config import BridgeConfig
from dexwheel.envs.base import camera_kwargs
from dexwheel.envs.g20_hand import G20HandEnv
from dexwheel.envs.g20_in_hand import G20InHandEnv
from dexwheel.robots.g20 import ACTUATOR_NAMES, ALL_JOINTS, JOINT_ARMATURE, TIMESTEP
from dexwheel.sim.model_checks import check_robot_model, require_joints


def check_model(model: mujoco.MjModel, source: str = "G20 model") -> np.ndarray:
    """Startup check (vendor bridge §5.7): every hinge and every position actuator exists; returns the hinges' qpos
    addresses (ALL_JOINTS order). Raises :class:`~dexwheel.sim.model_checks.ModelError` naming what is missing."""
    check_robot_model(model, ALL_JOINTS, ACTUATOR_NAMES, source)
    return model.jnt_qposadr[require_joints(model, ALL_JOINTS, source)].astype(np.intp)


class MujocoHand:
    """``G20Hand-v0`` as the bridge's :class:`~dexwheel.bridge.node.HandSimulation`."""

    name = "MuJoCo"

    def __init__(self, cfg: BridgeConfig, start: np.ndarray) -> None:
        self.env = G20HandEnv(
            hand=cfg.hand,
            **cfg.hand_sections,
            control_hz=cfg.control_hz,
            reset_noise_scale=0.0,
            goal_mode="presets",
            goal_presets=("open",),
        )
        self.start = start
        self.model, self.data = self.env.model, self.env.data
        self._qpos_adr = check_model(self.model, f"g20_{cfg.hand} model")
        self.dt = float(self.env.dt)
        # start at the open hand; one step compiles the env's kernels before real time
        self._obs, _ = self.env.reset(seed=0, options={"init_qpos": start, "goal": start})
        self._qvel = self.env.obs_slices["qvel"]
        self.step(start)

    def step(self, target: np.ndarray) -> None:
        self._obs = self.env.step(target)[0]

    def positions(self) -> np.ndarray:
        return self.data.qpos[self._qpos_adr]

    def velocities(self) -> np.ndarray:
        return self._obs[self._qvel].astype(np.float64)  # hard-write: the joint motion / step

    def camera(self) -> dict[str, Any]:
        """The vendor bridge's compare view (§5.6) for the viewer."""
        return camera_kwargs(self.env.task, None, None)["default_cam_config"]

    def close(self) -> None:
        self.env.close()


#: The bridge's in-hand scene steps the spec's 2 ms (one physics step a tick at 500 Hz) with the object tasks' contact
#: model; its grasps are the tasks' (made at 5 ms: they hold at a finer step).
BRIDGE_PHYSICS = {"timestep": TIMESTEP, "armature": JOINT_ARMATURE}


class MujocoInHand:
    """The in-hand scene as the bridge's :class:`~dexwheel.bridge.node.HandSimulation`: ``G20Rotate-v0``
    (``action="nominal"``, PD, the bridge's ``control_hz`` and slew) reset with seed 0, so the hand starts holding
    the object in a grasp of the cache made for it (``start`` is that grasp's joints, not the open hand). The task's
    drop termination and episode limit are not acted on: the bridge's scene runs on, as the real one does."""

    name = "MuJoCo (in-hand)"

    def __init__(self, cfg: BridgeConfig, start: np.ndarray) -> None:
        obj = cfg.object
        self.env = G20InHandEnv(hand=cfg.hand, object=vars(obj.spec), actions="nominal", control_hz=cfg.control_hz,
                                drive={"slew_rad_s": cfg.slew}, privileged_obs=False, physics=BRIDGE_PHYSICS)  # fmt: skip
        self.model, self.data = self.env.model, self.env.data
        check_model(self.model, f"g20_{cfg.hand} in-hand scene")
        self.dt = float(self.env.dt)
        self.env.reset(seed=0)
        self._task = self.env.task
        self.start = self._task.command[0].copy()  # the grasp's active joints
        self.step(self.start)  # compiles before real time

    def step(self, target: np.ndarray) -> None:
        self.env.step(target)

    def positions(self) -> np.ndarray:
        return self._task.qpos[0]

    def velocities(self) -> np.ndarray:
        return self._task.qvel[0]

    def object_position(self) -> np.ndarray:
        """The object's centre in the world frame (m)."""
        return self._task.object_pos[0]

    def camera(self) -> dict[str, Any]:
        return camera_kwargs(self.env.task, None, None)["default_cam_config"]

    def close(self) -> None:
        self.env.close()
