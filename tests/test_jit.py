"""Compiled kernels work where numba has nowhere to cache them (read-only install and home)."""

import os
import subprocess
import sys

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
