"""The step benchmark on MuJoCo (dexwheel/rl/step_benchmark.py) and as scripts/evaluate.py's benchmark=steps."""

import contextlib
import json
import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from cfgutil import compose_cfg, short

from dexwheel.protocols import steps
from dexwheel.rl import isaaclab_launch, step_benchmark
from dexwheel.rl import progress as progress_lines
from dexwheel.rl.eval_job import evaluate
from dexwheel.rl.schema import ConfigError
from dexwheel.rl.step_benchmark import benchmark_env_kwargs, run_step_benchmark
from dexwheel.rl.training import train
from dexwheel.terrain import height_at

#: two heights up, two trials each, 4 s: a tiny run
TINY = steps.make_cfg({"heights": [0.05, 0.15], "directions": ["up"], "trials": 2, "stairs": False,
                       "time_limit_s": 4.0})  # fmt: skip


def _constant(wheels: float):
    """Knees at the stance, every wheel at ``wheels`` (negative rolls forward)."""

    def policy_for(env):
        action = np.zeros(env.action_space.shape, np.float32)
        action[4:] = wheels
        return lambda obs: action

    return policy_for


def _run(env_id: str, policy_for, bench=TINY):
    return run_step_benchmark(lambda desc: gym.make(env_id, terrain=desc, **benchmark_env_kwargs(bench)), policy_for,
                              bench)  # fmt: skip


def test_a_trial_starts_on_the_scenes_ground_at_its_pose():
    scene = steps.step_scene(0.2)
    env = gym.make("Solenopsis-Rough-v0", terrain=scene.description, **benchmark_env_kwargs(TINY))
    try:
        task = env.unwrapped.task
        plain = env.reset(seed=5)[0]  # no start pose: the scene's origin, the up trials' start
        assert np.allclose(task.physics.qpos[0, :2], (-1.5, 0.0))
        knees = task.physics.qpos[0, task.knee_qadr].copy()
        for spec in (next(steps.trials(scene, "up", TINY)), next(steps.trials(scene, "down", TINY))):
            spec = spec.__class__(**{**spec.__dict__, "reset_seed": 5})
            obs, info = env.reset(seed=5, options={"base_pose": (spec.x, spec.y, spec.yaw), "command": spec.command})
            q = task.physics.qpos[0]
            ground = height_at(scene.description, q[0], q[1])
            assert (q[0], q[1]) == (spec.x, spec.y) and ground == pytest.approx(0.0 if spec.sign > 0 else 0.2)
            assert 0.2 < q[2] - ground < 0.4
            assert np.array_equal(q[task.knee_qadr], knees)  # the reset's own draws, unchanged
            assert np.arctan2(2 * q[3] * q[6], 1 - 2 * q[6] ** 2) == pytest.approx(spec.yaw)
            assert info["command_lin_vel_x"] == 0.5 and task.commands[0, 0] == 0.5
            scan = obs[env.unwrapped.obs_slices["height_scan"]].reshape(11, 7)
            assert np.ptp(scan) < 0.01  # 1.5 m from the edge the scan (+-0.5 m) sees flat ground
            assert np.allclose(scan.ravel(), plain[env.unwrapped.obs_slices["height_scan"]], atol=0.01)
            for _ in range(25):  # it stands there
                *_, terminated, truncated, _ = env.step(np.zeros(8, np.float32))
            assert not terminated and abs(task.physics.qpos[0, 0] - spec.x) < 0.05
        obs, _ = env.reset(seed=5, options={"base_pose": (-0.3, 0.0, 0.0)})  # just before the edge, facing it
        scan = obs[env.unwrapped.obs_slices["height_scan"]].reshape(11, 7)  # rows from 0.5 m behind to 0.5 m ahead
        assert np.allclose(scan[-1] - scan[0], -0.2, atol=0.01)  # the step ahead: 0.2 m less clearance
        with pytest.raises(ValueError, match=r"options\['base_pose'\] must be 3 finite numbers"):
            env.reset(options={"base_pose": (0.0, 0.0)})
    finally:
        env.close()


def test_a_tiny_run_with_baseline_policies_gives_its_table():
    zero = _run("Solenopsis-Rough-v0", _constant(0.0))
    assert [(r["height"], r["successes"], r["falls"], r["timeouts"]) for r in zero["rows"]] == [
        (0.05, 0, 0, 2), (0.15, 0, 0, 2)]  # fmt: skip
    assert zero["outcomes"] == {"step 0.050 up": "TT", "step 0.150 up": "TT"}
    # wheels forward at half speed: momentum takes it up 0.05 m; a 0.15 m step (1.5 wheel radii) stops it, and
    # it tips over trying
    drive = _run("Solenopsis-Rough-v0", _constant(-0.5))
    assert drive["outcomes"]["step 0.050 up"] == "SS"
    assert drive["rows"][1]["successes"] == 0 and drive["rows"][1]["falls"] >= 1
    first = drive["rows"][0]
    assert first["success_rate"] == 1.0 and 1.5 < first["mean_success_time_s"] < 3.0
    # the flat task's env (blind) on the same scenes: its policies are scored the same way
    blind = _run("Solenopsis-v0", _constant(-0.5))
    assert blind["outcomes"]["step 0.050 up"] == "SS"


def test_the_video_records_each_directions_first_trial(monkeypatch):
    """``video=true``: one climb and one descent per scene, the first trial of each direction (the frames of no
    other trial)."""
    frames = []

    @contextlib.contextmanager
    def writer(path, fps):
        yield frames.append

    class Tagged(gym.Wrapper):  # each frame is the number of the reset before it
        resets = 0

        def reset(self, **kwargs):
            Tagged.resets += 1
            return self.env.reset(**kwargs)

        def render(self):
            return Tagged.resets

    monkeypatch.setattr(step_benchmark, "video_writer", writer)
    bench = steps.make_cfg({"heights": [0.05], "trials": 2, "stairs": False, "time_limit_s": 1.0})
    make = lambda desc: Tagged(gym.make("Solenopsis-Rough-v0", terrain=desc, **benchmark_env_kwargs(bench)))  # noqa: E731
    result = run_step_benchmark(make, _constant(0.0), bench, video_path=Path("unused.mp4"))
    assert result["outcomes"] == {"step 0.050 up": "TT", "step 0.050 down": "TT"}
    assert sorted(set(frames)) == [1, 3]  # up trial 0, then down trial 0 (trials: up 0, up 1, down 0, down 1)
    assert frames.count(1) == frames.count(3) == 50  # each a whole trial (1 s at 50 Hz)


@pytest.mark.slow
def test_evaluate_runs_the_benchmark_writes_its_json_and_refuses_a_bad_height(tmp_path, capsys):
    os.chdir(tmp_path)
    tiny = ["benchmark=steps", "steps.trials=1", "steps.heights=[0.05]", "steps.stairs=false", "steps.time_limit_s=1.0"]
    cfg = compose_cfg("evaluate", "robot=solenopsis", "task=velocity_rough", "policy=zero", *tiny)
    results = evaluate(cfg)
    assert [r["direction"] for r in results["solenopsis"]["rows"]] == ["up", "down"]
    out = capsys.readouterr().out
    assert "step benchmark: solenopsis" in out and "timeouts" in out
    # a log's progress lines say what their letters mean (issue 57)
    assert "step benchmark: 2 trials; per scene and direction one letter a trial, in order: S success, F fall, " \
           "T timeout\nstep benchmark: step 0.050 up: T\n" in out  # fmt: skip
    path = tmp_path / "outputs" / "eval" / "steps_zero_solenopsis_seed20000_tr1.json"
    saved = json.loads(path.read_text())
    assert saved["benchmark"] == "steps" and saved["protocol"]["heights"] == [0.05]
    assert saved["protocol"]["reset_seed"] == 20000 and "episodes" not in saved
    assert saved["results"] == json.loads(json.dumps(results))
    plot = path.with_suffix(".png")  # its plot beside it, named with it
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"plot: {plot.relative_to(tmp_path)}" in out
    evaluate(cfg)  # a second evaluation keeps the first, and its plot
    assert (path.parent / "steps_zero_solenopsis_seed20000_tr1_2.json").exists()
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, plot.name, *(
        f"steps_zero_solenopsis_seed20000_tr1_2{ext}" for ext in (".json", ".png"))])  # fmt: skip
    plot.unlink()  # a plot alone takes the name too: the next evaluation goes to _3, never over a file
    plot.write_bytes(b"mine")
    path.unlink()
    evaluate(cfg)
    assert plot.read_bytes() == b"mine" and not path.exists()
    assert (path.parent / "steps_zero_solenopsis_seed20000_tr1_3.png").exists()
    with pytest.raises(ConfigError, match=r"^steps.heights: 1.5 m is outside the terrain's range: 0 < height <= 1 m$"):
        evaluate(compose_cfg("evaluate", "robot=solenopsis", "policy=zero", "benchmark=steps", "steps.heights=[1.5]"))
    with pytest.raises(ConfigError, match=r"^benchmark=steps: it scores task=velocity\|velocity_rough policies, not "
                                          r"task=hand_pose$"):  # fmt: skip
        evaluate(compose_cfg("evaluate", "robot=g20_left", "policy=zero", "benchmark=steps"))


@pytest.mark.slow
def test_evaluate_scores_the_climbing_gait_and_refuses_it_where_it_cannot_run(tmp_path):
    """``policy=climbing``: the scripted gait (privileged: the terrain under each wheel) as a baseline on the
    benchmark, on the rough task's MuJoCo env only."""
    os.chdir(tmp_path)
    tiny = ["benchmark=steps", "steps.trials=2", "steps.heights=[0.15]", "steps.stairs=false", "steps.directions=[up]"]
    results = evaluate(compose_cfg("evaluate", "robot=solenopsis", "task=velocity_rough", "policy=climbing", *tiny))
    assert results["solenopsis"]["outcomes"] == {
        "step 0.150 up": "SS"
    }  # 1.5 wheel radii: tests/tasks/velocity/test_teacher.py
    assert (tmp_path / "outputs" / "eval" / "steps_climbing_solenopsis_seed20000_tr2.json").exists()
    with pytest.raises(
        ConfigError, match=r"^policy=climbing: ClimbingTeacher reads the terrain, and this task has none"
    ):
        evaluate(
            compose_cfg("evaluate", "robot=solenopsis", "policy=climbing", "episodes=1")
        )  # the flat task's episodes
    with pytest.raises(ConfigError, match=r"^policy=climbing: the climbing gait reads MuJoCo's terrain under each "
                                          r"wheel; it runs on backend=mujoco, not backend=isaaclab$"):  # fmt: skip
        evaluate(compose_cfg("evaluate", "robot=solenopsis", "task=velocity_rough", "policy=climbing", "backend=isaaclab",
                             *tiny))  # fmt: skip


@pytest.mark.slow
def test_evaluate_sends_the_benchmark_to_isaaclab(tmp_path, monkeypatch, capsys):
    """``backend=isaaclab`` is no longer refused: the Isaac Lab job carries the checked protocol, and its table comes
    back into the same table and JSON (``"backend": "isaaclab"``); bad input is refused before Isaac Lab starts."""
    os.chdir(tmp_path)
    jobs = []

    def isaac_child(module, path):  # the Isaac Lab venv's half (tests/isaaclab/test_step_benchmark.py runs it)
        job = json.loads(Path(path).read_text())
        jobs.append((module, job))
        bench = steps.make_cfg(job["steps"])
        outcomes = {(s.name, s.height, d): [("timeout", bench.time_limit_s)] * bench.trials
                    for s in steps.scenes(bench) for d in bench.directions}  # fmt: skip
        return {"rows": steps.summarize(outcomes), "outcomes": {f"{n} {h:.3f} {d}": "T" * bench.trials
                                                                for n, h, d in outcomes}}  # fmt: skip

    monkeypatch.setattr(isaaclab_launch, "run_child", isaac_child)
    tiny = ["benchmark=steps", "steps.trials=1", "steps.heights=[0.05]", "steps.stairs=false", "steps.time_limit_s=1.0"]
    cfg = compose_cfg("evaluate", "robot=solenopsis", "task=velocity_rough", "policy=zero", "backend=isaaclab", *tiny)
    results = evaluate(cfg)
    [(module, job)] = jobs
    assert module == "dexwheel.isaaclab.evaluate" and job["policy"] == "zero" and job["overrides"] == {}
    assert job["steps"]["heights"] == [0.05] and job["steps"]["reset_seed"] == 20000 and job["steps"]["trials"] == 1
    assert job["config"]["task"]["name"] == "velocity_rough" and job["device"] == "cpu"
    path = tmp_path / "outputs" / "eval" / "steps_zero_solenopsis_isaaclab_seed20000_tr1.json"
    saved = json.loads(path.read_text())
    assert saved["backend"] == "isaaclab" and saved["benchmark"] == "steps" and saved["protocol"] == job["steps"]
    assert saved["results"] == json.loads(json.dumps(results))
    assert results["solenopsis"]["outcomes"] == {"step 0.050 up": "T", "step 0.050 down": "T"}
    assert path.with_suffix(".png").stat().st_size > 0  # plotted from the Isaac Lab half's table
    assert "step benchmark: solenopsis" in capsys.readouterr().out
    with pytest.raises(ConfigError, match=r"^steps.heights: 1.5 m is outside the terrain's range: 0 < height <= 1 m$"):
        evaluate(compose_cfg("evaluate", "robot=solenopsis", "policy=zero", "benchmark=steps", "backend=isaaclab",
                             "steps.heights=[1.5]"))  # fmt: skip
    with pytest.raises(ConfigError, match=r"^env_overrides: \['domain_rand'\] are fixed by the step benchmark"):
        evaluate(compose_cfg("evaluate", "robot=solenopsis", "policy=zero", "backend=isaaclab", *tiny,
                             "+env_overrides.domain_rand.enabled=true"))  # fmt: skip
    assert len(jobs) == 1  # refused before the Isaac Lab half


@pytest.mark.slow
def test_a_short_rough_run_trains_evaluates_and_takes_the_benchmark(tmp_path, monkeypatch):
    """The documented rough run's pipeline, shortened: train (its progress lines carry the curriculum's level),
    evaluate, step benchmark on its checkpoint."""
    monkeypatch.setattr(progress_lines, "PROGRESS_EVERY_S", 0.0)  # a line after every iteration
    train(compose_cfg("train", *short("solenopsis", "task=velocity_rough", algo="rsl_ppo")), tmp_path)
    assert (tmp_path / "checkpoints" / "final.pt").exists()
    progress = [line for line in (tmp_path / "train.log").read_text().splitlines() if "] - progress step=" in line]
    assert progress and all("Curriculum/terrain_level=" in line and "mean_return=" in line for line in progress)
    results = evaluate(compose_cfg("evaluate", f"run={tmp_path}", "episodes=1"))
    assert results["solenopsis"]["episodes"] == 1
    bench = evaluate(compose_cfg("evaluate", f"run={tmp_path}", "benchmark=steps", "steps.trials=1",
                                 "steps.heights=[0.1]", "steps.time_limit_s=1.0", "steps.stairs_risers=[0.1]"))  # fmt: skip
    rows = bench["solenopsis"]["rows"]
    assert [(r["scene"], r["direction"]) for r in rows] == [("step", "up"), ("step", "down"), ("stairs", "up"),
                                                            ("stairs", "down")]  # fmt: skip
    assert all(r["trials"] == 1 for r in rows)
    assert (tmp_path / "eval" / "steps_trained_final_solenopsis_seed20000_tr1.json").exists()
