"""The step benchmark's heights are climbable within the rough task's action space: a scripted gait that reads
the wheels' positions (privileged, no learning) crosses them, so a policy that does not has not learned it.

The gait drives every wheel forward; a front wheel within a few centimetres of the edge lifts its arm
(knee action +1, the arm swung forward and up); once the hind wheels reach the edge, the front arms swing
back under the base (-1) and the hind arms out (-1), which moves the load onto the front wheels on top so the
hind wheels roll up. It climbs 0.10 m (one wheel radius) with the flat task's knee range (0.25 rad per unit
action) and 0.15 m only with 0.5 rad: the rough task's ``knee_scale`` (docs/tasks.md#rough-terrain).
"""

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from dexwheel.benchmarks import steps
from dexwheel.rl.step_benchmark import benchmark_env_kwargs, run_step_benchmark

WHEEL_RADIUS = 0.0988
WHEELS = ("fl_wheel", "fr_wheel", "hl_wheel", "hr_wheel")
DRIVE = -0.35  # wheel action: 10.5 rad/s forward (6.3 N m when stalled against the edge)


def scripted_gait(env: gym.Env):
    """The gait above for env 0 of ``env`` (edge at x = 0, driving toward +x)."""
    physics = env.unwrapped.task.physics
    ids = [mujoco.mj_name2id(physics.models[0], mujoco.mjtObj.mjOBJ_BODY, b) for b in WHEELS]

    def act(obs):
        x = physics.sync_data(0).xpos[ids, 0]
        a = np.zeros(8, np.float32)
        a[4:] = DRIVE
        if x[:2].max() + WHEEL_RADIUS > -0.02 and x[:2].min() < 0.05:  # a front wheel at the edge
            a[:2] = 1.0
        if x[2:].max() + WHEEL_RADIUS > -0.02 and x[2:].min() < 0.05:  # a hind wheel at the edge
            a[:4] = -1.0
        return a

    return act


def _outcomes(knee_scale: float, heights: list[float]) -> dict[str, str]:
    bench = steps.make_cfg({"heights": heights, "directions": ["up"], "trials": 1, "stairs": False})
    make = lambda desc: gym.make("Solenopsis-Rough-v0", terrain=desc, actions={"knee_scale": knee_scale},  # noqa: E731
                                 **benchmark_env_kwargs(bench))  # fmt: skip
    return run_step_benchmark(make, scripted_gait, bench)["outcomes"]


@pytest.mark.parametrize(("knee_scale", "expected"), [(0.25, "SST"), (0.5, "SSS")])
def test_the_scripted_gait_climbs_one_wheel_radius_and_needs_half_a_radian_for_more(knee_scale, expected):
    outcomes = _outcomes(knee_scale, [0.05, 0.10, 0.15])
    assert "".join(outcomes[f"step {h:.3f} up"] for h in (0.05, 0.10, 0.15)) == expected
