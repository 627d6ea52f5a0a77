"""The package's layering is a contract (pyproject.toml, [tool.importlinter]; docs/explanation/architecture.md, Layers): each
layer imports only those below it, no import cycle inside a package, no task folder imports another, no Isaac Lab in
the MuJoCo layers."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package under ``root`` with ``root``'s pyproject.toml."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    cmd = [str(LINT), "--no-cache", "--no-logo"]
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_the_layers_hold():
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("file", "line", "broken"),
    [
        # a task reaching up into the envs that build it
        ("dexwheel/tasks/kernels.py", "from dexwheel.envs import gym_api", "dexwheel.tasks is not allowed to import dexwheel.envs"),
        # two training modules importing each other (lazily too)
        ("dexwheel/rl/schema.py", "def f():\n    from dexwheel.rl import training", "No cycles are allowed in dexwheel.rl"),
        # Isaac Lab in a MuJoCo layer, through another module
        ("dexwheel/sim/slew.py", "from dexwheel.isaaclab import motor_pd", "dexwheel.sim is not allowed to import isaaclab"),
        # one task folder reaching into another (what the hand tasks share is dexwheel.tasks.hand)
        ("dexwheel/tasks/in_hand/rewards.py", "from dexwheel.tasks.hand_pose import rewards",
         "dexwheel.tasks.in_hand is not allowed to import dexwheel.tasks.hand_pose"),
    ],
)  # fmt: skip
@pytest.mark.slow
def test_an_import_against_the_layers_fails_naming_it(tmp_path, file, line, broken):
    shutil.copytree(ROOT / "dexwheel", tmp_path / "dexwheel", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / file, "a") as f:
        f.write(f"\n{line}\n")
    done = lint(tmp_path)
    assert done.returncode == 1
    assert broken in done.stdout, done.stdout
