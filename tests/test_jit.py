"""Compiled kernels work where numba has nowhere to cache them (read-only install and home)."""

import os
import subprocess
import sys

import pytest

SCRIPT = """
import warnings
import numpy as np
import gymnasium as gym
import dexwheel
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("default")  # what a user sees: each warning once per location
    env = gym.make("Solenopsis-v0")
    env.reset(seed=0)
    _, reward, *_ = env.step(np.zeros(8, np.float32))
print(np.isfinite(reward), sum("NUMBA_CACHE_DIR" in str(w.message) for w in caught))
"""


@pytest.mark.slow
def test_kernels_compile_without_a_cache_directory_and_say_so_once():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    # the locator that only serves NUMBA_CACHE_DIR, which is unset: numba finds no cache location at all
    env["NUMBA_CACHE_LOCATOR_CLASSES"] = "UserProvidedCacheLocator"
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "1"]


def test_fetch_add_hands_out_every_index_once_across_threads():
    """The work counter of threaded kernels: worker threads racing on it each get distinct values, and
    together every value below the total exactly once (a plain ``+= 1`` loses increments here)."""
    import numba
    import numpy as np

    from dexwheel.jit import fetch_add

    @numba.njit(parallel=True)
    def take_all(total: int, workers: int) -> tuple[np.ndarray, np.ndarray]:
        counter = np.zeros(1, dtype=np.int64)
        owner = np.full(total, -1, dtype=np.int64)
        for w in numba.prange(workers):
            k = fetch_add(counter, 0)
            while k < total:
                owner[k] = w
                k = fetch_add(counter, 0)
        return owner, counter

    owner, counter = take_all(200_000, 2)
    assert (owner >= 0).all()  # every index handed out
    assert counter[0] == 200_000 + 2  # one failed take per worker, no increment lost


def test_compiled_for_runs_the_dispatchers_own_overload():
    """The function for fixed argument types (record arrays included) is the overload the dispatcher
    compiles for them, and computes what a dispatched call computes."""
    import numba
    import numpy as np

    from dexwheel.jit import compiled_for

    @numba.njit
    def weigh(records: np.ndarray, scale: np.ndarray) -> float:
        return records[0].mass * scale[0] + records[0].arm[1]

    records = np.zeros(1, dtype=[("mass", "f8"), ("arm", "f8", (2,))])
    records[0]["mass"], records[0]["arm"] = 2.5, (0.0, 0.75)
    scale = np.array([4.0], dtype=np.float32)
    run = compiled_for(weigh, records, scale)
    assert len(weigh.signatures) == 1  # compiled once, for exactly these types
    assert run(records, scale) == weigh(records, scale) == 10.75
    assert len(weigh.signatures) == 1


def test_an_unsupported_mujoco_is_refused_at_import_naming_both_versions():
    """The kernels call MuJoCo's C functions: a MuJoCo outside pyproject.toml's bound fails clearly."""
    import mujoco
    import pytest

    from dexwheel.sim import mujoco_c

    mujoco_c.check_mujoco_version(mujoco.__version__)  # what is installed passes
    with pytest.raises(ImportError, match=r"mujoco 3\.17\.0 is installed.*signatures of mujoco<4\.1,>=4\.0\.1"):
        mujoco_c.check_mujoco_version("3.17.0")
    with pytest.raises(ImportError, match=r"mujoco 4\.0\.0 is installed"):  # its cylinder-edge contacts are not 4.0.1's
        mujoco_c.check_mujoco_version("4.0.0")
    with pytest.raises(ImportError, match=r"mujoco 4\.1\.0 is installed"):  # a minor release changes the dynamics
        mujoco_c.check_mujoco_version("4.1.0")


def test_the_kernels_c_signatures_match_the_python_bindings(monkeypatch):
    import pytest
    from numba import types

    from dexwheel.sim import mujoco_c

    mujoco_c.check_signatures()
    wrong = types.void(types.voidptr, types.voidptr, types.voidptr)  # mj_setState without its spec argument
    monkeypatch.setitem(mujoco_c.C_FUNCTIONS, "mj_setState", wrong)
    with pytest.raises(ImportError, match=r"mj_setState of mujoco .* is `mj_setState\(m: "):
        mujoco_c.check_signatures()


def test_the_kernels_c_signatures_match_the_installed_mujoco_header(monkeypatch, tmp_path):
    import pytest
    from numba import types

    from dexwheel.sim import mujoco_c

    assert mujoco_c.header_path().is_file()  # the mujoco wheel ships its headers: the check below is not vacuous
    mujoco_c.check_header()
    text = mujoco_c.header_path().read_text()
    changed = tmp_path / "mujoco.h"
    changed.write_text(text.replace("mjtNum distmax,", "float distmax,"))  # a header whose signature moved
    with pytest.raises(
        ImportError, match=r"mj_geomDistance in .*mujoco\.h of mujoco .* is `MJAPI mjtNum mj_geomDistance"
    ):
        mujoco_c.check_header(changed)
    wrong = types.void(types.voidptr, types.voidptr, types.voidptr)  # mj_setState without its spec argument
    monkeypatch.setitem(mujoco_c.C_FUNCTIONS, "mj_setState", wrong)
    with pytest.raises(ImportError, match=r"mj_setState in .* is `MJAPI void mj_setState\(const mjModel\* m, "):
        mujoco_c.check_header()


def test_kernel_caches_depend_only_on_what_their_modules_import():
    from dexwheel import jit

    closure: set = set()
    todo = [jit._module_file("dexwheel.sim.hand_drive")]  # the hard-write step's kernels
    while todo:
        path = todo.pop()
        if path not in closure:
            closure.add(path)
            todo += jit._imports(path) - closure
    names = {p.relative_to(jit.PACKAGE).as_posix() for p in closure}
    assert {"sim/hand_drive.py", "sim/projection.py", "sim/mujoco_c.py", "jit.py"} <= names
    assert not any(n.startswith(("rl/", "tasks/")) for n in names)  # editing training or task code recompiles nothing
