"""One name per task (issue 56) and one config per hand task (issue 69): old task options and keys, typed or in a run
saved before the rename, still load through the one table of renames (dexwheel.renames), each use named in a
warning."""

import subprocess
import sys

import pytest
import yaml
from cfgutil import ROOT, compose_cfg, short

from dexwheel.renames import HAND_KEYS, translate_overrides, translate_saved
from dexwheel.rl.env_factory import env_kwargs
from dexwheel.rl.eval_job import evaluate
from dexwheel.rl.run_config import compose, load_run_config
from dexwheel.rl.training import train


def test_old_task_options_and_keys_read_as_today_s():
    lines, notes = translate_overrides(["robot=solenopsis", "task=rough", "task.wheel_leg.terrain.num_rows=2",
                                        "+task.wheel_leg.rewards.x={func: 'a:b'}", "drive.hand.drive=pd"])  # fmt: skip
    assert lines == ["robot=solenopsis", "task=velocity_rough", "task.velocity_rough.terrain.num_rows=2",
                     "+task.velocity_rough.rewards.x={func: 'a:b'}", "drive.hand.drive.kind=pd"]  # fmt: skip
    assert len(notes) == 4 and notes[0].startswith("task=rough is now task=velocity_rough")
    assert notes[3].startswith("drive.hand.drive=pd is now drive.hand.drive.kind=pd")
    assert (
        translate_overrides(["robot=g20_left", "task.hand.goal_mode=random"])[0][1] == "task.hand_pose.goal_mode=random"
    )
    cfg = compose("train", ["robot=g20_left", "task=hand_pose_tracking", "task.hand.goal_mode=random"])
    assert cfg.task.name == "hand_pose" and env_kwargs(cfg)["goal_mode"] == "random"


def test_a_typed_old_key_trains_warning_once_and_records_today_s_names(tmp_path):
    run = tmp_path / "run"
    args = [*short("g20_left"), "task=hand_pose_tracking", "task.hand.max_episode_steps=20", "train.total_timesteps=256",
            f"hydra.run.dir={run}"]  # fmt: skip
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), *args], cwd=tmp_path,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "warning: task=hand_pose_tracking is now task=hand_pose" in done.stderr
    assert "warning: task.hand.max_episode_steps=20 is now task.hand_pose.max_episode_steps=20" in done.stderr
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["task"]["name"] == "hand_pose" and saved["task"]["hand_pose"]["max_episode_steps"] == 20


@pytest.mark.slow
def test_a_run_saved_before_the_rename_loads_and_evaluates_the_same(tmp_path):
    run = tmp_path / "run"
    train(compose_cfg("train", *short("g20_left")), run)
    before = evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))
    path = run / "config.yaml"
    saved = yaml.safe_load(path.read_text())
    saved["task"]["name"] = "hand_pose_tracking"  # as a run saved before one name per task holds it
    saved["task"]["hand"] = saved["task"].pop("hand_pose")
    del saved["task"]["family"]
    path.write_text(yaml.safe_dump(saved))
    cfg, warnings = load_run_config(run)
    assert cfg.task.name == "hand_pose" and cfg.task.family == "hand" and "hand" not in cfg.task
    assert any("task.name=hand_pose_tracking is now hand_pose" in w for w in warnings)
    assert any("task.hand.* is now task.hand_pose.*" in w for w in warnings)
    after = evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))
    assert after == before  # the same policy, the same env


def test_old_hand_keys_typed_or_saved_read_as_the_sections():
    lines, notes = translate_overrides(["robot=g20_left", "drive.hand.slew_rad_s=2", "action.hand.action_delay_steps=1",
                                        "task.hand_pose.out_of_range=clip", "collision.hand.collision_projection=false",
                                        "composer.hand.composer_layers=[policy,hold]", "drive.hand.drive={kind: pd}"])  # fmt: skip
    assert lines[1:] == ["drive.hand.drive.slew_rad_s=2", "action.hand.actions.delay_steps=1",
                         "task.hand_pose.actions.out_of_range=clip", "collision.hand.collision.projection=false",
                         "composer.hand.composer.layers=[policy,hold]", "drive.hand.drive={kind: pd}"]  # fmt: skip
    assert len(notes) == 5  # today's section, given whole, is no old key
    cfg = compose("train", lines)
    kwargs = env_kwargs(cfg)
    assert kwargs["drive"]["slew_rad_s"] == 2 and kwargs["actions"]["out_of_range"] == "clip"
    saved = {"drive": {"name": "pd", "hand": {"drive": "pd", "slew_rad_s": 5.0, "track_test": False}},
             "task": {"name": "hand_pose", "family": "hand", "hand_pose": {"out_of_range": "raise", "goal_mode": "mixed"}}}  # fmt: skip
    notes = translate_saved(saved)
    assert saved["drive"]["hand"] == {"drive": {"kind": "pd", "slew_rad_s": 5.0, "track_test": False}}
    assert saved["task"]["hand_pose"] == {"actions": {"out_of_range": "raise"}, "goal_mode": "mixed"}
    assert "drive.hand.drive is now drive.hand.drive.kind" in notes and len(notes) == 4


@pytest.mark.slow
def test_a_hand_run_saved_with_flat_keys_loads_and_evaluates_the_same(tmp_path):
    run = tmp_path / "run"
    train(compose_cfg("train", *short("g20_left"), "drive=pd", "action=delta"), run)
    before = evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))
    path = run / "config.yaml"
    saved = yaml.safe_load(path.read_text())
    values = {}
    emptied = {new.split(".")[2] for new in HAND_KEYS.values()}  # the sections the old keys moved into
    for old, new in HAND_KEYS.items():  # as a run saved before the hand sections holds its keys
        *parents, last = new.split(".")
        node = saved
        for part in parents:
            node = node[part]
        values[old] = node.pop(last)
    for section in (saved["drive"]["hand"], saved["action"]["hand"], saved["collision"]["hand"],
                    saved["composer"]["hand"], saved["task"]["hand_pose"]):  # fmt: skip
        for name in [k for k, v in section.items() if v == {} and k in emptied]:
            del section[name]
    for old, value in values.items():
        *parents, last = old.split(".")
        node = saved
        for part in parents:
            node = node[part]
        node[last] = value
    path.write_text(yaml.safe_dump(saved))
    assert saved["drive"]["hand"]["drive"] == "pd" and "actions" not in saved["action"]["hand"]
    cfg, warnings = load_run_config(run)
    assert cfg.drive.hand.drive.kind == "pd" and cfg.task.hand_pose.actions.delta_scale == 0.05
    assert sum("is now" in w for w in warnings) == len(HAND_KEYS) and not any("has no" in w for w in warnings)
    after = evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))
    assert after == before  # the same policy, the same env


def test_translate_saved_leaves_today_s_config_alone():
    today = {"task": {"name": "velocity", "family": "wheel_leg", "velocity": {"decimation": 4}}}
    assert translate_saved(today) == [] and today["task"]["velocity"] == {"decimation": 4}
