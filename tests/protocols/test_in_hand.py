"""The in-hand benchmark (dexwheel/protocols/in_hand.py) and scripts/evaluate.py's benchmark=rotation / reorient."""

from __future__ import annotations

import json

import pytest
from cfgutil import compose_cfg

from dexwheel.fields import ConfigFieldError
from dexwheel.protocols import in_hand
from dexwheel.rl.eval_job import evaluate, overrides_tag
from dexwheel.rl.schema import ConfigError
from dexwheel.tasks.in_hand.objects import ObjectSpec

ROTATE = ["robot=g20_left", "task=in_hand_rotate_z", "policy=zero"]


def test_the_default_protocol_is_the_training_cube_and_held_out_sizes_masses_and_shape():
    cfg = in_hand.make_cfg()
    assert cfg.trials == 50 and cfg.seconds == 20.0
    assert cfg.specs[0] == ObjectSpec("cube", 0.06, 0.1)
    assert {s.size for s in cfg.specs} == {0.05, 0.06, 0.07} and {s.mass for s in cfg.specs} == {0.05, 0.1, 0.2}
    assert cfg.specs[-1] == ObjectSpec("cylinder", 0.06, 0.1)


def test_the_rolling_tasks_protocol_is_its_capsule_and_held_out_sizes_masses_and_a_sphere():
    """held_out: +-1 cm within what the hand holds (the 45 mm capsule's 35 mm is below 40 mm: 40 mm), 50 and 200 g,
    and a sphere of its diameter laid in the hooked fingers as it is, each with its grasp cache; evaluate.py's
    default protocol (in_hand.objects: null) is the task's."""
    from dexwheel.tasks.in_hand.config import rotate_cfg

    training = rotate_cfg().object
    cfg = in_hand.make_cfg(training=training)
    across = {"length": 0.08, "orientation": "across"}
    assert cfg.specs == (training, ObjectSpec("capsule", 0.04, 0.1, **across), ObjectSpec("capsule", 0.055, 0.1,
                         **across), ObjectSpec("capsule", 0.045, 0.05, **across),
                         ObjectSpec("capsule", 0.045, 0.2, **across),
                         ObjectSpec("sphere", 0.045, 0.1, orientation="across"))  # fmt: skip
    assert [in_hand.label(s) for s in cfg.specs[:2]] == ["capsule 45x80 mm 100 g", "capsule 40x80 mm 100 g"]
    from dexwheel.rl.eval_job import in_hand_benchmark_cfg

    typed = compose_cfg("evaluate", "robot=g20_left", "task=in_hand_rotate", "benchmark=rotation")
    assert in_hand_benchmark_cfg(typed, typed).specs == cfg.specs


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"trials": 0}, r"^in_hand.trials: expected an integer >= 1, got 0$"),
        ({"seconds": -1.0}, r"^in_hand.seconds: expected a number of seconds > 0, got -1.0$"),
        ({"objects": []}, r"^in_hand.objects: expected a list of objects"),
        ({"objects": [{"shape": "cube", "size": 0.3}]}, r"^in_hand.objects\[0\].size: 0.3 m is outside \[0.04, 0.08\]"),
        ({"objects": [{"shape": "cube", "mass": 0.01}]}, r"^in_hand.objects\[0\].mass: 0.01 kg is outside"),
        ({"objects": [{"shape": "sphere", "size": 0.05}]},
         r"^in_hand.objects\[0\]: no grasp cache for the left hand and a sphere of 0.05 m; caches: \[.*'left_cube_60mm'"),
        ({"objects": [{"shape": "cube", "colour": "red"}]}, r"^in_hand.objects\[0\]: .* an object has the keys"),
        ({"speed": 1}, r"^in_hand: unknown field\(s\) \['speed'\]"),
    ],
)  # fmt: skip
def test_a_bad_protocol_is_refused_in_one_line_naming_the_key(changes, message):
    with pytest.raises(ConfigFieldError, match=message):
        in_hand.make_cfg(changes)


def test_a_row_is_the_mean_over_trials_with_a_drop_counting_its_lost_time():
    episodes = [{"rotation_angle": 4.0, "drop": 0.0, "successes": 0.0},
                {"rotation_angle": 1.0, "drop": 1.0, "successes": 0.0}]  # fmt: skip
    row = in_hand.row(ObjectSpec(), episodes, seconds=20.0)
    assert row["rate_mean"] == pytest.approx(0.125) and row["rate_std"] == pytest.approx(0.075)
    assert row["drop_rate"] == 0.5 and row["rotation_mean"] == 2.5 and row["object"] == "cube 60 mm 100 g"


@pytest.mark.slow
def test_evaluate_scores_a_policy_and_writes_its_table_json_and_plot(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    tiny = ["benchmark=rotation", "in_hand.trials=2", "in_hand.seconds=0.5",
            "in_hand.objects=[{shape: cube, size: 0.06, mass: 0.1}, {shape: cube, size: 0.05, mass: 0.2}]"]  # fmt: skip
    results = evaluate(compose_cfg("evaluate", *ROTATE, *tiny), tiny)
    rows = results["g20_left"]["rows"]
    assert [r["object"] for r in rows] == ["cube 60 mm 100 g", "cube 50 mm 200 g"]
    assert all(r["trials"] == 2 and r["drop_rate"] == 0.0 and abs(r["rate_mean"]) < 0.05 for r in rows)  # it holds
    name = f"rotation_zero_g20_left_seed20000_tr2_{overrides_tag(tiny[2:])}"  # the protocol as typed, in its name
    assert name.startswith("rotation_zero_g20_left_seed20000_tr2_in_hand.seconds-0.5+in_hand.objects-")
    saved = json.loads((tmp_path / "outputs" / "eval" / f"{name}.json").read_text())
    assert saved["benchmark"] == "rotation" and saved["protocol"]["trials"] == 2 and saved["results"] == results
    assert (tmp_path / "outputs" / "eval" / f"{name}.png").stat().st_size > 0
    assert "rotation benchmark: g20_left" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["benchmark=reorient"], r"^benchmark=reorient: it scores task=in_hand_reorient policies, not task=in_hand_rotate_z$"),
        (["in_hand.trials=3"], r"^in_hand.trials=3: the in-hand benchmark's protocol; needs benchmark=rotation"),
        (["benchmark=rotation", "episodes=3"], r"^episodes=3: benchmark=rotation runs trials, not episodes; set in_hand"),
        (["benchmark=rotation", "steps.trials=3"], r"^steps.trials=3: the step benchmark's protocol; needs benchmark=steps"),
    ],
)  # fmt: skip
def test_evaluate_refuses_what_the_benchmark_cannot_run(tmp_path, monkeypatch, overrides, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=message):
        evaluate(compose_cfg("evaluate", *ROTATE, *overrides), overrides)
    assert not (tmp_path / "outputs").exists()


def test_a_trial_scores_the_protocols_object_without_the_runs_object_randomisation():
    from dexwheel.protocols.in_hand import trial_env_kwargs
    from dexwheel.tasks.in_hand.objects import ObjectSpec

    e = "dexwheel.tasks.in_hand.events:"
    events = {"size": {"func": e + "randomize_object_size"}, "mass": {"func": e + "randomize_object_mass"},
              "friction": {"func": e + "randomize_friction"}}  # fmt: skip
    out = trial_env_kwargs(ObjectSpec(size=0.05), 20.0, {"hand": "left", "events": events})
    assert out == {"object": {"shape": "cube", "size": 0.05, "mass": 0.1, "friction": 1.0, "length": None,
                              "orientation": "upright"}, "grasps": None, "episode_length_s": 20.0,
                   "events": {"friction": events["friction"]}}  # fmt: skip
    assert "events" not in trial_env_kwargs(ObjectSpec(), 1.0, {"hand": "left"})
    import gymnasium as gym

    env = gym.make("G20RotateZ-v0", **out)  # the trial's env: the 5 cm cube, friction still randomised
    env.reset(seed=0)
    assert env.unwrapped.task.object_size[0] == 0.05 and list(env.unwrapped.task.cfg.events) == [
        "reset_from_grasps",
        "friction",
    ]
