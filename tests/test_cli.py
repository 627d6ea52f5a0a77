"""The paths and commands the scripts print are what the user types from where they stand (issue 68)."""

import sys

from dexwheel import cli


def test_a_path_is_shown_relative_to_the_working_directory_when_inside_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.shown_path(tmp_path / "outputs" / "run" / ".." / "run") == "outputs/run"
    assert cli.shown_path("outputs/run") == "outputs/run"
    assert cli.shown_path(tmp_path.parent / "elsewhere") == (tmp_path.parent / "elsewhere").as_posix()  # no ../


def test_the_printed_python_is_the_one_that_ran(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    venv = tmp_path / ".venv"
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "base_prefix", "/usr")
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert cli.python_command() == ".venv/bin/python"  # `make train` runs the venv without activating it
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    assert cli.python_command() == "python"  # an activated venv: plain python is it
    monkeypatch.setattr(sys, "prefix", "/usr")
    monkeypatch.delenv("VIRTUAL_ENV")
    assert cli.python_command() == "python"  # no venv at all


def test_a_script_command_names_the_script_from_where_the_user_stands(monkeypatch):
    monkeypatch.chdir(cli.SCRIPTS.parent)
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    assert cli.script_command("evaluate.py", "run=outputs/first") == "python scripts/evaluate.py run=outputs/first"


def test_where_a_newcomer_reads_first_says_how_to_run_the_scripts():
    """The README's `python scripts/...` failed with the system Python (No module named 'hydra'): the README and
    the install page say to activate the venv the make targets build."""
    for page in (cli.SCRIPTS.parent / "README.md", cli.SCRIPTS.parent / "docs" / "get-started" / "install.md"):
        assert "source .venv/bin/activate" in page.read_text(), page
