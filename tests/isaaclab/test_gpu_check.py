"""benchmarks/gpu_check.py, the prepared GPU check, runs its whole pipeline here on the CPU (``--smoke``).

A GPU lease is too short to debug the script on it: this runs every step at tiny sizes (about 3-4 minutes on
2 cores) and checks that the JSON records each one, and that without CUDA ``--device cuda:0`` stops at once.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dexwheel.isaaclab.cross_backend import MUJOCO_PYTHON, REPO

SCRIPT = REPO / "benchmarks" / "gpu_check.py"
TASKS = {
    "Dexwheel-Velocity-Flat-Solenopsis-v0",
    "Dexwheel-HandPose-G20Left-v0",
    "Dexwheel-Velocity-Rough-Solenopsis-v0",
    "Dexwheel-InHand-Rotate-G20Left-v0",
}


def _import_gpu_check():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import gpu_check
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return gpu_check


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    if not MUJOCO_PYTHON.exists():
        pytest.skip(f"the MuJoCo half and scripts/train.py need the core venv's python at {MUJOCO_PYTHON}")
    out = tmp_path_factory.mktemp("gpu_check")
    done = subprocess.run([sys.executable, str(SCRIPT), "--smoke", "--out-dir", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    files = sorted(out.glob("gpu_check-*-smoke.json"))
    assert len(files) == 1, done.stdout[-4000:] + done.stderr[-4000:]
    return done, json.loads(files[0].read_text()), files[0]


def test_the_smoke_run_records_every_step(smoke):
    done, result, path = smoke
    steps = result["steps"]
    assert list(steps) == ["tests", "step_rate", "train_rate", "train_flat", "train_rough", "train_rotate"]
    failed = {name: rec.get("error") for name, rec in steps.items() if not rec["ok"]}
    assert not failed and done.returncode == 0, (failed, done.stdout[-4000:])
    assert result["device"] == "cpu" and result["smoke"] and result["probe"]["torch"]
    assert result["warp_cache"]["dir"] == os.environ["WARP_CACHE_PATH"]  # the tests' cache (their conftest)
    assert [rec["warp_cuda_compiled"] for rec in steps.values()] == [0] * len(steps)  # the CPU compiles no CUDA
    assert all(rec["warp_cpu_compiled"] >= 0 for rec in steps.values()) and result["warp_cache"]["cpu_objects_at_start"]
    tests = steps["tests"]
    assert tests["passed"] > 0 and tests["failed"] == tests["error"] == tests["not_run"] == 0
    assert tests["workers"] == 2 and tests["collected"] == tests["passed"] + tests["skipped"]  # through pytest-xdist
    rows = steps["step_rate"]["rows"]
    assert {(r["task"], r["backend"]) for r in rows} == {(t, b) for t in TASKS for b in ("isaaclab", "mujoco")}
    assert all(r["steps_per_s"] > 0 and r["build_s"] > 0 for r in rows)
    for name in ("train_rate", "train_flat", "train_rough", "train_rotate"):
        rec = steps[name]
        assert rec["env_steps_per_s"] > 0 and rec["trained_steps"] == rec["total_timesteps"], name
    assert "iterations_from" in steps["train_flat"] and "iterations_from" in steps["train_rough"]
    flat = steps["train_flat"]
    assert flat["eval_lin_vel_x_error"] >= 0 and flat["eval_ang_vel_z_error"] >= 0
    assert 0 <= steps["train_rough"]["terrain_level"] <= 5  # the curriculum's levels (6 rows)
    rotate = steps["train_rotate"]
    assert rotate["task"] == "Dexwheel-InHand-Rotate-G20Left-v0" and 0.0 <= rotate["eval_drop"] <= 1.0
    assert abs(rotate["eval_rotation_rate"]) < 5.0  # rad/s: a finite rate about the task's axis
    table = path.with_suffix(".md").read_text()
    assert "| train_rough | yes |" in table and "Dexwheel-HandPose-G20Left-v0 | isaaclab | cpu | 4 |" in table
    assert not list(path.parent.glob(".*.tmp"))  # written through a temporary file and a rename


def test_without_cuda_the_gpu_check_stops_with_a_clear_message(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    done = subprocess.run([sys.executable, str(SCRIPT), "--out-dir", str(tmp_path)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 2 and "--device cuda:0 needs a CUDA GPU" in done.stderr
    assert not list(tmp_path.iterdir())


def test_importing_it_needs_no_torch_and_a_rerun_takes_a_new_name(tmp_path):
    code = f"import sys; sys.path.insert(0, {str(SCRIPT.parent)!r}); import gpu_check; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
    gpu_check = _import_gpu_check()
    first = gpu_check.new_result_path(tmp_path, smoke=False)
    first.write_text("{}")
    second = gpu_check.new_result_path(tmp_path, smoke=False)
    assert second != first and second.name.startswith(first.stem)


def test_a_pytest_output_cut_off_by_the_cap_counts_what_ran():
    output = (
        "collected 5 items\n\ntests/a.py::test_one PASSED [ 20%]\ntests/a.py::test_two FAILED [ 40%]\n"
        "tests/b.py::test_three[x] SKIPPED (why) [ 60%]\n"
    )
    counts = _import_gpu_check().parse_pytest(output)
    assert (counts["passed"], counts["failed"], counts["skipped"], counts["not_run"]) == (1, 1, 1, 2)
    assert counts["failures"] == ["tests/a.py::test_two FAILED"]


def test_pytest_xdist_output_cut_off_by_the_cap_counts_what_ran():
    output = (
        "created: 2/2 workers\n2 workers [5 items]\n\ntests/a.py::test_one \n[gw0] [ 20%] PASSED tests/a.py::test_one \n"
        "tests/b.py::test_three[x] \n[gw1] [ 40%] SKIPPED tests/b.py::test_three[x] \n"
        "[gw0] [ 60%] FAILED tests/a.py::test_two \ntests/b.py::test_four \n"
    )
    counts = _import_gpu_check().parse_pytest(output)
    assert (counts["passed"], counts["failed"], counts["skipped"], counts["collected"]) == (1, 1, 1, 5)
    assert counts["not_run"] == 2 and counts["failures"] == ["tests/a.py::test_two FAILED"]


def test_the_tests_step_runs_half_the_cpus_in_processes_at_most_8():
    workers = _import_gpu_check().xdist_workers
    assert [workers(n) for n in (1, 2, 4, 16, 64)] == [1, 1, 2, 8, 8]


def _stubbed(monkeypatch, rates: dict[str, float] | None = None) -> tuple[object, list[tuple[str, int, float]]]:
    """gpu_check with a stand-in torch probe (a CUDA device) and trainings that only record what would run."""
    gpu_check = _import_gpu_check()
    runs: list[tuple[str, int, float]] = []

    def train(plan, task, iterations, run_dir, cap, rec):
        runs.append((task, iterations, cap))
        if rates:
            rec["env_steps_per_s"] = rates[task]

    monkeypatch.setattr(gpu_check, "ISAAC_PYTHON", Path(sys.executable))
    monkeypatch.setattr(gpu_check, "probe", lambda: {"torch": "stub", "cuda_available": True, "devices": ["stub"]})
    monkeypatch.setattr(gpu_check, "train", train)
    return gpu_check, runs


def test_only_the_trainings_measure_their_own_rate_and_train_for_train_s(tmp_path, monkeypatch):
    """The documented second run: without the rate steps, each training measures its task's rate first and
    then trains --train-s seconds' worth of iterations (not the fixed fallback count)."""
    flat, rough = "Dexwheel-Velocity-Flat-Solenopsis-v0", "Dexwheel-Velocity-Rough-Solenopsis-v0"
    rates = {flat: 200_000.0, rough: 80_000.0}
    gpu_check, runs = _stubbed(monkeypatch, rates)
    assert gpu_check.main(["--only", "train_flat", "train_rough", "--train-s", "120", "--out-dir", str(tmp_path)]) == 0
    per_iteration = 4096 * gpu_check.steps_per_env()
    assert [(task, n) for task, n, _ in runs] == [
        (flat, 5), (flat, round(120 * rates[flat] / per_iteration)),
        (rough, 5), (rough, round(120 * rates[rough] / per_iteration))]  # fmt: skip
    assert all(cap >= 120 for task, n, cap in runs if n != 5)
    (path,) = tmp_path.glob("gpu_check-*.json")
    steps = json.loads(path.read_text())["steps"]
    assert steps["train_flat"]["iterations_from"] == "120 s at 200000/s (its own 5-iteration run)"
    assert steps["train_rough"]["rate_run"]["env_steps_per_s"] == rates[rough]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--smoke", "--device", "cuda:1"], "error: --device: --smoke runs its own plan"),
        (["--smoke", "--train-s", "5"], "error: --train-s: --smoke runs its own plan"),
        (["--smoke", "--budget-s", "300"], "error: --budget-s: --smoke runs its own plan"),
        (["--train-s", "0"], "error: --train-s: 0 is not a number of seconds > 0"),
        (["--budget-s", "-1"], "error: --budget-s: -1 is not a number of seconds > 0"),
        (["--budget-s", "5"], "error: --budget-s: 5 s leaves no step the 20 s it needs"),
        (["--device", "gpu"], "error: --device: 'gpu' is not a torch device; use cpu, cuda or cuda:<index>"),
        (
            ["--only", "tests", "--train-s", "90"],
            "error: --train-s: sets the length of train_flat / train_rough / train_rotate",
        ),
    ],
)
def test_an_option_the_run_would_not_apply_is_refused_before_any_work(tmp_path, monkeypatch, capsys, args, message):
    gpu_check, runs = _stubbed(monkeypatch)
    monkeypatch.setattr(gpu_check, "probe", lambda: pytest.fail("probed torch before refusing"))
    assert gpu_check.main([*args, "--out-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not runs and not (tmp_path / "out").exists()
