"""The random goals the Isaac Lab G20 task draws from are the MuJoCo task's own ``sample_goal``'s, bit for bit."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from dexwheel.tasks.hand_pose import goal_set, sample_goals
from dexwheel.tasks.hand_pose.config import make_cfg
from dexwheel.tasks.hand_pose.task import G20HandTask


@pytest.mark.parametrize("hand", ["left", "right"])
def test_the_committed_set_is_the_mujoco_tasks_seeded_draws(hand):
    cfg = make_cfg(hand=hand)
    goals = goal_set.lookup(cfg)  # both hands' default configs are in the file
    assert goals.shape == (goal_set.SIZE, 16)
    task = G20HandTask(make_cfg(hand=hand, goal_mode="random"))
    rng = np.random.default_rng(goal_set.SEED)
    assert np.array_equal(goals, np.stack([task.sample_goal(rng) for _ in range(goal_set.SIZE)])), (
        "stale random_goals.npz: python -m dexwheel.tasks.hand_pose.sample_goals --write"
    )
    # collision-free by the task's own check (or the open hand, its fallback)
    assert all(task.pose_depth(q) <= cfg.collision.penetration_tol for q in goals[:64])
    assert len(np.unique(goals, axis=0)) > goal_set.SIZE // 2


@pytest.mark.slow
def test_a_config_the_file_lacks_is_drawn_by_the_same_function_in_the_core_venv(monkeypatch):
    cfg = make_cfg(composer={"layers": ("policy", "hold"), "hold_joints": "thumb"}, collision={"penetration_tol": 1e-3})
    assert goal_set.lookup(cfg) is None
    monkeypatch.setenv("DEXWHEEL_MUJOCO_PYTHON", sys.executable)
    goals = goal_set.goal_set(cfg)
    assert np.array_equal(goals, sample_goals.compute(json.loads(json.dumps(goal_set.key(cfg)))))
    task = G20HandTask(goal_set.config_of(goal_set.key(cfg)))
    thumb = task._held_idx
    assert np.all(goals[:, thumb] == task.presets["open"][thumb])  # held joints at their held position
    monkeypatch.setenv("DEXWHEEL_MUJOCO_PYTHON", "/nonexistent/python")
    goal_set._computed.cache_clear()
    with pytest.raises(FileNotFoundError, match=r"not in random_goals\.npz.*DEXWHEEL_MUJOCO_PYTHON"):
        goal_set.goal_set(cfg)


def _no_draw(k: dict) -> np.ndarray:
    raise AssertionError("drew goals for a refused command")


def test_write_replaces_the_file_whole(tmp_path, monkeypatch):
    table = tmp_path / "random_goals.npz"
    table.write_bytes(b"old")
    os.link(table, tmp_path / "old")  # a second name for the old file's content
    monkeypatch.setattr(goal_set, "TABLE", table)
    k = goal_set.key(make_cfg())
    goal_set.write([(k, np.ones((4, 16)))])
    # a new file renamed over the table (an interrupted write leaves the old one), not the old one rewritten
    assert (tmp_path / "old").read_bytes() == b"old"
    assert [(got, g.tolist()) for got, g in goal_set.load()] == [(k, np.ones((4, 16)).tolist())]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old", "random_goals.npz"]


@pytest.mark.parametrize(
    "extra", [["--key", '{"hand": "left"}', "--out", "x.npy"], ["--out", "x.npy"], ["--overwrite"]]
)
def test_write_takes_no_other_option(extra, tmp_path, monkeypatch, capsys):
    table = tmp_path / "random_goals.npz"
    table.write_bytes(b"committed")
    monkeypatch.setattr(goal_set, "TABLE", table)
    monkeypatch.setattr(sample_goals, "compute", _no_draw)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        sample_goals.main(["--write", *extra])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {extra[0]}: --write rewrites random_goals.npz") and err.count("\n") == 1, err
    assert table.read_bytes() == b"committed" and not (tmp_path / "x.npy").exists()


def test_out_is_the_file_typed_and_an_existing_one_is_replaced_only_with_overwrite(tmp_path, monkeypatch, capsys):
    draws = iter([np.zeros((4, 16)), np.ones((4, 16))])
    monkeypatch.setattr(sample_goals, "compute", lambda k: next(draws))
    out = tmp_path / "goals.bin"
    key = json.dumps(goal_set.key(make_cfg()))
    assert sample_goals.main(["--key", key, "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goals.bin"]  # not goals.bin.npy
    assert np.array_equal(np.load(out), np.zeros((4, 16)))
    with pytest.raises(SystemExit) as e:
        sample_goals.main(["--key", key, "--out", str(out)])
    assert e.value.code == 2
    assert capsys.readouterr().err == f"error: --out: {out} already exists; choose another path or pass --overwrite\n"
    assert np.array_equal(np.load(out), np.zeros((4, 16)))  # refused before the draw
    assert sample_goals.main(["--key", key, "--out", str(out), "--overwrite"]) == 0
    assert np.array_equal(np.load(out), np.ones((4, 16)))


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("{hand: left}", "not JSON"),
        ('{"hand": "left"}', "missing ['penetration_tol'"),
        ("[]", "must be a JSON object"),
        ({"hand": "middle"}, "hand='middle' is not allowed; choose one of ['left', 'right']"),
        ({"size": 0}, "size must be an integer >= 1, got 0"),
        ({"typo": 1}, "unknown ['typo']"),
    ],
)
def test_a_bad_key_is_one_line_naming_it_before_the_draw(key, says, tmp_path, monkeypatch, capsys):
    if isinstance(key, dict):
        key = json.dumps({**goal_set.key(make_cfg()), **key})
    monkeypatch.setattr(sample_goals, "compute", _no_draw)
    with pytest.raises(SystemExit) as e:
        sample_goals.main(["--key", key, "--out", str(tmp_path / "goals.npy")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --key: ") and says in err and err.count("\n") == 1, err
    if "fields" in err:  # what a key needs
        assert f"the fields {list(goal_set.key(make_cfg()))}" in err
    assert not (tmp_path / "goals.npy").exists()
