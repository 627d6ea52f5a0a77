"""Copied and pickled envs are independent envs that continue the same trajectory, bit for bit.

Same-process checks (deepcopy, copy, pickle) and a fresh-process check: the envs are pickled here and
unpickled and stepped in a child interpreter, where a stale C address of this process's MjData
could not go unnoticed (it would crash or step garbage).
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from dexwheel.envs import register_envs
from dexwheel.sim.snapshot import ADDRESS_FIELDS

register_envs()

ROOT = Path(__file__).resolve().parents[2]
PRE_STEPS, STEPS = 3, 6
#: Wheel-leg episodes full of events: randomised models and gains, pushes and resamples every few steps.
WHEEL_EVENTS = {"domain_randomization": {"enabled": True, "push_interval_s": (0.04, 0.08)},
                "resampling_time_s": (0.04, 0.1)}  # fmt: skip
SINGLE = {
    "g20-hard_write-left": ("G20Hand-v0", {"drive": "hard_write", "hand": "left", "goal_switch_steps": 2}),
    "g20-hard_write-right": ("G20Hand-v0", {"drive": "hard_write", "hand": "right"}),
    "g20-pd-left": ("G20Hand-v0", {"drive": "pd", "hand": "left", "goal_switch_steps": 2}),
    "g20-pd-right": ("G20Hand-v0", {"drive": "pd", "hand": "right"}),
    "solenopsis": ("Solenopsis-v0", {}),
    "solenopsis-events": ("Solenopsis-v0", {**WHEEL_EVENTS, "layers": ("policy", "override")}),
    "m20_legacy-events": ("M20Legacy-v0", WHEEL_EVENTS),
    "g20-rotate": ("G20Rotate-v0", {"actions": {"delay_steps": (0, 2)}}),
    "g20-reorient": ("G20Reorient-v0", {"commands": {"success_tolerance": 3.0}}),  # a goal reached every step
}
#: Vector envs whose episodes end within the test (autoreset draws from each env's generator).
VECTOR = {
    "g20-vec-hard_write": ("G20Hand-v0", {"drive": "hard_write", "max_episode_steps": 4, "goal_switch_steps": 3}),
    "g20-vec-pd": ("G20Hand-v0", {"drive": "pd", "max_episode_steps": 4}),
    "solenopsis-vec": ("Solenopsis-v0", {**WHEEL_EVENTS, "episode_length_s": 0.1}),
    "g20-vec-rotate": ("G20Rotate-v0", {"episode_length_s": 0.2}),
}
CASES = {**SINGLE, **VECTOR}
FULL_PHYSICS = mujoco.mjtState.mjSTATE_FULLPHYSICS
#: MjData fields a step computes, compared besides the full physics state.
DERIVED = ("sensordata", "qacc", "qfrc_actuator", "qfrc_constraint", "actuator_force", "xpos", "xquat", "geom_xpos",
           "geom_xmat", "xanchor", "xaxis", "cacc", "cfrc_int")  # fmt: skip


def make(case: str) -> Any:
    env_id, kwargs = CASES[case]
    if case in VECTOR:
        return gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    env = gym.make(env_id, **kwargs)  # with Gymnasium's wrappers (TimeLimit, OrderEnforcing, PassiveEnvChecker)
    if "override" in kwargs.get("layers", ()):
        env.unwrapped.set_override(False)  # a composer state the constructor does not make
    return env


def actions(env: Any, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    space = env.action_space
    return [rng.uniform(space.low, space.high).astype(space.dtype) for _ in range(n)]


def run(env: Any, acts: list[np.ndarray]) -> list[tuple]:
    return [env.step(a) for a in acts]


def started(case: str) -> tuple[Any, list[np.ndarray]]:
    """An env after a seeded reset and a few steps, and the actions that continue it."""
    env = make(case)
    env.reset(seed=7)
    run(env, actions(env, PRE_STEPS, 1))
    return env, actions(env, STEPS, 2)


def assert_same(a: Any, b: Any, where: str = "") -> None:
    """Equal bit for bit: same types, dtypes, shapes and values, recursively."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert a.shape == b.shape, where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
        assert a.tobytes() == b.tobytes(), f"{where}: {a} != {b}"
    else:
        assert a == b or (a != a and b != b), f"{where}: {a!r} != {b!r}"


def comparable(x: Any) -> Any:
    """``x`` as plain containers of copied arrays, for :func:`assert_same`: an MjData as its full physics
    state and derived fields, a record without its C addresses, a generator as its state."""
    if isinstance(x, mujoco.MjData):
        state = np.empty(mujoco.mj_stateSize(x.model, FULL_PHYSICS))
        mujoco.mj_getState(x.model, x, state, FULL_PHYSICS)
        derived = {n: getattr(x, n).copy() for n in DERIVED}
        ncon, nefc = x.ncon, x.nefc  # the arena's rows in use (the rest is scratch)
        return {"state": state, **derived, "ncon": ncon, "nefc": nefc, "contact_dist": x.contact.dist[:ncon].copy(),
                "efc_force": x.efc_force[:nefc].copy(), "warning": np.array([w.number for w in x.warning])}  # fmt: skip
    if isinstance(x, np.ndarray) and x.dtype.names is not None:
        return {n: comparable(x[n]) for n in x.dtype.names if n not in ADDRESS_FIELDS}
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, np.random.Generator):
        return x.bit_generator.state
    if dataclasses.is_dataclass(x):
        return comparable(vars(x))
    if isinstance(x, dict):
        return {k: comparable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(comparable(v) for v in x)
    return x


def sim_state(env: Any) -> Any:
    """Everything a copy is built from (every MjData, record, buffer, generator), comparable."""
    return comparable(env.unwrapped.task.snapshot())


# -- same process ---------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["deepcopy", "copy", "pickle"])
@pytest.mark.parametrize("case", list(CASES))
def test_copy_is_independent_and_continues_the_trajectory(case, how):
    env, acts = started(case)
    target = env.unwrapped if how == "copy" else env  # copy.copy of a wrapper shares its env, as wrappers do
    clone = {"deepcopy": copy.deepcopy, "copy": copy.copy, "pickle": lambda e: pickle.loads(pickle.dumps(e))}[how](
        target
    )
    assert clone.unwrapped is not env.unwrapped
    before = sim_state(env)
    theirs = run(clone, acts)
    assert_same(sim_state(env), before, "the original after stepping the copy")
    assert_same(run(target, acts), theirs, case)
    assert_same(sim_state(env), sim_state(clone), "the states after the same steps")


@pytest.mark.parametrize("case", ["g20-hard_write-left", "g20-pd-right", "solenopsis-events", "g20-vec-pd"])
def test_copy_made_before_reset_is_a_fresh_env(case):
    env = make(case)
    clone = copy.deepcopy(env)
    for e in (env, clone):
        e.reset(seed=11)
    acts = actions(env, STEPS, 3)
    assert_same(run(env, acts), run(clone, acts), case)


def test_copy_of_a_copy_and_of_a_pickled_env_continue_too():
    env, acts = started("g20-hard_write-left")
    clone = pickle.loads(pickle.dumps(copy.deepcopy(pickle.loads(pickle.dumps(env)))))
    assert_same(run(env, acts), run(clone, acts))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("case", ["g20-hard_write-left", "g20-vec-pd", "solenopsis-events", "solenopsis-vec"])
def test_a_task_copies_as_a_rebuilt_task(case, how):
    """The task alone (``env.unwrapped.task``) copies too: its records never keep the original's addresses."""
    env, acts = started(case)
    task = env.unwrapped.task
    clone = copy.deepcopy(task) if how == "deepcopy" else pickle.loads(pickle.dumps(task))
    before = comparable(task.snapshot())
    batch = [a.reshape(task.num_envs, -1) for a in acts]
    theirs = [comparable(clone.step(a)) for a in batch]
    assert_same(comparable(task.snapshot()), before, "the original after stepping the copy")
    assert_same([comparable(task.step(a)) for a in batch], theirs, case)


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy, pickle.dumps])
@pytest.mark.parametrize(("case", "part"), [("g20-hard_write-left", "drive"), ("g20-pd-left", "drive"),
                                            ("solenopsis", "physics"), ("solenopsis", "drive"),
                                            ("solenopsis-vec", "physics")])  # fmt: skip
def test_a_tasks_simulation_parts_refuse_to_be_copied_alone(case, part, how):
    """A drive or physics holds views and C addresses of its own MjData, which a copy would share with the
    original: copying one alone is refused, naming what to copy instead."""
    env, _ = started(case)
    obj = getattr(env.unwrapped.task, part)
    with pytest.raises(
        TypeError, match=rf"a {type(obj).__name__} cannot be copied or pickled alone.*copy or pickle the env"
    ):
        how(obj)


@pytest.mark.parametrize("env_id", ["G20Hand-v0", "Solenopsis-v0"])
def test_wrappers_copy_with_the_env(env_id):
    env = gym.make(env_id, max_episode_steps=5)
    env.reset(seed=0)
    env.action_space.seed(4)
    for _ in range(3):
        env.step(env.action_space.sample())
    clone = copy.deepcopy(env)
    assert str(clone) == str(env) and clone.unwrapped.spec == env.unwrapped.spec
    for _ in range(4):  # through the TimeLimit's truncation at step 5 and a reset
        a = env.action_space.sample()
        assert_same(a, clone.action_space.sample())  # the spaces' generators are copied too
        mine, theirs = env.step(a), clone.step(a)
        assert_same(mine, theirs)
        if mine[3]:
            assert_same(env.reset(), clone.reset())


@pytest.mark.parametrize("env_id", ["G20Hand-v0", "Solenopsis-v0"])
@pytest.mark.slow
def test_rgb_array_env_copies_without_its_renderer(env_id):
    env = gym.make(env_id, render_mode="rgb_array", width=64, height=48)
    env.reset(seed=2)
    frame = env.render()
    clone = copy.deepcopy(env)
    assert clone.unwrapped._renderer is None  # recreated on the first render
    assert_same(clone.render(), frame)
    a = actions(env, 1, 0)[0]
    env.step(a), clone.step(a)
    assert_same(clone.render(), env.render())
    env.close()
    clone.close()


# -- fresh process ----------------------------------------------------------------------------------
CHILD = """
import pickle, sys
with open(sys.argv[1], "rb") as f:
    jobs = pickle.load(f)
out = {}
for name, (env, reset_seed, acts) in jobs.items():
    if reset_seed is not None:
        env.reset(seed=reset_seed)
    out[name] = [env.step(a) for a in acts]
with open(sys.argv[2], "wb") as f:
    pickle.dump(out, f)
"""


@pytest.fixture(scope="module")
def fresh_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list, list]]:
    """Every case pickled after some steps and before its first reset, then stepped on here and in one
    child process: ``{job: (this process's results, the child's)}``."""
    jobs = {}
    for case in CASES:
        env, acts = started(case)
        jobs[f"{case}/stepped"] = (env, None, acts)
        jobs[f"{case}/unreset"] = (make(case), 5, acts)
    tmp = tmp_path_factory.mktemp("pickled")
    with open(tmp / "jobs.pkl", "wb") as f:
        pickle.dump(jobs, f)
    expected = {}
    for job, (env, reset_seed, acts) in jobs.items():  # the originals go on here: the child must not need them
        if reset_seed is not None:
            env.reset(seed=reset_seed)
        expected[job] = run(env, acts)
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp / "jobs.pkl"), str(tmp / "out.pkl")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, f"child exited {done.returncode}:\n{done.stderr[-4000:]}"
    with open(tmp / "out.pkl", "rb") as f:
        got = pickle.load(f)
    return {job: (expected[job], got[job]) for job in jobs}


@pytest.mark.parametrize("when", ["stepped", "unreset"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.slow
def test_pickled_env_continues_in_a_fresh_process(fresh_process, case, when):
    mine, theirs = fresh_process[f"{case}/{when}"]
    assert_same(mine, theirs, f"{case}/{when}")
