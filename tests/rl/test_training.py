"""Short training runs and evaluations on every robot; resume; interrupted runs; Hydra launchers."""

import contextlib
import json
import os
import subprocess
import sys

import pytest
from cfgutil import CONFIGS, ROOT, SHORT, SHORT_ALGO, SHORT_EPISODES, compose_cfg, short  # noqa: F401

from dexwheel.cli import script_command
from dexwheel.rl.checkpoints import CheckpointError, step_checkpoints
from dexwheel.rl.eval_job import evaluate
from dexwheel.rl.training import train

# every test here trains, or runs a script on a trained run: more than a second each, out of `make test-fast`
pytestmark = pytest.mark.slow

RUNS = [("g20_left", "ppo"), ("g20_right", "ppo"), ("solenopsis", "ppo"), ("m20_legacy", "ppo"),
        ("g20_left", "rsl_ppo"), ("solenopsis", "rsl_ppo")]  # fmt: skip


@pytest.mark.parametrize(("robot", "algo"), RUNS)
def test_a_short_run_trains_checkpoints_and_evaluates(robot, algo, tmp_path):
    cfg = compose_cfg("train", *short(robot, algo=algo))
    summary = train(cfg, tmp_path)
    assert summary["timesteps"] >= 2048
    for name in ("config.yaml", "learning_curve.png", "eval_history.json", "final_eval.json"):
        assert (tmp_path / name).stat().st_size > 0, name
    if algo == "ppo":
        assert (tmp_path / "checkpoints" / "final.zip").exists()
        assert (tmp_path / "checkpoints" / "final.vecnormalize.pkl").exists()
    else:  # the normaliser is inside the models
        assert {p.name for p in (tmp_path / "checkpoints").iterdir()} == {
            "best.pt",
            "final.pt",
            "step_1024.pt",
            "step_2048.pt",
        }
    assert list((tmp_path / "tb").rglob("events.out.tfevents*"))
    history = json.loads((tmp_path / "eval_history.json").read_text())
    assert [h["timesteps"] for h in history] == sorted(h["timesteps"] for h in history)

    ecfg = compose_cfg("evaluate", f"run={tmp_path}", "episodes=2")  # the run's own (short) config
    results = evaluate(ecfg)
    assert set(results) == {robot}
    metric = "mean_joint_error" if robot.startswith("g20") else "lin_vel_x_error"
    assert results[robot][metric] >= 0.0 and results[robot]["episodes"] == 2
    saved = json.loads((tmp_path / "eval" / f"trained_final_{robot}_seed20000_ep2.json").read_text())
    assert saved["results"][robot][metric] == pytest.approx(results[robot][metric])


@pytest.mark.parametrize("algo", ["ppo", "rsl_ppo"])
def test_resume_continues_the_step_count(algo, tmp_path):
    cfg = compose_cfg("train", *short("solenopsis", algo=algo))
    train(cfg, tmp_path)
    first = [int(p.stem.split("_")[1]) for p in step_checkpoints(tmp_path)]
    more = compose_cfg(
        "train", *short("solenopsis", "train.total_timesteps=4096", f"train.resume={tmp_path}", algo=algo)
    )
    summary = train(more, tmp_path / "ignored")
    later = [int(p.stem.split("_")[1]) for p in step_checkpoints(tmp_path)]
    assert summary["timesteps"] >= 4096
    assert max(later) > max(first) >= 2048


def test_resume_from_a_missing_or_corrupted_run_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        train(compose_cfg("train", *short("solenopsis", f"train.resume={tmp_path / 'nope'}")), tmp_path)
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "step_1024.zip").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(CheckpointError, match="step_1024.zip"):
        train(compose_cfg("train", *short("solenopsis", f"train.resume={run}")), tmp_path)
    (run / "checkpoints" / "step_2048.pt").write_bytes(b"\x80\x02 truncated")  # the newest: the one resumed
    with pytest.raises(CheckpointError, match="step_2048.pt is corrupted or not an rsl_rl checkpoint"):
        train(compose_cfg("train", *short("solenopsis", f"train.resume={run}", algo="rsl_ppo")), tmp_path)


def test_cross_robot_evaluation_prints_both_robots(tmp_path, capsys):
    train(compose_cfg("train", *short("m20_legacy")), tmp_path)
    results = evaluate(compose_cfg("evaluate", f"run={tmp_path}", "episodes=1", "robots=[m20_legacy,solenopsis]"))
    assert list(results) == ["m20_legacy", "solenopsis"]
    table = capsys.readouterr().out
    assert "m20_legacy" in table and "solenopsis" in table and "lin_vel_x_error" in table


def test_baseline_policies_and_video(tmp_path):
    out = tmp_path / "random.json"
    cfg = compose_cfg("evaluate", "robot=g20_left", "policy=random", "episodes=1", "video=true",
                      "task.hand_pose.max_episode_steps=20", f"out={out}")  # fmt: skip
    os.chdir(tmp_path)
    results = evaluate(cfg)
    assert results["g20_left"]["episodes"] == 1
    video = tmp_path / "random_g20_left.mp4"  # videos sit next to their evaluation's JSON
    assert video.stat().st_size > 1000
    assert json.loads(out.read_text())["policy"] == "random"


def test_submitit_local_multirun_runs_each_seed(tmp_path):
    sweep = tmp_path / "multirun"
    cmd = [sys.executable, str(ROOT / "scripts" / "train.py"), "-m", "hydra/launcher=submitit_local_dexwheel",
           "seed=0,1", f"hydra.sweep.dir={sweep}", *short("solenopsis", "train.total_timesteps=512",
           "train.eval_every_steps=512", "train.checkpoint_every_steps=512")]  # fmt: skip
    subprocess.run(cmd, check=True, cwd=tmp_path, timeout=600, capture_output=True)
    finals = sorted(sweep.rglob("final_eval.json"))
    assert len(finals) == 2
    configs = sorted(p.read_text() for p in sweep.rglob("config.yaml") if p.parent.name != ".hydra")
    assert any("seed: 0" in c for c in configs) and any("seed: 1" in c for c in configs)


@pytest.mark.parametrize("algo", ["ppo", "rsl_ppo"])
def test_ctrl_c_saves_a_checkpoint_before_exiting(algo, tmp_path):
    import signal
    import time

    run = tmp_path / "run"
    cmd = [sys.executable, str(ROOT / "scripts" / "train.py"), f"hydra.run.dir={run}",
           *short("solenopsis", "train.total_timesteps=10000000", "train.eval_every_steps=10000000",
                  "train.checkpoint_every_steps=10000000", algo=algo)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    while not list((run / "tb").rglob("events.out.tfevents*")) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(3.0)  # let it learn a little
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out
    saved = [p for p in (run / "checkpoints").glob("step_*") if p.suffix in (".pt", ".zip")]
    assert len(saved) == 1 and saved[0].suffix == (".pt" if algo == "rsl_ppo" else ".zip")
    with contextlib.chdir(tmp_path):  # where it ran: the command as the user there types it
        resume = f"{script_command('train.py')} train.resume=run"
    assert f"interrupted: saved run/checkpoints/{saved[0].name}; resume with: {resume}" in out
    assert int(saved[0].stem.split("_")[1]) > 0
    # evaluated with the defaults, it names what the run holds and the option that picks it (issue 68)
    evaluate_py = [sys.executable, str(ROOT / "scripts" / "evaluate.py"), "run=run", "episodes=1"]
    done = subprocess.run(evaluate_py, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    final = f"final{saved[0].suffix}"
    assert (done.returncode, done.stderr) == (2, f"error: checkpoint=final: run/checkpoints/{final} does not exist (an "
                                                 f"interrupted or unfinished run); run/checkpoints holds {saved[0].name}: "
                                                 f"pick one with checkpoint=latest ({saved[0].name}) or "
                                                 "checkpoint=<one of them>\n")  # fmt: skip
    done = subprocess.run(
        [*evaluate_py, "checkpoint=latest"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr


def test_a_run_off_a_terminal_logs_a_line_per_evaluation_to_train_log(tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, str(ROOT / "scripts" / "train.py"), f"hydra.run.dir={run}", "train.progress_bar=true",
           *short("solenopsis", "train.total_timesteps=512", "train.eval_every_steps=256",
                  "train.checkpoint_every_steps=512")]  # fmt: skip
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=True)
    lines = (run / "train.log").read_text().splitlines()
    assert "start robot=solenopsis algo=ppo seed=0 total_timesteps=512" in lines[0] and "num_envs=4" in lines[0]
    evals = [dict(f.split("=", 1) for f in line.split(" - eval ")[1].split()) for line in lines if " - eval " in line]
    history = json.loads((run / "eval_history.json").read_text())
    assert len(evals) == len(history) >= 3  # at 256, at 512 and the final one
    assert [int(e["step"]) for e in evals] == [int(h["timesteps"]) for h in history] == [256, 512, 512]
    assert [float(e["elapsed_s"]) for e in evals] == sorted(float(e["elapsed_s"]) for e in evals)
    for e, h in zip(evals, history, strict=True):
        assert float(e["env_steps_per_s"]) > 0
        assert float(e["return"]) == pytest.approx(h["return"], rel=1e-3, abs=1e-3)
        assert {"lin_vel_x_error", "ang_vel_z_error", "fall", "episodes"} <= e.keys()
    assert "done step=512" in lines[-1] and f"checkpoints={run / 'checkpoints'}" in lines[-1]
    # the command's wall time: its launch (imports, config, envs, learner) before the start line, then the run
    start, end = (dict(f.split("=", 1) for f in line.split() if "_s=" in f) for line in (lines[0], lines[-1]))
    assert float(start["launch_s"]) > 0
    assert float(end["command_s"]) == pytest.approx(float(start["launch_s"]) + float(end["wall_s"]), abs=0.15)
    assert done.stdout.count(" - eval step=") == len(evals)  # no progress bar off a terminal: the lines print
