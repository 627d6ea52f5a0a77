"""The settled stance the Isaac Lab task starts at is the MuJoCo task's, bit for bit (the committed table)."""

from __future__ import annotations

import os
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


def test_write_replaces_the_table_whole(tmp_path, monkeypatch):
    table = tmp_path / "settled_stance.json"
    table.write_text("old")
    os.link(table, tmp_path / "old")  # a second name for the old file's content
    monkeypatch.setattr(settled, "TABLE", table)
    entries = [settled.entry(make_cfg(robot="solenopsis"), [0.5] * 4, 0.27)]
    settled.write(entries)
    # a new file renamed over the table (an interrupted write leaves the old one), not the old one rewritten
    assert (tmp_path / "old").read_text() == "old"
    assert settled.load() == entries
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old", "settled_stance.json"]


@pytest.mark.parametrize("extra", [["--robot", "m20_legacy", "--knee-kp", "999"], ["--knee-kp", "999"]])
def test_write_takes_no_other_option(extra, tmp_path, monkeypatch, capsys):
    table = tmp_path / "settled_stance.json"
    table.write_text("committed")
    monkeypatch.setattr(settled, "TABLE", table)
    monkeypatch.setattr(settle, "compute", lambda cfg: pytest.fail("settled for a refused command"))
    with pytest.raises(SystemExit) as e:
        settle.main(["--write", *extra])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {extra[0]}: --write rewrites settled_stance.json") and err.count("\n") == 1, err
    assert table.read_text() == "committed"


def test_a_bad_gain_is_one_line_naming_its_option(monkeypatch, capsys):
    monkeypatch.setattr(settle, "compute", lambda cfg: pytest.fail("settled a refused config"))
    with pytest.raises(SystemExit) as e:
        settle.main(["--robot", "solenopsis", "--knee-kp", "-3"])
    assert e.value.code == 2
    assert capsys.readouterr().err == "error: --knee-kp: must be a finite number >= 0, got -3.0\n"
