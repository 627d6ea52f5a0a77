"""Isaac Lab tests: they run in the Isaac Lab venv (``make isaaclab-test``); the core venv skips this folder."""

import importlib.util
import os

import pytest

# not "isaaclab": tests/ is on sys.path (tests/conftest.py), where this folder itself would be found as one
if importlib.util.find_spec("isaaclab_newton") is None:
    collect_ignore_glob = ["test_*.py"]
else:
    from dexwheel import warp_cache

    # compiled warp kernels (about 2 minutes on 2 cores) survive between runs; subprocesses inherit it
    warp_cache.with_cache(os.environ)


@pytest.fixture(scope="session")
def isaac_device() -> str:
    """The device the Isaac Lab envs and trainings of these tests run on: ``DEXWHEEL_ISAAC_DEVICE`` (default cpu),
    so that benchmarks/gpu_check.py runs the same tests on a GPU while the CPU suite stays as it is."""
    return os.environ.get("DEXWHEEL_ISAAC_DEVICE", "cpu")


def pytest_configure(config):
    # Isaac Lab's own action terms call its deprecated target setters on every step (hundreds of lines)
    config.addinivalue_line(
        "filterwarnings", "ignore:Articulation.set_joint_.*_target_index is deprecated:DeprecationWarning"
    )
