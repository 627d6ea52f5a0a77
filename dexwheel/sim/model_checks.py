"""Startup checks: a model must have every joint and actuator the code expects (vendor bridge §5.7)."""

from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np


class ModelError(ValueError):
    """A model lacks something the robot description promises."""


def _names(model: mujoco.MjModel, objtype: mujoco.mjtObj, count: int) -> list[str]:
    return [mujoco.mj_id2name(model, objtype, i) or "" for i in range(count)]


def _require(
    model: mujoco.MjModel, kind: str, objtype: mujoco.mjtObj, count: int, expected: Iterable[str], source: str
) -> np.ndarray:
    present = _names(model, objtype, count)
    index = {n: i for i, n in enumerate(present)}
    missing = [n for n in expected if n not in index]
    if missing:
        raise ModelError(f"{source}: missing {kind}(s) {missing}; the model has {present}")
    return np.array([index[n] for n in expected], dtype=np.int64)


def require_joints(model: mujoco.MjModel, names: Iterable[str], source: str = "model") -> np.ndarray:
    """Ids of ``names`` in ``model``; raises :class:`ModelError` naming every missing joint."""
    return _require(model, "joint", mujoco.mjtObj.mjOBJ_JOINT, model.njnt, list(names), source)


def require_actuators(model: mujoco.MjModel, names: Iterable[str], source: str = "model") -> np.ndarray:
    """Ids of ``names`` in ``model``; raises :class:`ModelError` naming every missing actuator."""
    return _require(model, "actuator", mujoco.mjtObj.mjOBJ_ACTUATOR, model.nu, list(names), source)


def check_robot_model(
    model: mujoco.MjModel, joint_names: Iterable[str], actuator_names: Iterable[str], source: str = "model"
) -> None:
    """Fail at once, naming the joint or actuator, when a model does not match its description."""
    require_joints(model, joint_names, source)
    require_actuators(model, actuator_names, source)


def load_checked(path: str, joint_names: Iterable[str], actuator_names: Iterable[str]) -> mujoco.MjModel:
    """Load an MJCF/URDF file and run :func:`check_robot_model` on it."""
    model = mujoco.MjModel.from_xml_path(str(path))
    check_robot_model(model, joint_names, actuator_names, source=str(path))
    return model
