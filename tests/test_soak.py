"""The short soak CI runs: every env under random, extreme and bang-bang actions with frequent resets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import soak  # noqa: E402


def test_short_soak_has_no_exceptions_no_non_finite_values_and_flags_every_divergence(tmp_path, capsys) -> None:
    out = tmp_path / "soak.json"
    assert soak.main(["--steps", "1500", "--inject-every", "4", "--out", str(out)]) == 0
    reports = {r["config"]: r for r in json.loads(out.read_text())}
    assert set(reports) == {c[0] for c in soak.CONFIGS}
    for name, r in reports.items():
        assert r["steps"] == 1500 and r["episodes"] >= 5, name
        assert (r["exceptions"], r["non_finite"], r["unflagged"]) == (0, 0, 0), (name, r["first_exception"])
        assert r["divergences_flagged"] == r["divergences_seen"], name
        assert all(r["patterns"][p] > 0 for p in soak.PATTERNS), name
        if "hard_write" not in name:  # the drives that integrate got blow-ups injected, and flagged them
            assert r["injected"] >= 1 and r["divergences_flagged"] >= r["injected"], name
    assert "unflagged" in capsys.readouterr().out


def test_soak_refuses_an_unknown_config(capsys) -> None:
    assert soak.main(["--configs", "nosuch", "--steps", "10"]) == 2
    assert "unknown ['nosuch']" in capsys.readouterr().err
