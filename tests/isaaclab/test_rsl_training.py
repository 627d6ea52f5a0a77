"""rsl_rl on Isaac Lab as a user runs it: ``scripts/train.py ... backend=isaaclab`` from the core venv trains,
checkpoints, resumes and exports; ``scripts/evaluate.py`` runs the run on both backends (sim-to-sim).

Each command is a subprocess in the core venv, which starts the Isaac Lab half itself (about 20-40 s each).
"""

import json
import math
import os
import re
import subprocess

import pytest

from dexwheel.isaaclab.cross_backend import MUJOCO_PYTHON, REPO

TINY = [
    "robot=solenopsis", "backend=isaaclab", "algo=rsl_ppo", "train.num_envs=4", "train.total_timesteps=256",
    "train.eval_every_steps=128", "train.eval_episodes=2", "train.checkpoint_every_steps=128",
    "task.velocity.episode_length_s=0.5", "algo.params.num_steps_per_env=32", "algo.params.num_learning_epochs=1",
]  # fmt: skip


def run(script: str, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(MUJOCO_PYTHON), str(REPO / "scripts" / script), *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env=env)  # fmt: skip
    if check:
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done


@pytest.fixture(scope="module")
def trained(tmp_path_factory, isaac_device):
    run_dir = tmp_path_factory.mktemp("isaac_run")
    first = run("train.py", *TINY, f"train.device={isaac_device}", f"hydra.run.dir={run_dir}")
    return run_dir, first


def test_an_isaaclab_run_trains_evaluates_and_checkpoints(trained):
    run_dir, _ = trained
    names = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert names == ["best.pt", "final.pt", "step_128.pt", "step_256.pt"]
    history = json.loads((run_dir / "eval_history.json").read_text())
    assert [int(h["timesteps"]) for h in history] == [128, 256, 256]
    assert all(h["episodes"] == 2 and h["length"] == 25 and h["fall"] == 0 for h in history)  # 0.5 s at 50 Hz
    log = (run_dir / "train.log").read_text()
    assert "backend=isaaclab" in log.splitlines()[0] and log.count(" - eval step=") == 3 and " - done step=256" in log
    assert " launch_s=" in log.splitlines()[0] and re.search(r" - done step=256 wall_s=\S+ command_s=", log)
    events = list((run_dir / "tb").rglob("events.out.tfevents*"))
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags = EventAccumulator(str(events[0])).Reload().Tags()["scalars"]
    assert "Loss/symmetry" in tags and "Perf/total_fps" in tags  # mirrored batches, as on MuJoCo (the default)


def test_it_resumes_and_refuses_another_learner(trained, tmp_path):
    run_dir, _ = trained
    config = (run_dir / "config.yaml").read_text()
    refused = run("train.py", "train.total_timesteps=384", "train.num_envs=2", "train.eval_episodes=5",
                  f"train.resume={run_dir}", check=False)  # fmt: skip
    assert refused.returncode == 2 and refused.stderr.strip().splitlines()[-1].startswith(
        "error: train.eval_episodes: 5 evaluation episodes run on the Isaac Lab training envs; train.num_envs is 2"
    )
    assert (run_dir / "config.yaml").read_text() == config  # refused before Isaac Lab started: the run as it was
    run("train.py", *TINY, "train.total_timesteps=384", f"train.resume={run_dir}")
    assert (run_dir / "checkpoints" / "step_384.pt").exists()
    history = json.loads((run_dir / "eval_history.json").read_text())
    assert int(history[-1]["timesteps"]) == 384
    assert "total_timesteps: 384" in (run_dir / "config.yaml").read_text()  # written by the Isaac Lab child
    sb3 = [a for a in TINY if not a.startswith("algo")] + ["algo=ppo", f"hydra.run.dir={tmp_path / 'sb3'}"]
    refused = run("train.py", *sb3, check=False)
    assert refused.returncode == 2 and "backend=isaaclab trains with algo=rsl_ppo" in refused.stderr
    assert not (tmp_path / "sb3").exists()


def test_a_fresh_launch_that_fails_in_isaac_lab_leaves_no_folder(tmp_path):
    """A config whose settled stance is not in the committed table is computed in the core venv; without it the
    Isaac Lab child fails after its start. The folder goes again (no config.yaml, no empty train.log), so the
    retry is no "resume" of a run that never started."""
    args = [*TINY, "action.wheel_leg.knee_kp=81.0", f"hydra.run.dir={tmp_path / 'run'}"]
    env = {**os.environ, "DEXWHEEL_MUJOCO_PYTHON": str(tmp_path / "no_python")}
    failed = run("train.py", *args, check=False, env=env)
    assert failed.returncode != 0 and "the settled stance of this config" in failed.stdout + failed.stderr
    assert not (tmp_path / "run").exists()


def test_the_run_exports_and_evaluates_on_both_backends(trained):
    run_dir, _ = trained
    run("export.py", f"run={run_dir}", "checkpoint=final", "overwrite=true")
    onnx = run_dir / "export" / "policy.onnx"
    results = {}
    for backend in ("isaaclab", "mujoco"):
        for policy in ("trained", "onnx"):
            args = [f"run={run_dir}", "episodes=2", f"backend={backend}", f"policy={policy}", "overwrite=true",
                    "checkpoint=final" if policy == "trained" else f"onnx={onnx}"]  # fmt: skip
            run("evaluate.py", *args)
            name = f"{policy}_final_solenopsis{'_isaaclab' if backend == 'isaaclab' else ''}_seed20000_ep2.json"
            record = json.loads((run_dir / "eval" / name).read_text())
            assert record["backend"] == backend
            results[backend, policy] = record["results"]["solenopsis"]
    for backend in ("isaaclab", "mujoco"):  # the export is the checkpoint's policy, on either backend
        a, b = results[backend, "trained"], results[backend, "onnx"]
        assert a["lin_vel_x_error"] == pytest.approx(b["lin_vel_x_error"], abs=1e-4), backend
        assert a["episodes"] == b["episodes"] == 2


def test_the_run_takes_the_step_benchmark_on_isaaclab(trained):
    """Its checkpoint (a blind flat-task policy) on the step benchmark's scene on Isaac Lab, as on MuJoCo
    (tests/isaaclab/test_step_benchmark.py has the protocol's outcomes)."""
    run_dir, _ = trained
    run("evaluate.py", f"run={run_dir}", "checkpoint=final", "benchmark=steps", "backend=isaaclab", "steps.trials=1",
        "steps.heights=[0.05]", "steps.directions=[up]", "steps.stairs=false", "steps.time_limit_s=0.2")  # fmt: skip
    [path] = (run_dir / "eval").glob("steps_trained_final_solenopsis_isaaclab_seed20000_tr1_steps.heights-0.05*.json")
    record = json.loads(path.read_text())  # (the name ends with the protocol's changes: eval_job.eval_name)
    assert record["backend"] == "isaaclab" and record["checkpoint"].endswith("final.pt")
    result = record["results"]["solenopsis"]
    [row] = result["rows"]
    assert (row["scene"], row["height"], row["direction"], row["trials"]) == ("step", 0.05, "up", 1)
    assert result["outcomes"]["step 0.050 up"] in ("T", "F") and row["successes"] == 0  # 2.5 m to go in 0.2 s


def test_the_evaluation_child_plays_only_the_export_the_parent_checked(trained, tmp_path):
    """The Isaac Lab child loads the export again, its digest checked: files swapped after the parent's check
    (another export's model, or another export's pair) are refused, never played under the first one's name."""
    import shutil
    from types import SimpleNamespace

    import torch

    from dexwheel.isaaclab.evaluate import job_policy
    from dexwheel.rl.export import ExportedPolicy
    from dexwheel.rl.rsl.cfg import POLICY_GROUP
    from dexwheel.rl.schema import ConfigError

    run_dir, _ = trained
    run("export.py", f"run={run_dir}", f"out={tmp_path / 'a.onnx'}")
    run(
        "export.py",
        f"run={run_dir}",
        f"checkpoint={run_dir / 'checkpoints' / 'step_128.pt'}",
        f"out={tmp_path / 'b.onnx'}",
    )
    checked = ExportedPolicy.load(tmp_path / "a.onnx")  # what the parent checked and put in the job
    obs = {POLICY_GROUP: torch.zeros(3, checked.obs_size)}
    venv = SimpleNamespace(get_observations=lambda: obs)
    job = {"policy": "onnx", "onnx": str(checked.path), "metadata": checked.metadata}
    assert job_policy(job, None, venv, "cpu")(obs).shape == (3, len(checked.metadata["action"]["clip"][0]))
    shutil.copy(tmp_path / "b.onnx", tmp_path / "a.onnx")  # another export's model under a's metadata
    with pytest.raises(ConfigError, match="onnx.sha256 differs"):
        job_policy(job, None, venv, "cpu")
    shutil.copy(tmp_path / "b.json", tmp_path / "a.json")  # now a consistent pair, but not the one checked
    with pytest.raises(ConfigError, match="a.json changed since the evaluation started"):
        job_policy(job, None, venv, "cpu")


#: the G20 on Isaac Lab as a user trains it (issue 57), tiny: one PPO iteration of 4 x 32 steps, then the final
#: evaluation's 2 episodes of 20 steps on the training envs (a reset outside the rollout's inference mode)
G20_TINY = [
    "robot=g20_left", "backend=isaaclab", "algo=rsl_ppo", "train.num_envs=4", "train.total_timesteps=128",
    "train.eval_every_steps=128", "train.eval_episodes=2", "train.checkpoint_every_steps=128",
    "task.hand_pose.max_episode_steps=20", "algo.params.num_steps_per_env=32", "algo.params.num_learning_epochs=1",
]  # fmt: skip


@pytest.mark.parametrize(
    "selection",
    [["drive=pd", "composer=hold_thumb"], ["drive=hard_write", "action=sdk255", "collision=off"]],
    ids=["pd_hold_thumb", "hard_write_sdk255_no_projection"],
)
def test_a_g20_run_trains_and_evaluates_on_isaaclab(selection, tmp_path, isaac_device):
    """Each drive: the run ended in ``RuntimeError: Inplace update to inference tensor outside InferenceMode`` from
    the hand action term's reset, at the first evaluation after a rollout (issue 57)."""
    run_dir = tmp_path / "run"
    done = run("train.py", *G20_TINY, *selection, f"train.device={isaac_device}", f"hydra.run.dir={run_dir}")
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["best.pt", "final.pt", "step_128.pt"]
    history = json.loads((run_dir / "eval_history.json").read_text())
    assert [(int(h["timesteps"]), h["episodes"], h["length"]) for h in history] == [(128, 2, 20), (128, 2, 20)]
    log = (run_dir / "train.log").read_text()
    assert " - done step=128 " in log and " - failed" not in log
    # the core venv's python as the user types it from the repository (python where that venv is active)
    assert re.fullmatch(rf"evaluate it: (python|\.venv/bin/python) scripts/evaluate\.py run={re.escape(str(run_dir))}",
                        done.stdout.splitlines()[-1])  # fmt: skip


#: an object task on Isaac Lab as a user trains it (issue 58), tiny: one PPO iteration of 4 x 32 steps, the final
#: evaluation's 2 episodes of 0.5 s (10 steps), then the rotation benchmark of the run on Isaac Lab, 2 short trials
ROTATE_TINY = [
    "robot=g20_left", "task=in_hand_rotate", "backend=isaaclab", "algo=rsl_ppo", "train.num_envs=4",
    "train.total_timesteps=128", "train.eval_every_steps=128", "train.eval_episodes=2",
    "train.checkpoint_every_steps=128", "task.in_hand_rotate.episode_length_s=0.5", "algo.params.num_steps_per_env=32",
    "algo.params.num_learning_epochs=1",
]  # fmt: skip


def test_a_rotation_run_trains_on_isaaclab_and_takes_the_rotation_benchmark_there(tmp_path, isaac_device):
    run_dir = tmp_path / "run"
    run("train.py", *ROTATE_TINY, f"train.device={isaac_device}", f"hydra.run.dir={run_dir}")
    history = json.loads((run_dir / "eval_history.json").read_text())
    assert [(int(h["timesteps"]), h["episodes"], h["length"]) for h in history] == [(128, 2, 10), (128, 2, 10)]
    assert all("rotation_angle" in h and "drop" in h for h in history)
    out = tmp_path / "bench.json"
    run("evaluate.py", f"run={run_dir}", "benchmark=rotation", "backend=isaaclab", f"train.device={isaac_device}",
        "in_hand.trials=2", "in_hand.seconds=0.5", "in_hand.objects=[{shape: cube, size: 0.06, mass: 0.1}, "
        "{shape: cube, size: 0.05, mass: 0.1}]", f"out={out}")  # fmt: skip
    record = json.loads(out.read_text())
    assert record["backend"] == "isaaclab" and record["benchmark"] == "rotation"
    rows = record["results"]["g20_left"]["rows"]
    assert [r["object"] for r in rows] == ["cube 60 mm 100 g", "cube 50 mm 100 g"] and all(
        r["trials"] == 2 for r in rows
    )
    assert all(math.isfinite(r["rate_mean"]) and 0.0 <= r["drop_rate"] <= 1.0 for r in rows)
    assert out.with_suffix(".png").exists()
    # the Isaac Lab run scored on MuJoCo (the GPU recipe's last command, sim-to-sim the other way)
    back = tmp_path / "mujoco.json"
    run("evaluate.py", f"run={run_dir}", "benchmark=rotation", "in_hand.trials=2", "in_hand.seconds=0.5",
        "in_hand.objects=[{shape: cube, size: 0.06, mass: 0.1}]", f"out={back}")  # fmt: skip
    (row,) = json.loads(back.read_text())["results"]["g20_left"]["rows"]
    assert row["trials"] == 2 and math.isfinite(row["rate_mean"])
