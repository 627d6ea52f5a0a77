"""The step benchmark's heights are climbable within the rough task's action space: the climbing teacher
(:class:`~dexwheel.tasks.velocity.teacher.ClimbingTeacher`, privileged: it reads the terrain under each wheel; no
learning) crosses them, so a policy that does not has not learned it.

The teacher speeds up to 1 m/s before a rise (the benchmark commands 0.5 m/s: the momentum is what lifts the
hind wheels), lifts the leading arms at the edge and swings every arm the other way once the trailing wheels
meet it. With the default knee range (0.25 rad per unit action) it crosses 0.10 m (one wheel radius) in every
trial; at 0.15 m it crosses in 3 of these 5 and stalls at the edge in the others (under MuJoCo 4.0.0, whose
cylinder-edge contacts held a wheel at two points, it stalled in all 5: benchmarks/wheel_edge_contacts.py).
"""

import gymnasium as gym
import pytest

from dexwheel.benchmarks import steps
from dexwheel.rl.step_benchmark import benchmark_env_kwargs, run_step_benchmark
from dexwheel.tasks.velocity.teacher import ClimbingTeacher

# every test here trains, or runs a script on a trained run: more than a second each, out of `make test-fast`
pytestmark = pytest.mark.slow


def teacher_policy(env: gym.Env):
    """The teacher acting in env 0 of ``env`` (the policy's observation goes unread)."""
    teacher = ClimbingTeacher(env.unwrapped.task)
    return lambda obs: teacher()[0]


def test_the_teacher_crosses_one_wheel_radius_up_and_down_in_every_trial_and_one_and_a_half_in_three_of_five():
    bench = steps.make_cfg({"heights": [0.05, 0.10, 0.15], "directions": ["up", "down"], "trials": 5,
                            "stairs": False})  # fmt: skip
    make = lambda desc: gym.make("Solenopsis-Rough-v0", terrain=desc, **benchmark_env_kwargs(bench))  # noqa: E731
    outcomes = run_step_benchmark(make, teacher_policy, bench)["outcomes"]
    expected = {f"step {h:.3f} {d}": "SSSSS" for h in (0.05, 0.10, 0.15) for d in ("up", "down")}
    assert outcomes == {**expected, "step 0.150 up": "SSSTT"}  # at 0.15 m up it stalls twice: timeouts
