"""The climbing teacher's actions: the wheels track the command as a skid-steered cart, the arms lift a wheel at
a rise (leading arms first, then every arm the other way), mirrored when the command reverses. Scored on the
step benchmark in tests/benchmarks/test_steps_climbable.py."""

import gymnasium as gym
import numpy as np
import pytest

import dexwheel  # noqa: F401
from dexwheel.benchmarks import steps
from dexwheel.rl.step_benchmark import benchmark_env_kwargs
from dexwheel.tasks.velocity.teacher import ClimbingTeacher

BENCH = steps.make_cfg({"heights": [0.1], "directions": ["up"], "trials": 1, "stairs": False})
SCENE = steps.scenes(BENCH)[0]  # a 0.10 m step up across the path at x = 0


@pytest.fixture(scope="module")
def env():
    env = gym.make("Solenopsis-Rough-v0", terrain=SCENE.description, **benchmark_env_kwargs(BENCH))
    yield env
    env.close()


def act_at(env, x: float, yaw: float = 0.0, command=(0.5, 0.0)) -> tuple[np.ndarray, ClimbingTeacher]:
    env.reset(seed=0, options={"base_pose": (x, 0.0, yaw), "command": command})
    teacher = ClimbingTeacher(env.unwrapped.task)
    return teacher()[0], teacher


def wheel_offsets(env) -> np.ndarray:
    """Each wheel centre's x minus the base's, at the start pose (fl fr hl hr)."""
    _, teacher = act_at(env, -1.5)
    return teacher.wheel_xy()[0][0] + 1.5


def test_on_flat_ground_the_wheels_drive_the_command_and_the_arms_hold_the_stance(env):
    a, teacher = act_at(env, -1.5)
    assert np.all(a[:4] == 0.0)
    v = 0.5 + (0.5 - 0.0)  # the command plus the gain-1 feedback on the measured forward speed (at rest)
    assert a[4:] == pytest.approx(np.full(4, -v / teacher.wheel_radius / teacher.wheel_scale), abs=0.02)
    a, _ = act_at(env, -1.5, command=(0.0, 0.5))  # turning left: left wheels back, right wheels forward
    assert a[4] > 0.0 and a[6] > 0.0 and a[5] < 0.0 and a[7] < 0.0
    assert a[4] == a[6] and a[5] == a[7] and (a[4] + a[5]) / 2 == pytest.approx(0.0, abs=0.03)  # no forward part


def test_a_front_wheel_at_the_rise_lifts_the_front_arms_and_drives_at_the_climbing_speed(env):
    front = wheel_offsets(env)[0]
    a, teacher = act_at(env, -(teacher_reach := 0.0988 + 0.01) - front)
    assert teacher_reach < teacher.lead_reach
    assert a[:4].tolist() == [1.0, 1.0, 0.0, 0.0]
    v = teacher.climb_speed * 2.0  # the climbing speed with the feedback at rest
    assert a[4:] == pytest.approx(np.full(4, max(-1.0, -v / teacher.wheel_radius / teacher.wheel_scale)), abs=0.02)


def test_a_hind_wheel_at_the_rise_swings_every_arm_back(env):
    hind = wheel_offsets(env)[2]
    a, _ = act_at(env, -0.0988 - 0.03 - hind)
    assert a[:4].tolist() == [-1.0, -1.0, -1.0, -1.0]


def test_a_reversed_command_leads_with_the_hind_wheels(env):
    """Facing away from the step (yaw pi) and driving backward, the hind wheels meet it first and their arms
    swing up toward it: knee action -1 (the front arms' +1 mirrored)."""
    hind = wheel_offsets(env)[2]  # < 0; facing -x, the hind wheels are at base x - hind
    a, _ = act_at(env, -(0.0988 + 0.01) + hind, yaw=np.pi, command=(-0.5, 0.0))
    assert a[:4].tolist() == [0.0, 0.0, -1.0, -1.0]
    assert np.all(a[4:] > 0.0)  # rolling backward


def test_an_edge_ahead_is_near_an_edge_a_drop_does_not_activate_the_climb(env):
    """A rise within ``approach`` (0.2 m past the rim) ahead of a leading wheel: active and near an edge; far
    from it, neither. On top of the step facing its edge, a drop that close: near an edge, not active (the arms
    hold the stance); farther, not near an edge."""
    front = wheel_offsets(env)[0]
    _, teacher = act_at(env, -0.2 - front)  # the front wheels' centres 0.2 m before the rise
    assert teacher.active[0] and teacher.near_edge[0]
    _, teacher = act_at(env, -1.5)
    assert not teacher.active[0] and not teacher.near_edge[0]
    _, teacher = act_at(env, 0.6 + front, yaw=np.pi)  # on top facing -x, the front wheels 0.6 m from the drop
    assert not teacher.near_edge[0]
    a, teacher = act_at(env, 0.2 + front, yaw=np.pi)  # ... 0.2 m from it
    assert teacher.near_edge[0] and not teacher.active[0] and np.all(a[:4] == 0.0)


def test_the_teacher_needs_terrain_and_every_joint():
    flat = gym.make("Solenopsis-v0")
    with pytest.raises(ValueError, match="reads the terrain"):
        ClimbingTeacher(flat.unwrapped.task)
    wheels_only = gym.make("Solenopsis-Rough-v0", terrain=SCENE.description, composer={"layers": ["policy", "stance"]})
    with pytest.raises(ValueError, match="acts on all 8 joints; this task's policy holds 4"):
        ClimbingTeacher(wheels_only.unwrapped.task)
