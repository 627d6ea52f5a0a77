"""Golden trajectories: every registered env, drive and action mode replays its recording bit for bit.

A failure names the quantity that diverged first, the step, the env and by how much. When the change
is intended: ``python scripts/regen_golden.py``, review its summary, commit the files with it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

from dexwheel import golden
from dexwheel.tasks.hand_pose.config import make_cfg

CASES = golden.CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_replay_matches_recording(case: golden.GoldenCase) -> None:
    assert case.path.exists(), f"{case.path} is missing: run `{golden.REGEN_COMMAND} {case.name}`"
    result, meta = golden.check(case)
    tol = golden.tolerance_for(meta)
    how = "bit for bit" if tol == 0 else f"to {tol:g} (file made with {meta['versions']}, here {golden.versions()})"
    assert result.equal, (
        f"{case.env_id} [{case.name}] differs from tests/golden/{case.path.name} ({how}): {result.summary()}. "
        f"If intended: `{golden.REGEN_COMMAND} {case.name}`, review, commit."
    )


def wider_numpy_kernels() -> list[str]:
    """The SIMD targets numpy dispatches to on this CPU above its baseline (AVX2, AVX-512 ...)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]


def test_replay_matches_recording_with_numpys_wider_kernels_off() -> None:
    """No pinned quantity may depend on numpy's CPU dispatch: the replay with numpy's baseline kernels only (as on a
    CPU without AVX2 or AVX-512) matches the recordings too, so a CPU-dependent quantity fails on any machine."""
    wider = wider_numpy_kernels()
    if not wider:
        pytest.skip("numpy runs its baseline kernels only on this CPU: nothing to switch off")
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(wider)}
    script = golden.GOLDEN_DIR.parents[1] / "scripts" / "regen_golden.py"
    run = subprocess.run([sys.executable, str(script), "--check"], env=env, capture_output=True, text=True)
    changed = [line for line in run.stdout.splitlines() if line.startswith("[") and ": unchanged" not in line]
    assert run.returncode == 0, (
        f"with NPY_DISABLE_CPU_FEATURES='{env['NPY_DISABLE_CPU_FEATURES']}' these cases differ from their files: a "
        f"pinned quantity depends on numpy's SIMD kernels (docs/explanation/determinism.md, A term that stays "
        f"bit-exact):\n" + "\n".join(changed or [run.stdout[-2000:], run.stderr[-2000:]])
    )


def test_recordings_name_their_versions_and_command() -> None:
    meta, trajectory = golden.load(CASES[0].path)
    assert set(meta["versions"]) == {"mujoco", "numpy", "machine"}
    assert meta["command"] == golden.REGEN_COMMAND
    assert meta["case"]["name"] == CASES[0].name
    for key in ("qpos", "qvel", "ctrl", "action", "obs", "reward", "terminated", "truncated"):
        assert trajectory[key].shape[:2] == (CASES[0].steps, 1), key


def test_every_registered_env_mode_and_mapping_is_pinned() -> None:
    ids = {c.env_id for c in CASES}
    registered = {i for i in gym.registry if i.split("-")[0] in ("G20Hand", "Solenopsis", "M20Legacy")}
    assert registered <= ids
    g20 = [c for c in CASES if c.env_id == "G20Hand-v0"]
    runs = [make_cfg(**c.kwargs) for c in g20]  # what each case runs
    assert {c.actions.kind for c in runs} == {"normalized", "sdk255", "nominal", "delta"}
    assert {c.hand for c in runs} == {"left", "right"}
    assert {c.drive.kind for c in runs} == {"hard_write", "pd"}
    assert any(c.drive.track_test for c in runs) and any(not c.collision.projection for c in runs)
    wheel_leg = [c for c in CASES if c.env_id != "G20Hand-v0"]
    assert {("domain_rand" in c.kwargs, c.env_id) for c in wheel_leg} >= {
        (False, "Solenopsis-v0"), (True, "Solenopsis-v0"), (False, "M20Legacy-v0"), (True, "M20Legacy-v0")}  # fmt: skip
    assert {bool(c.num_envs) for c in g20} == {bool(c.num_envs) for c in wheel_leg} == {False, True}


def test_the_pinned_runs_exercise_contacts_resets_and_pushes() -> None:
    """The recordings are worth pinning: projection works, episodes end, pushes happen."""
    _, fist = golden.load(golden.case_named("g20_left_hard_write_sdk255_presets").path)
    assert fist["info/projection_checks"].sum() > 0  # the full fist closes into contact
    assert fist["info/max_penetration"].max() <= 5e-4  # and projection holds the spec's tolerance
    _, vec = golden.load(golden.case_named("solenopsis_vector_random").path)
    assert vec["truncated"].sum() >= 3  # autoresets inside the run
    _, pushed = golden.load(golden.case_named("solenopsis_domain_rand_pushes").path)
    _, plain = golden.load(golden.case_named("solenopsis_drive_turn").path)
    assert not np.array_equal(pushed["qvel"], plain["qvel"])
    _, rough = golden.load(golden.case_named("solenopsis_rough_drive_turn").path)
    assert len(np.unique(rough["info/terrain_level"])) >= 2  # the curriculum moved the env at a reset
    assert rough["truncated"].sum() >= 2
    _, rough_vec = golden.load(golden.case_named("solenopsis_rough_vector_random").path)
    assert rough_vec["truncated"].sum() >= 2 and rough_vec["obs"].shape[-1] > plain["obs"].shape[-1]  # the scan


def test_compare_names_the_first_divergence() -> None:
    """The checker can fail: a perturbation is found at its step, env, index and size."""
    _, recorded = golden.load(golden.case_named("solenopsis_vector_random").path)
    replayed = {k: v.copy() for k, v in recorded.items()}
    replayed["qvel"][57, 2, 4] += 1e-12
    replayed["obs"][90, 0, 3] += 1.0
    assert golden.compare(recorded, recorded).equal
    result = golden.compare(recorded, replayed)
    first = result.first
    assert (first.key, first.step, first.env, first.index) == ("qvel", 57, 2, (4,))
    assert first.size == pytest.approx(1e-12, rel=1e-3)
    assert result.largest["obs"] == (pytest.approx(1.0, rel=1e-6), 90)
    assert "qvel[4] at step 57, env 2" in result.summary()
    assert golden.compare(recorded, replayed, atol=1e-9).first.key == "obs"  # the tolerance, at most 1e-9
    del replayed["reward"]
    assert "reward: recorded but not replayed" in golden.compare(recorded, replayed).summary()


def test_regen_golden_regenerates_an_unreadable_file_and_check_counts_it_changed(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, str(golden.GOLDEN_DIR.parents[1] / "scripts"))
    try:
        import regen_golden
    finally:
        sys.path.pop(0)
    case = golden.case_named("g20_left_hard_write_normalized_random")
    truncated = case.path.read_bytes()[:1000]
    monkeypatch.setattr(golden, "GOLDEN_DIR", tmp_path)
    case.path.write_bytes(truncated)
    assert regen_golden.main(["--check", case.name]) == 1
    out = capsys.readouterr().out
    assert f"{case.name}: unreadable (BadZipFile: " in out and "regenerated" not in out and "1 of 1 changed" in out
    assert case.path.read_bytes() == truncated  # --check writes nothing
    assert regen_golden.main([case.name]) == 0
    assert ": regenerated (" in capsys.readouterr().out
    assert golden.check(case)[0].equal
