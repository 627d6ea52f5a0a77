"""The settled stance the Isaac Lab task starts at is the MuJoCo task's, bit for bit (the committed table)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dexwheel.robots import WHEEL_LEG_ROBOTS
from dexwheel.tasks.velocity import settle, settled
from dexwheel.tasks.velocity.config import make_cfg
from dexwheel.tasks.velocity.task import WheelLegTask


@pytest.mark.parametrize("robot", WHEEL_LEG_ROBOTS)
def test_the_table_holds_the_mujoco_tasks_settled_stance(robot):
    cfg = make_cfg(robot=robot)
    task = WheelLegTask(cfg)
    knees, height = settled.lookup(cfg)  # every robot's default config is in the table
    assert np.array_equal(knees, task.settled_knees) and height == task.settled_height
    assert settled.load() == [settle.compute(make_cfg(robot=r)) for r in WHEEL_LEG_ROBOTS], (
        "stale table: python -m dexwheel.tasks.velocity.settle --write"
    )


def test_a_config_the_table_lacks_is_computed_by_the_same_function_in_the_core_venv(monkeypatch):
    cfg = make_cfg(robot="solenopsis", stance=(0.45, 0.45, -0.45, -0.45), knee_kp=100.0)
    assert settled.lookup(cfg) is None
    monkeypatch.setenv("DEXWHEEL_MUJOCO_PYTHON", sys.executable)
    knees, height = settled.settled_stance(cfg)
    task = WheelLegTask(cfg)
    assert np.array_equal(knees, task.settled_knees) and height == task.settled_height
    monkeypatch.setenv("DEXWHEEL_MUJOCO_PYTHON", "/nonexistent/python")
    settled._computed.cache_clear()
    with pytest.raises(
        FileNotFoundError, match=r"knee_kp=100\.0.*is not in settled_stance\.json.*DEXWHEEL_MUJOCO_PYTHON"
    ):
        settled.settled_stance(cfg)
