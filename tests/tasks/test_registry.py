"""The task registry (dexwheel/tasks/registry.py): every built-in record is whole and everything listed derives from
it; a record missing a piece is refused naming it; a user registers a task from their own package and every script
takes it by name."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import gymnasium as gym
import pytest
from cfgutil import ROOT

from dexwheel import golden
from dexwheel.tasks.registry import TaskRecord, TaskRegistryError, register_task, resolve, task_record, tasks
from dexwheel.tasks.runtime import TaskRuntime

BUILT_IN = ("hand_pose", "in_hand_rotate", "in_hand_reorient", "velocity", "velocity_rough")


def test_every_built_in_task_is_registered_whole():
    assert set(BUILT_IN) <= set(tasks())
    for name in BUILT_IN:
        r = task_record(name)
        assert issubclass(resolve(r.task_class), TaskRuntime), name
        resolve(r.metrics)()  # the evaluation's metrics
        for robot, env_id in r.envs.items():
            spec = gym.spec(env_id)  # registered from the record, with its faces
            assert (spec.entry_point, spec.vector_entry_point) == (r.env, r.vector_env), env_id
            cfg = r.default_config(robot)
            env = gym.make(env_id, robot=robot)
            try:  # the id builds the record's config for the robot
                assert env.unwrapped.cfg == resolve(r.make_config)(cfg), (name, robot)
            finally:
                env.close()
        assert {c.name for c in golden.CASES if c.env_id in r.envs.values()} == {c.name for c in r.golden}


def test_a_record_missing_a_piece_is_refused_at_registration_naming_it():
    base = dataclasses.replace(task_record("in_hand_rotate"), name="probe", envs={"g20_left": "Probe-v0"}, golden=(),
                               isaaclab={})  # fmt: skip
    cases = [
        ({"metrics": ""}, "task 'probe': metrics must be a 'package.module:attribute' path, got ''"),
        ({"envs": {}}, "task 'probe': no envs; give envs={robot: gym id} for the robots it runs on"),
        ({"family": "legs"}, "task 'probe': family 'legs'; choose one of ['hand', 'wheel_leg']"),
        ({"protocol": "fly"}, "task 'probe': protocol 'fly'; choose one of ['steps', 'rotation', 'reorient'] or None"),
        ({"config": "nopkg_here.tasks:cfg"}, "task 'probe': config='nopkg_here.tasks:cfg': no module 'nopkg_here.tasks'"),
        ({"isaaclab": {"g20_left": "Probe-IL-v0"}, "isaaclab_cfg": None}, "isaaclab ids given without isaaclab_cfg"),
        ({"name": "in_hand_rotate"}, "task 'in_hand_rotate' is registered already"),
        ({"envs": {"g20_left": "G20Hand-v0"}}, "task 'probe': Gymnasium ids ['G20Hand-v0'] are already task hand_pose's"),
    ]  # fmt: skip
    for changes, message in cases:
        with pytest.raises(TaskRegistryError) as e:
            register_task(dataclasses.replace(base, **changes))
        assert message in str(e.value) and "\n" not in str(e.value), changes
    assert "probe" not in tasks()
    with pytest.raises(TaskRegistryError, match=r"^task 'nope': no such task; tasks: \["):
        task_record("nope")
    with pytest.raises(TypeError, match="train"):  # a required field has no default: named by Python
        TaskRecord(name="x", family="hand", summary="", envs={"g20_left": "X-v0"}, config="a:b", task_class="a:b",
                   make_config="a:b", env="a:b", vector_env="a:b", metrics="a:b")  # type: ignore[call-arg]  # fmt: skip


def user_tasks_module() -> str:
    """The user's module as docs/how-to/add-a-task.md shows it (the block after its ``# mypkg/tasks.py`` line)."""
    text = (ROOT / "docs" / "how-to" / "add-a-task.md").read_text()
    block = text.split("# mypkg/tasks.py", 1)[1].split("\n", 1)[1]
    return block.split("```", 1)[0]


TINY = ["algo=rsl_ppo", "train.total_timesteps=256", "train.num_envs=4", "train.eval_every_steps=256",
        "train.eval_episodes=1", "train.checkpoint_every_steps=256", "train.progress_bar=false",
        "algo.params.num_steps_per_env=32", "algo.params.num_learning_epochs=1",
        "task.in_hand_rotate_cw.episode_length_s=1.0"]  # fmt: skip


@pytest.mark.slow
def test_a_user_registers_a_task_from_their_own_package_and_every_script_takes_it_by_name(tmp_path):
    """A variant is a config function and a registry record, in the user's package (no edit of dexwheel): train,
    evaluate on its protocol, export, on its own id (issue 69)."""
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "tasks.py").write_text(user_tasks_module())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"DEXWHEEL_TASKS": "mypkg.tasks"}

    def script(name, *args):
        done = subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return done

    script("train.py", "robot=g20_left", "task=in_hand_rotate_cw", "hydra.run.dir=run", *TINY)
    saved = (tmp_path / "run" / "config.yaml").read_text()
    assert "name: in_hand_rotate_cw" in saved and "- -1.0" in saved  # its own config, its axis
    done = script("evaluate.py", "run=run", "benchmark=rotation", "in_hand.trials=1", "in_hand.seconds=0.5",
                  "in_hand.objects=[{shape: cube, size: 0.06, mass: 0.1}]")  # fmt: skip
    assert "rotation benchmark: g20_left" in done.stdout
    script("export.py", "run=run")
    assert (tmp_path / "run" / "export" / "policy.onnx").is_file()
    probe = ("import dexwheel, gymnasium as gym, mypkg.tasks\n"
             "env = gym.make('MyRotateCW-v0'); print(env.unwrapped.cfg.commands.axis)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "(0.0, 0.0, -1.0)", done.stderr[-2000:]
    bad = subprocess.run([sys.executable, str(ROOT / "scripts" / "train.py"), "robot=g20_left"], cwd=tmp_path,
                         env={**env, "DEXWHEEL_TASKS": "mypkg.nothere"}, capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.startswith(
        "error: DEXWHEEL_TASKS=mypkg.nothere: mypkg.nothere: No module"
    )
