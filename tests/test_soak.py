"""The short soak CI runs: every env under random, extreme and bang-bang actions with frequent resets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import soak  # noqa: E402


@pytest.mark.slow
def test_short_soak_has_no_exceptions_no_non_finite_values_and_flags_every_divergence(tmp_path, capsys) -> None:
    out = tmp_path / "soak.json"
    assert soak.main(["--steps", "1500", "--inject-every", "4", "--out", str(out)]) == 0
    saved = json.loads(out.read_text())
    assert (saved["seed"], saved["steps"], saved["inject_every"]) == (0, 1500, 4)  # what the counts depend on
    reports = {r["config"]: r for r in saved["reports"]}
    assert [r["config"] for r in saved["reports"]] == [c[0] for c in soak.CONFIGS]
    assert [r["seed"] for r in saved["reports"]] == list(range(1, len(soak.CONFIGS) + 1))
    for name, r in reports.items():
        assert r["steps"] == 1500 and r["episodes"] >= 5, name
        assert (r["exceptions"], r["non_finite"], r["unflagged"]) == (0, 0, 0), (name, r["first_exception"])
        assert r["divergences_flagged"] == r["divergences_seen"], name
        assert all(r["patterns"][p] > 0 for p in soak.PATTERNS), name
        if "hard_write" not in name:  # the drives that integrate got blow-ups injected, and flagged them
            assert r["injected"] >= 1 and r["divergences_flagged"] >= r["injected"], name
    assert "unflagged" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--configs", "nosuch"], "--configs: unknown ['nosuch']; choose from ['g20_left_hard_write', "),
        (["--configs"], "--configs: no label given; choose from ['g20_left_hard_write', "),
        (["--steps", "0"], "--steps: must be >= 1, got 0"),
        (["--seed", "-1"], "--seed: must be >= 0"),
        (["--inject-every", "-1"], "--inject-every: must be >= 0 (0: never), got -1"),
        (["--out", "{tmp}"], "--out: {tmp} is a folder; name a file"),
        (["--out", "{tmp}/no/soak.json"], "--out: the folder {tmp}/no does not exist"),
        (["--out", "{tmp}/old.json"], "--out: {tmp}/old.json exists; add --overwrite to replace it"),
        (["--overwrite"], "--overwrite: replaces the --out file, and there is no --out"),
    ],
)
def test_soak_refuses_bad_options_before_any_env_is_built(args, message, tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "old.json").write_text("kept")
    monkeypatch.setattr(soak, "soak", lambda *a: pytest.fail("soaked before refusing"))
    assert soak.main([a.format(tmp=tmp_path) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message.format(tmp=tmp_path)}") and err.count("\n") == 1, err
    assert (tmp_path / "old.json").read_text() == "kept"


def test_soak_out_replaces_a_file_only_with_overwrite(tmp_path) -> None:
    out = tmp_path / "soak.json"
    out.write_text("old")
    args = ["--configs", "g20_left_hard_write", "--steps", "5", "--seed", "3", "--out", str(out)]
    assert soak.main(args) == 2 and out.read_text() == "old"
    assert soak.main([*args, "--overwrite"]) == 0
    saved = json.loads(out.read_text())
    assert (saved["seed"], saved["steps"], saved["inject_every"]) == (3, 5, 10)
    assert [(r["config"], r["seed"], r["steps"]) for r in saved["reports"]] == [("g20_left_hard_write", 4, 5)]
