"""The step benchmark's protocol (dexwheel/protocols/steps.py): scenes, trials, outcome rules, the table."""

import math

import numpy as np
import pytest

from dexwheel.fields import ConfigFieldError
from dexwheel.protocols import steps
from dexwheel.terrain import height_at

CFG = steps.StepBenchmarkCfg()


def test_the_default_protocol():
    assert CFG.heights == (0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25)
    assert CFG.trials == 20 and CFG.directions == ("up", "down") and CFG.stairs
    assert (CFG.stairs_risers, CFG.stairs_tread, CFG.stairs_steps) == ((0.15,), 0.3, 5)  # real stairs
    scenes = steps.scenes(CFG)
    assert [s.label for s in scenes[9:]] == ["stairs 0.150"]
    assert [s.name for s in scenes] == ["step"] * 9 + ["stairs"]
    assert len(steps.all_trials(CFG)) == 10 * 2 * 20


@pytest.mark.parametrize("h", [0.05, 0.125, 0.25])
def test_a_step_scene_has_its_edge_across_the_path_at_x_0(h):
    scene = steps.step_scene(h)
    desc = scene.description
    ys = np.linspace(-2.9, 2.9, 7)
    assert np.all(height_at(desc, -0.01, ys) == 0.0)  # before the edge: the ground
    assert np.allclose(height_at(desc, 0.01, ys), h)  # past it: the step, the whole path width
    assert np.allclose(height_at(desc, [-4.0, -1.5, 1.0, 4.0], 0.0), [0.0, 0.0, h, h])
    assert np.isnan(height_at(desc, 0.0, 3.5))  # off the scene
    assert scene.edges == (0.0,)
    xmin, xmax, ymin, ymax = desc.bounds
    assert xmin <= -(CFG.start_distance + 2.0) and xmax >= CFG.start_distance + 2.0  # room past start and finish
    assert (ymin, ymax) == (-3.0, 3.0)
    assert desc.origins.shape == (1, 1, 3)


@pytest.mark.parametrize("riser", [0.1, 0.15, 0.18])
def test_the_stairs_scene_is_a_flight_of_five_risers_between_two_landings(riser):
    scene = steps.stairs_scene(riser)
    desc = scene.description
    assert scene.edges == pytest.approx((0.0, 0.3, 0.6, 0.9, 1.2))  # 5 risers, 0.3 m apart
    xs = [-1.0, 0.15, 0.45, 0.75, 1.05, 1.35]  # the bottom landing, each of the 4 treads, the top landing
    assert np.allclose(height_at(desc, xs, 0.3), [0.0, riser, 2 * riser, 3 * riser, 4 * riser, 5 * riser])
    ys = np.linspace(-2.9, 2.9, 5)
    bottom, top = np.linspace(-4.0, -0.01, 50), np.linspace(1.21, 5.2, 50)  # flat, the whole path width
    assert np.all(height_at(desc, bottom[:, None], ys[None]) == 0.0)
    assert np.allclose(height_at(desc, top[:, None], ys[None]), 5 * riser)
    assert np.all(np.diff(height_at(desc, np.linspace(-4.0, 5.2, 921), 0.0)) >= 0.0)  # only up, riser by riser


def test_a_flights_trials_start_and_end_with_the_whole_robot_on_a_landing():
    """Success on a flight is the far landing: the base ``success_distance`` past the last riser it crosses puts the
    robot's whole footprint there (and a start puts it wholly on the near landing)."""
    scene = steps.stairs_scene(0.15)
    half = np.linspace(-0.5, 0.5, 21)  # the robot's 1 m footprint around the base
    for direction, (near, far) in {"up": (0.0, 0.75), "down": (0.75, 0.0)}.items():
        spec = next(steps.trials(scene, direction, CFG))
        assert np.allclose(height_at(scene.description, spec.x + half, spec.y), near)
        assert np.allclose(height_at(scene.description, spec.finish_x + half, 0.0), far)
    assert next(steps.trials(scene, "up", CFG)).finish_x == pytest.approx(2.2)  # 1 m past the top riser at 1.2 m


def test_trials_start_before_the_edge_facing_it_and_repeat_across_heights():
    low, high = steps.step_scene(0.05), steps.step_scene(0.2)
    up = list(steps.trials(low, "up", CFG))
    down = list(steps.trials(low, "down", CFG))
    assert len(up) == len(down) == 20
    for t in up:
        assert t.x == -1.5 and abs(t.y) <= 0.1 and abs(t.yaw) <= 0.1 and t.finish_x == 1.0
        assert t.command == (0.5, 0.0) and t.sign == 1
    for t in down:
        assert t.x == 1.5 and t.finish_x == -1.0 and t.sign == -1
        assert math.cos(t.yaw) < -0.99  # facing -x, within 0.1 rad
    assert [t.reset_seed for t in up] == list(range(20000, 20020))
    assert len({(t.y, t.yaw) for t in up}) == 20  # each trial its own start
    # trial k starts the same way at every height and in both directions (the offset)
    assert [(t.y, t.yaw) for t in steps.trials(high, "up", CFG)] == [(t.y, t.yaw) for t in up]
    assert [t.y for t in down] == [t.y for t in up]
    stairs = list(steps.trials(steps.stairs_scene(0.1), "up", CFG))
    assert stairs[0].x == -1.5 and stairs[0].finish_x == pytest.approx(2.2)  # 1 m past the top edge at 1.2 m
    stairs_down = list(steps.trials(steps.stairs_scene(0.1), "down", CFG))
    assert stairs_down[0].x == pytest.approx(2.7) and stairs_down[0].finish_x == -1.0


def _spec(direction="up"):
    return next(steps.trials(steps.step_scene(0.1), direction, CFG))


def test_success_is_the_base_1m_past_the_edge_before_a_fall_and_the_time_limit():
    dt = 0.02
    xs = np.linspace(-1.5, 1.2, 100)
    k = int(np.argmax(xs >= 1.0))  # the step (from 0) the base reaches x = 1.0
    outcome, t = steps.judge(_spec(), dt, xs, [False] * 100)
    assert outcome == "success" and t == pytest.approx(dt * (k + 1))
    # a fall on the way: a fall, even if the base then slides past the line
    fell = [False] * 100
    fell[50] = True
    assert steps.judge(_spec(), dt, xs, fell) == ("fall", pytest.approx(51 * dt))
    # a fall in the step the base crosses the line: it got there
    fell = [j == k for j in range(100)]
    assert steps.judge(_spec(), dt, xs, fell)[0] == "success"
    fell = [j == k - 1 for j in range(100)]  # a step earlier: a fall
    assert steps.judge(_spec(), dt, xs, fell)[0] == "fall"
    # too slow: the 10 s time limit (500 steps) passes first
    slow = np.linspace(-1.5, 1.2, 600)
    assert steps.judge(_spec(), dt, slow, [False] * 600) == ("timeout", pytest.approx(10.0))
    # standing still, a trajectory that ends undecided
    assert steps.judge(_spec(), dt, [-1.5] * 10, [False] * 10)[0] == "timeout"
    # down: measured toward -x
    assert steps.judge(_spec("down"), dt, [1.5, 0.0, -0.99], [False] * 3)[0] == "timeout"
    assert steps.judge(_spec("down"), dt, [1.5, 0.0, -1.0], [False] * 3) == ("success", pytest.approx(3 * dt))
    assert steps.judge(_spec("down"), dt, [1.5, 2.0, 3.0], [False] * 3)[0] == "timeout"  # the wrong way


def test_a_flights_time_limit_grows_with_its_path_at_the_single_steps_average_speed():
    step, stairs = steps.step_scene(0.1), steps.stairs_scene(0.1)
    assert steps.time_limit(step, CFG) == pytest.approx(10.0)  # 2.5 m of path: 0.25 m/s
    assert steps.time_limit(stairs, CFG) == pytest.approx(14.8)  # 1.5 + 4 treads of 0.3 + 1 = 3.7 m
    five = steps.make_cfg({"stairs_steps": 5, "stairs_tread": 1.0, "start_distance": 2.0, "time_limit_s": 12.0})
    assert steps.time_limit(steps.stairs_scene(0.1, five), five) == pytest.approx(12.0 * 7.0 / 3.0)  # 2 + 4 + 1 m
    assert steps.longest_time_limit(CFG) == pytest.approx(14.8)
    assert steps.longest_time_limit(steps.make_cfg({"stairs": False})) == pytest.approx(10.0)
    up = next(steps.trials(stairs, "up", CFG))
    assert up.time_limit_s == pytest.approx(14.8)
    dt = 0.02
    crawl = np.linspace(-1.5, 2.1, 1000)  # never reaches 2.2 m: the clock stops it at 14.8 s (740 steps)
    assert steps.judge(up, dt, crawl, [False] * 1000) == ("timeout", pytest.approx(14.8))
    late = np.linspace(-1.5, 2.2, 700)  # over the line at 14 s: past the single step's 10 s, within the flight's
    assert steps.judge(up, dt, late, [False] * 700) == ("success", pytest.approx(14.0))


def test_the_table_counts_outcomes_per_height_and_direction():
    rows = steps.summarize({("step", 0.05, "up"): [("success", 2.0), ("success", 3.0), ("fall", 1.0), ("timeout", 10.0)],
                            ("step", 0.05, "down"): [("timeout", 10.0)]})  # fmt: skip
    assert rows[0] == {"scene": "step", "height": 0.05, "direction": "up", "trials": 4, "successes": 2, "falls": 1,
                       "timeouts": 1, "success_rate": 0.5, "mean_success_time_s": 2.5}  # fmt: skip
    assert rows[1]["success_rate"] == 0.0 and rows[1]["mean_success_time_s"] is None
    text = steps.format_table(rows)
    lines = text.splitlines()
    assert lines[0].split() == ["scene", "height", "dir", "trials", "success", "falls", "timeouts", "time_s"]
    assert lines[2].split() == ["step", "0.050", "up", "4", "0.50", "1", "1", "2.50"]
    assert lines[3].split() == ["step", "0.050", "down", "1", "0.00", "0", "1", "-"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"heights": [0.05, 1.5]}, "steps.heights: 1.5 m is outside the terrain's range: 0 < height <= 1 m"),
        ({"heights": [0.0]}, "steps.heights: 0.0 m is outside the terrain's range"),
        ({"heights": [-0.05]}, "steps.heights: -0.05 m is outside the terrain's range"),
        ({"stairs_risers": [0.1, 2.0]}, "steps.stairs_risers: 2.0 m is outside the terrain's range"),
        ({"stairs_risers": []}, "steps.stairs_risers: stairs = true and no risers"),
        ({"stairs_riser": 0.1}, "steps.stairs_riser: renamed steps.stairs_risers (a list"),
        ({"heights": "0.1"}, "steps.heights: expected a list of heights"),
        ({"directions": ["sideways"]}, "steps.directions: expected a non-empty list of ['up', 'down']"),
        ({"trials": 0}, "steps.trials: expected an integer >= 1, got 0"),
        ({"time_limit_s": -1.0}, "steps.time_limit_s: expected a number > 0"),
        ({"stairs_tread": 0.1}, "steps.stairs_tread: expected >= 0.2 m (the terrain's narrowest tread"),
        (
            {"stairs_risers": [0.1, 0.15], "stairs_steps": 7},
            "steps.stairs_steps: 7 risers of 0.15 m climb past the terrain's range (<= 1 m): at most 6 steps",
        ),
        ({"command": 0.0}, "steps.command: expected a number > 0, got 0.0"),
        ({"success_distance": 0.3}, "steps.success_distance: expected >= 0.5 m (half the robot's 1 m footprint"),
        ({"start_distance": 0.4}, "steps.start_distance: expected >= 0.5 m (half the robot's 1 m footprint"),
        ({"command": -0.5}, "steps.command: expected a number > 0, got -0.5"),
        ({"trails": 3}, "steps: unknown field(s) ['trails']"),
    ],
)
def test_a_bad_protocol_is_refused_naming_the_key(changes, message):
    with pytest.raises(ConfigFieldError) as e:
        steps.make_cfg(changes)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_evaluate_config_holds_the_protocols_defaults():
    from cfgutil import CONFIGS
    from omegaconf import OmegaConf

    node = OmegaConf.to_container(OmegaConf.load(CONFIGS / "evaluate.yaml").steps)
    assert steps.make_cfg(node) == steps.StepBenchmarkCfg()
