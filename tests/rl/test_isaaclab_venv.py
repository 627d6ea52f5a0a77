"""The Isaac Lab venv is built when missing or older than its requirements, and never without a word (issue 68)."""

import os
import subprocess

import pytest

from dexwheel.rl import isaaclab_launch
from dexwheel.rl.schema import ConfigError


@pytest.fixture
def venv(tmp_path, monkeypatch):
    """A stand-in venv and requirements file; ``make`` recorded, not run (it writes the stamp as the rule does)."""
    stamp, requirements = tmp_path / ".venv-isaaclab" / ".installed", tmp_path / "requirements-isaaclab.txt"
    requirements.write_text("isaaclab==3.0.0\n")
    monkeypatch.setattr(isaaclab_launch, "VENV", stamp.parent)
    monkeypatch.setattr(isaaclab_launch, "STAMP", stamp)
    monkeypatch.setattr(isaaclab_launch, "REQUIREMENTS", requirements)
    calls = []

    def make(cmd, check):
        calls.append(cmd)
        stamp.parent.mkdir(exist_ok=True)
        stamp.touch()
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(isaaclab_launch.subprocess, "run", make)
    return stamp, requirements, calls


def test_a_missing_venv_is_announced_with_its_cost_then_built(venv, capsys):
    stamp, _, calls = venv
    isaaclab_launch.ensure_venv()
    assert calls == [["make", "-C", str(isaaclab_launch.ROOT), "isaaclab-venv"]]
    line = capsys.readouterr().out
    assert line.startswith("backend=isaaclab: .venv-isaaclab is missing: building it now with `make isaaclab-venv` "
                           "(about 7.8 GB of downloads and disk, 2-3 minutes)")  # fmt: skip
    isaaclab_launch.ensure_venv()
    assert len(calls) == 1  # built: not again


def test_changed_requirements_rebuild_the_venv(venv, capsys):
    stamp, requirements, calls = venv
    stamp.parent.mkdir()
    stamp.touch()
    os.utime(stamp, (1_000_000, 1_000_000))  # built before the requirements last changed
    assert isaaclab_launch.venv_outdated() == "requirements-isaaclab.txt changed since .venv-isaaclab was built"
    isaaclab_launch.ensure_venv()
    assert len(calls) == 1 and "requirements-isaaclab.txt changed" in capsys.readouterr().out
    assert isaaclab_launch.venv_outdated() is None


def test_a_failed_build_is_one_error(venv, monkeypatch):
    monkeypatch.setattr(isaaclab_launch.subprocess, "run", lambda cmd, check: subprocess.CompletedProcess(cmd, 2))
    with pytest.raises(ConfigError, match=r"`make isaaclab-venv` failed \(exit 2\)"):
        isaaclab_launch.ensure_venv()
