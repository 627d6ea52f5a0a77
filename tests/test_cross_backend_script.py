"""scripts/cross_backend.py's command line without Isaac Lab (the run stubbed): bad input is refused before the run,
outputs are never silently replaced, each half says when it starts and ends, a failed half is one line. The run
itself: tests/isaaclab/test_cross_backend.py (Isaac Lab venv)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from dexwheel.isaaclab import cross_backend, hand_cases, in_hand_cases, in_hand_task_cases, scenarios, wheel_leg_cases

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "cross_backend.py"
_spec = importlib.util.spec_from_file_location("cross_backend_script", SCRIPT)
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)


@pytest.fixture
def runs(monkeypatch) -> list[tuple]:
    """The stubbed run's calls: (groups, device, motor_pd); it returns one row that passes."""
    calls = []

    def fake_run(workdir, groups, device, motor_pd):
        calls.append((groups, device, motor_pd))
        return cross_backend.Result([scenarios.pair("solenopsis", "q", 1.0, 1.0, 0.1)], {"mujoco": {"build_s": 1}})

    monkeypatch.setattr(cross_backend, "run", fake_run)
    return calls


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--device", "gpu"], "--device: 'gpu' is not a device; use cpu, cuda or cuda:N"),
        (["--device", "cuda:x"], "--device: 'cuda:x' is not a device"),
        (["--group", "hands"], "--group: invalid choice: 'hands'"),
        (["--json", "{tmp}/missing/table.json"], "--json: the folder {tmp}/missing does not exist"),
        (
            ["--json", "{tmp}/taken.json"],
            "--json: {tmp}/taken.json already exists; choose another path or pass --overwrite",
        ),
        (["--plot", "{tmp}/taken.png"], "--plot: {tmp}/taken.png already exists"),
        (["--plot", "{tmp}/step.png", "--json", "{tmp}/step.png"], "--plot: {tmp}/step.png is --json's file too"),
        (["--group", "hand", "--plot", "{tmp}/step.png"], "--plot: it draws the terrain group's step"),
        (["--group", "hand", "--workdir", "{tmp}"], "--workdir: {tmp}/isaaclab_hand.npz already exists"),
    ],
)
def test_bad_input_is_one_line_before_the_run(args, says, runs, tmp_path, capsys):
    for name in ("taken.json", "taken.png", "isaaclab_hand.npz"):
        (tmp_path / name).write_text("a user's")
    with pytest.raises(SystemExit) as e:
        script.main([a.format(tmp=tmp_path) for a in args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {says.format(tmp=tmp_path)}") and err.count("\n") == 1, err
    assert runs == []  # nothing ran
    assert all((tmp_path / n).read_text() == "a user's" for n in ("taken.json", "taken.png", "isaaclab_hand.npz"))


def test_a_group_named_twice_runs_once_and_the_json_records_what_ran(runs, tmp_path):
    out = tmp_path / "table.json"
    assert script.main(["--group", "hand", "--group", "hand", "--device", "cuda:1", "--json", str(out)]) == 0
    assert runs == [(("hand",), "cuda:1", True)]
    doc = json.loads(out.read_text())
    assert doc["run"] == {"groups": ["hand"], "device": "cuda:1", "isaac_pd_split": False}
    assert [r["quantity"] for r in doc["rows"]] == ["q"]


def test_overwrite_replaces_the_json_whole(runs, tmp_path):
    out = tmp_path / "table.json"
    out.write_text("old")
    os.link(out, tmp_path / "old")  # a second name for the old content
    assert script.main(["--group", "hand", "--json", str(out), "--overwrite"]) == 0
    assert json.loads(out.read_text())["run"]["groups"] == ["hand"]
    assert (tmp_path / "old").read_text() == "old"  # a new file renamed over it, not the old one rewritten


def test_a_failed_half_is_one_line_exit_1(monkeypatch, capsys):
    def failing_run(workdir, groups, device, motor_pd):
        raise cross_backend.CrossBackendError("[2/2] Isaac half (hand) failed (exit 1); its output is above")

    monkeypatch.setattr(cross_backend, "run", failing_run)
    assert script.main(["--group", "hand"]) == 1
    assert capsys.readouterr().err == "error: [2/2] Isaac half (hand) failed (exit 1); its output is above\n"


def test_each_half_announces_itself_relays_its_output_and_says_how_long_it_took(capfd):
    cross_backend._run([sys.executable, "-c", "print('compiling kernels')"], "[1/2] MuJoCo half (hand)")
    with pytest.raises(cross_backend.CrossBackendError, match=r"^\[2/2\] Isaac half \(hand\) failed \(exit 3\); its "
                       r"output is above \(command: .*\)$"):  # fmt: skip
        cross_backend._run([sys.executable, "-c", "print('boom'); raise SystemExit(3)"], "[2/2] Isaac half (hand)")
    out, err = capfd.readouterr()
    lines = err.splitlines()
    assert out == "" and lines[:2] == ["[1/2] MuJoCo half (hand) ...", "compiling kernels"], err  # stdout: the table's
    assert lines[2].startswith("[1/2] MuJoCo half (hand): done in ") and lines[2].endswith(" s")
    assert lines[3:] == ["[2/2] Isaac half (hand) ...", "boom"]


def test_run_numbers_the_halves_and_writes_the_files_outputs_names(monkeypatch, tmp_path):
    whats, files = [], []

    def fake_half(cmd, what):
        whats.append(what)
        files.append([Path(a).name for a in cmd if a.endswith(".npz")][-1])  # what the half writes: its last file

    monkeypatch.setattr(cross_backend, "MUJOCO_PYTHON", Path(sys.executable))
    monkeypatch.setattr(cross_backend, "_run", fake_half)
    monkeypatch.setattr(scenarios, "load", lambda path: ([], {}, {}))
    for module in (hand_cases, wheel_leg_cases):
        monkeypatch.setattr(module, "load", lambda path: ({}, {}))
        monkeypatch.setattr(module, "compare", lambda mj, il: [])
    groups = ("hand", "terrain", "hand", "hand_task")
    cross_backend.run(tmp_path, groups)
    assert whats == ["[1/5] MuJoCo half (hand, terrain)", "[2/5] Isaac half (hand)", "[3/5] Isaac half (terrain)",
                     "[4/5] MuJoCo half (hand_task)", "[5/5] Isaac half (hand_task)"]  # fmt: skip
    assert files == cross_backend.outputs(groups)


@pytest.mark.parametrize(
    ("save", "load", "data"),
    [
        (hand_cases.save, hand_cases.load, {"open": np.zeros((3, 2))}),
        (wheel_leg_cases.save, wheel_leg_cases.load, {"off": {"height": np.zeros(3)}}),
        (in_hand_cases.save, in_hand_cases.load, {k: np.zeros((3, 2)) for k in ("pos", "quat", "q")}),
        (
            in_hand_task_cases.save,
            in_hand_task_cases.load,
            {"rotate__pos": np.zeros((3, 2)), "rotate__drop": np.ones(3)},
        ),
    ],
)
def test_a_halfs_npz_replaces_the_file_whole(save, load, data, tmp_path):
    path = tmp_path / "isaaclab_hand_task.npz"
    path.write_bytes(b"old")
    os.link(path, tmp_path / "old")
    save(str(path), data, {"backend": "test"})
    assert (tmp_path / "old").read_bytes() == b"old"  # a new file renamed over it: never a truncated .npz
    got, meta = load(str(path))
    assert meta == {"backend": "test"} and str(got) == str(data)


def test_the_physics_npz_replaces_the_file_whole(tmp_path):
    path = tmp_path / "mujoco.npz"
    path.write_bytes(b"old")
    os.link(path, tmp_path / "old")
    progs = scenarios.programs("hand")
    scenarios.save(str(path), progs, {}, {"backend": "test"})
    assert (tmp_path / "old").read_bytes() == b"old"
    assert [p.key for p in scenarios.load(str(path))[0]] == sorted(p.key for p in progs)


def test_the_object_task_rows_compare_each_env_up_to_its_drop_and_count_a_drops_rest_as_no_turn():
    """:func:`in_hand_task_cases.compare` on made-up traces: Isaac Lab's capsule 1 mm off the zero-margin MuJoCo run's
    at one early step of one grasp, another grasp dropped there at step 3 (what follows it is not compared; its rate
    counts nothing after it), the task's own MuJoCo run rolling at twice the rate (reported, not asserted)."""
    c = in_hand_task_cases
    mj, il = {}, {}
    for case in c.CASES:
        for variant in c.VARIANTS:
            mj.update({k: np.nan_to_num(v, nan=0.0) for k, v in c._empty(case, variant).items()})
        il.update({k: np.nan_to_num(v, nan=0.0) for k, v in c._empty(case).items()})
    rate = 0.4
    mj[c.key("rotate", "rate", "zero_margin")][:8] = rate  # the gait's 8 grasps
    mj[c.key("rotate", "rate")][:8] = 2 * rate
    il[c.key("rotate", "rate")][:8] = rate
    il[c.key("rotate", "pos")][0, 5, 0] = 1e-3
    il[c.key("rotate", "drop")][1], il[c.key("rotate", "rate")][1, 4:] = 3, 0.0
    il[c.key("rotate", "pos")][1, 5:] = 1.0  # after the drop: another grasp's object, never compared
    il[c.key("rotate", "q")][1, 5:] = 1.0
    rows = {(r.robot, r.quantity): r for r in c.compare(mj, il)}
    capsule = {q: r for (robot, q), r in rows.items() if robot == "g20_left + capsule"}
    assert capsule["rolling gait from 8 grasps: max |dp| of the capsule, 0-0.5 s (m)"].diff == pytest.approx(1e-3)
    assert capsule["rolling gait from 8 grasps: max |dq| of the hand, 0-0.5 s (rad)"].diff == 0.0
    mean = capsule["rolling gait from 8 grasps: mean rate about +y over 10 s, mean of the grasps (rad/s)"]
    steps = c.steps("rotate")
    assert mean.mujoco == pytest.approx(rate) and mean.isaac == pytest.approx((7 * rate + rate * 4 / steps) / 8)
    assert mean.ok and mean.tol == c.TOLERANCES["rate"]
    drops = capsule["rolling gait from 8 grasps: drops of 8"]
    assert (drops.mujoco, drops.isaac) == (0.0, 1.0)
    own = capsule["rolling gait from 8 grasps, the task's 0.5 mm margins on MuJoCo: mean rate (rad/s)"]
    assert own.mujoco == pytest.approx(2 * rate) and math.isinf(own.tol)
    assert all(r.diff == 0.0 for (robot, q), r in rows.items() if robot == "g20_left + cube")  # the cube: held alike
    asserted = [r for r in rows.values() if not math.isinf(r.tol)]
    assert len(asserted) == 3 + 2 and all(
        r.ok for r in asserted
    )  # the gait's 3, the capsule's hold 2 (the cube's: reported)
