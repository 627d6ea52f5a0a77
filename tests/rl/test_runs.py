"""Runs a user can trust (issue 26), as a user meets them on the command line: every override applied and
recorded or refused naming it, the run's own config as the source of truth, resume from the run alone, a
run's log lines in its train.log, no stray folders, results files never lost to a race."""

import contextlib
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from cfgutil import ROOT, compose_cfg, digest

from dexwheel.atomic import write_new
from dexwheel.cli import script_command
from dexwheel.rl.eval_job import evaluate, save
from dexwheel.rl.run_config import load_run_config
from dexwheel.rl.schema import ConfigError

# every test here trains, or runs a script on a trained run: more than a second each, out of `make test-fast`
pytestmark = pytest.mark.slow

G20 = ["robot=g20_left", "algo=ppo", "train.total_timesteps=512", "train.num_envs=4", "train.eval_every_steps=512",
       "train.eval_episodes=1", "train.checkpoint_every_steps=512", "train.progress_bar=false",
       "algo.params.n_steps=128", "algo.params.batch_size=256", "algo.params.n_epochs=2",
       "task.hand_pose.max_episode_steps=50"]  # fmt: skip


def results_script():
    """scripts/results.py as a module."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import results

    return results


def script(name, *args, cwd):
    cmd = [sys.executable, str(ROOT / "scripts" / name), *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, str]:
    """A tiny G20 run trained as a user does (no hydra.run.dir): the folder train.py chose, and its stdout."""
    cwd = tmp_path_factory.mktemp("cwd")
    done = script("train.py", *G20, cwd=cwd)
    assert done.returncode == 0, done.stderr
    (run,) = (cwd / "outputs").iterdir()
    (stamped,) = run.iterdir()
    return stamped, done.stdout


@pytest.fixture(scope="module")
def launched(trained) -> Path:
    return trained[0]


@pytest.fixture
def run(launched, tmp_path) -> Path:
    return Path(shutil.copytree(launched, tmp_path / "run"))


def test_the_run_folder_names_robot_task_algo_and_backend_and_holds_only_the_run(launched):
    assert launched.parent.name == "g20_left_hand_pose_ppo_mujoco_seed0"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d", launched.name)
    assert not (launched / ".hydra").exists()
    assert {"config.yaml", "train.log", "checkpoints", "final_eval.json"} <= {p.name for p in launched.iterdir()}
    assert load_run_config(launched)[1] == []  # the saved config holds every value, defaults included


def test_evaluate_applies_and_records_each_env_override(run, tmp_path):
    plain = evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))
    done = script(
        "evaluate.py", f"run={run}", "episodes=1", "drive=pd", "task.hand_pose.goal_mode=random", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    out = run / "eval" / "trained_final_g20_left_seed20000_ep1_drive-pd+task.hand_pose.goal_mode-random.json"
    assert f"metrics: {out.relative_to(tmp_path)}" in done.stdout  # as typed from where the user stands
    saved = json.loads(out.read_text())
    assert saved["overrides"] == ["drive=pd", "task.hand_pose.goal_mode=random"]
    assert saved["results"]["g20_left"] != plain["g20_left"]  # applied: another evaluation than the plain one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no outputs/eval/<time>/ folder


@pytest.mark.parametrize(
    "override, message",
    [
        ("seed=3", "error: seed=3: not an evaluation setting"),
        (
            "robot=g20_right",
            "error: robot=g20_right: the run was trained on g20_left; evaluate it on another "
            "robot of its family with robots=[g20_right]",
        ),  # fmt: skip
        ("train.num_envs=8", "error: train.num_envs=8: not an evaluation setting"),
    ],
)
def test_evaluate_refuses_what_is_no_evaluation_setting_in_one_line(run, tmp_path, override, message):
    cfg = compose_cfg("evaluate", f"run={run}", "episodes=1", override)
    with pytest.raises(ConfigError, match=re.escape(message.removeprefix("error: "))):
        evaluate(cfg, [f"run={run}", "episodes=1", override])
    assert not (run / "eval").exists()


@pytest.mark.parametrize("robot", ["g20_right", "solenopsis"])
def test_evaluate_on_another_robot_advises_a_command_that_works(run, tmp_path, robot):
    """``robot=`` cannot change a run's robot: the line advises ``robots=[...]``, which then runs, within the run's
    family only (issue 57: ``robot=solenopsis`` on a G20 run was advised ``robots=[solenopsis]``, then refused)."""
    done = script("evaluate.py", f"run={run}", "episodes=1", f"robot={robot}", cwd=tmp_path)
    (line,) = done.stderr.strip().splitlines()
    assert done.returncode == 2 and line.startswith(f"error: robot={robot}: the run was trained on g20_left")
    advised = re.findall(r"robots=\[\w+\]", line)
    if robot == "solenopsis":
        assert not advised and line.endswith("a policy runs only on its own family's robots (g20_left, g20_right)")
        return
    done = script("evaluate.py", f"run={run}", "episodes=1", *advised, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_the_cli_refuses_an_override_naming_it(run, tmp_path):
    done = script("evaluate.py", f"run={run}", "episodes=1", "algo.params.n_epochs=3", cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: algo.params.n_epochs=3: not an evaluation setting")
    assert not (run / "eval").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.parametrize(
    "typed, message",
    [(["robot=solenopsis", "steps.trials=3"], "steps.trials=3: the step benchmark's protocol; needs benchmark=steps"),
     (["robot=g20_left", "+backend.typo=1"],
      "+backend.typo=1: the backend has no settings; choose it with backend=<isaaclab|mujoco>"),
     (["robot=g20_left", "checkpoint=step_1024"],
      "checkpoint=step_1024: a trained policy's checkpoint; needs policy=trained, not policy=random"),
     (["robot=solenopsis", "benchmark=steps", "episodes=3"],
      "episodes=3: benchmark=steps runs trials, not episodes; set steps.trials="),
     (["robot=g20_left", "video_episodes=2"], "video_episodes=2: needs video=true"),
     (["robot=g20_left", "train.device=cuda:0"],
      "train.device=cuda:0: a MuJoCo evaluation runs on the CPU; needs backend=isaaclab")],
)  # fmt: skip
def test_evaluate_refuses_its_own_keys_it_would_not_use(typed, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    typed = [*typed, "policy=random" if "g20" in typed[0] else "policy=zero"]
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        evaluate(compose_cfg("evaluate", *typed), typed)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "typed, message",
    [(["robot=solenopsis", "drive.hand.drive.slew_rad_s=0.01"],
      "drive.hand.drive.slew_rad_s=0.01: drive.hand.* applies to hand robots; this one (solenopsis) reads drive.wheel_leg.*"),
     (["robot=g20_left", "+drive.kp=1"], "+drive.kp=1: drive.kp is not a key of the config, and nothing would read it")],
)  # fmt: skip
def test_evaluate_refuses_an_env_override_nothing_would_read(typed, message, tmp_path, monkeypatch):
    """It would be recorded in the JSON and its name, and change nothing: refused before any episode."""
    monkeypatch.chdir(tmp_path)
    typed = [*typed, "policy=zero"]
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}"):
        evaluate(compose_cfg("evaluate", *typed), typed)
    assert list(tmp_path.iterdir()) == []


def test_the_cli_refuses_an_export_without_policy_onnx(run, tmp_path):
    done = script("evaluate.py", f"run={run}", f"onnx={run / 'export' / 'policy.onnx'}", "episodes=1", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: onnx={run / 'export' / 'policy.onnx'}: an exported policy; needs policy=onnx, not policy=trained"
    ]
    assert not (run / "eval").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_key_the_saved_config_lacks_is_named_with_the_value_used(run, tmp_path):
    text = (run / "config.yaml").read_text()
    assert "    goal_switch_steps: " in text
    (run / "config.yaml").write_text(re.sub(r"\n    goal_switch_steps: .*", "", text))  # saved before it existed
    done = script("evaluate.py", f"run={run}", "episodes=1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warning = f"warning: {run / 'config.yaml'} has no task.hand_pose.goal_switch_steps (saved before it existed); "
    assert warning + "using today's default task.hand_pose.goal_switch_steps=" in done.stderr


def test_resume_from_the_run_alone_logs_into_its_train_log(run, tmp_path):
    text = (run / "config.yaml").read_text()
    (run / "config.yaml").write_text(re.sub(r"\n    goal_switch_steps: .*", "", text))
    done = script("train.py", f"train.resume={run}", "train.total_timesteps=1024", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "has no task.hand_pose.goal_switch_steps (saved before it existed); using today's default" in done.stdout
    log = (run / "train.log").read_text()
    assert log.count("start robot=g20_left") == 2 and "from_step=512" in log and "done step=1024" in log
    assert "has no task.hand_pose.goal_switch_steps" in log
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["task"]["hand_pose"]["max_episode_steps"] == 50 and "goal_switch_steps" in saved["task"]["hand_pose"]
    assert saved["train"]["total_timesteps"] == 1024 and saved["drive"]["name"] == "hard_write"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no timestamped folder of the launch
    # results.py's wall time is the last segment's command (its launch included); an older log's wall_s else
    wall, command = map(float, re.search(r" - done step=1024 wall_s=([\d.]+) command_s=([\d.]+)", log).groups())
    assert command > wall > 0
    assert results_script().command_wall_s(log) == command
    assert results_script().command_wall_s(re.sub(r" command_s=[\d.]+", "", log)) == wall


@pytest.mark.parametrize(
    "override, message",
    [("drive=pd", "drive: run has hard_write, requested pd"),
     ("task.hand_pose.max_episode_steps=60", "task.hand_pose.max_episode_steps: run has 50, requested 60"),
     ("task.train.steps_per_env=32", "algo.params.n_steps: run has 128, requested 32")],  # the rollout follows
)  # fmt: skip
def test_a_conflicting_resume_override_is_refused_naming_the_field(run, tmp_path, override, message):
    before = digest(run)
    done = script("train.py", f"train.resume={run}", override, cwd=tmp_path)
    assert done.returncode == 2
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: train.resume={run}:") and message in line
    assert digest(run) == before and sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_launch_that_fails_leaves_nothing_behind(tmp_path):
    done = script("train.py", "robot=g20_left", "task.hand_pose.control_hz=abc", cwd=tmp_path)
    assert done.returncode == 2 and "error: task.hand_pose.control_hz" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, code, shown",
    [(["--help"], 0, "Reproduce a results table"),
     (["--seeds=1"], 2, "error: --seeds=1: not an argument of results.py"),
     (["robt=solenopsis"], 2, "error: robt=solenopsis: no key robt; did you mean robot?"),
     (["seeds=[a]"], 2, "error: seeds=[a]: expected a list of integers")],
)  # fmt: skip
def test_results_checks_every_argument_before_starting_anything(tmp_path, args, code, shown):
    done = script("results.py", *args, cwd=tmp_path)
    assert done.returncode == code and shown in done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []


def test_results_states_each_run_against_the_physics_timed_around_it(tmp_path):
    """results.py end to end, tiny: a training, its row's wall time over the mean of the physics timed just before
    and just after it, every timing listed; a second call trains nothing and states the run against its own timing."""
    args = ["robot=solenopsis", "task.train.total_timesteps=4096", "task.train.eval_every_steps=4096",
            "task.train.eval_episodes=1", "task.velocity.episode_length_s=0.2", "seeds=[0]", "sets=[20000]",
            "stress=false", "physics_steps=1024", f"out={tmp_path / 'out'}"]  # fmt: skip
    for call, timings in ((1, 2), (2, 1)):
        done = script("results.py", *args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("training seed 0") == (call == 1)
        ratio = float(re.search(r"\n\| 0 \| 20000 \| [\d.]+ \(\d+ s, ([\d.]+)x\) \|", done.stdout).group(1))
        rates = re.search(
            r"timed on 1024 steps as results.py started and after each training: ([\d, ]+) env-", done.stdout
        )
        rates = [float(r) for r in rates.group(1).split(", ")]
        assert len(rates) == timings and min(rates) > 0
        wall = results_script().command_wall_s((tmp_path / "out" / "seed0" / "train.log").read_text())
        floor = sum(4096 / r for r in rates) / len(rates)
        assert ratio == pytest.approx(wall / floor, rel=0.02, abs=0.06)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


RESULTS = ["seeds=[0]", "sets=[20000]", "physics_steps=1024", "out=out"]  # out relative to the caller's folder


@pytest.mark.parametrize(
    "args, messages",
    [(["algo=sac"], ["algo: run has ppo, requested sac"]),
     (["drive=pd"], ["drive: run has hard_write, requested pd"]),
     (["task.train.total_timesteps=999"], ["task.train.total_timesteps: run has ", "train.total_timesteps: run has "
                                           "512, requested 999"]),
     # every setting of the run typed again but one: its 50-step episodes are not today's default of 250
     ([a for a in G20 if not a.startswith("task.hand_pose.max_episode_steps=")],
      ["(task.hand_pose.max_episode_steps: run has 50, today's default 250)"])],
)  # fmt: skip
def test_results_refuses_a_finished_run_trained_otherwise_than_typed(launched, tmp_path, args, messages):
    shutil.copytree(launched, tmp_path / "out" / "seed0")
    before = digest(tmp_path)
    done = script("results.py", "robot=g20_left", *args, *RESULTS, cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(
        f"error: out: {tmp_path / 'out' / 'seed0'} holds a run trained otherwise than typed or today's defaults ("
    )
    assert all(m in line for m in messages) and line.endswith("choose a new out= (or delete the folder to retrain)")
    assert digest(tmp_path) == before


def test_results_reuses_a_finished_run_trained_as_typed_from_the_callers_folder(launched, tmp_path):
    run = Path(shutil.copytree(launched, tmp_path / "out" / "seed0"))
    done = script("results.py", *G20, *RESULTS, cwd=tmp_path)  # the run's own settings, typed again
    assert done.returncode == 0, done.stderr
    assert "training seed" not in done.stdout and re.search(r"\n\| 0 \| 20000 \| ", done.stdout)
    assert json.loads((run / "eval" / "results_20000.json").read_text())["run"] == str(run)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_evaluate_config_example_works(tmp_path, monkeypatch):
    """configs/evaluate.yaml's env_overrides example, as written there."""
    monkeypatch.chdir(tmp_path)
    line = next(x for x in (ROOT / "configs" / "evaluate.yaml").read_text().splitlines() if x.startswith("env_"))
    example = line.split("e.g. ")[1].split(" (")[0].split()
    assert example == ["+env_overrides.width=96", "+env_overrides.height=64"]
    args = [
        "robot=g20_left",
        "policy=random",
        "episodes=1",
        "video=true",
        "task.hand_pose.max_episode_steps=5",
        *example,
    ]
    evaluate(compose_cfg("evaluate", *args), args)
    (out,) = (tmp_path / "outputs" / "eval").glob("*.json")  # named by all of them: their start and a hash
    assert out.name.startswith("random_g20_left_seed20000_ep1_task.hand_pose.max_episode_steps-5+env_o")
    saved = json.loads(out.read_text())
    assert saved["env_overrides"] == {"width": 96, "height": 64} and saved["overrides"][-2:] == example
    assert (out.parent / f"{out.stem}_g20_left.mp4").stat().st_size > 0


def test_two_evaluations_finishing_at_once_keep_both_results(tmp_path):
    writers, barrier, saved = 8, threading.Barrier(8), []

    def finish(i):
        barrier.wait()
        saved.append(save(tmp_path / "result.json", json.dumps({"writer": i}), {}, fixed=False, overwrite=False))

    threads = [threading.Thread(target=finish, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    names = ["result.json", *(f"result_{n}.json" for n in range(2, writers + 1))]
    assert sorted(p.name for p in saved) == sorted(names) == sorted(p.name for p in tmp_path.iterdir())
    assert sorted(json.loads(p.read_text())["writer"] for p in saved) == list(range(writers))
    with pytest.raises(FileExistsError):
        write_new(tmp_path / "result.json", "never over a result")
    with pytest.raises(ConfigError, match="out: .*result.json already exists"):
        save(tmp_path / "result.json", "{}", {}, fixed=True, overwrite=False)


def test_the_evaluation_table_prints_counts_as_integers(tmp_path):
    """``episodes`` is a count (issue 57: it printed as ``2.0000``); the metrics keep their 4 decimals."""
    done = script("evaluate.py", "robot=g20_left", "policy=random", "episodes=2", "task.hand_pose.max_episode_steps=20",
                  cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = dict(line.split() for line in done.stdout.splitlines() if re.fullmatch(r"\w+ +\S+", line))
    assert rows["episodes"] == "2" and re.fullmatch(r"\d+\.\d{4}", rows["mean_joint_error"]), done.stdout


@pytest.mark.parametrize(
    "typed, folder",
    [(["seed=1"], "solenopsis_velocity_rsl_ppo_mujoco_seed1"),
     (["composer=wheels_only"], "solenopsis_velocity_rsl_ppo_mujoco_composer-wheels_only_seed0"),
     (["task=velocity_rough", "+experiment=rough_climb"], "solenopsis_velocity_rough_rsl_ppo_mujoco_experiment-rough_climb_seed0"),
     (["robot=g20_left", "drive=pd", "algo=rsl_ppo"], "g20_left_hand_pose_rsl_ppo_mujoco_drive-pd_seed0"),
     (["run_name=mine"], "mine")],
)  # fmt: skip
def test_a_run_folder_names_its_task_and_each_group_chosen_otherwise_than_the_robots(typed, folder, tmp_path):
    """The default, ``composer=wheels_only`` and ``task=velocity_rough`` runs all went to solenopsis_pd_rsl_ppo_mujoco_seed0/
    (issue 57): runs a user compares are told apart by their folders, named as Hydra resolves them."""
    done = script("train.py", *typed, "--cfg", "all", "--resolve", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_dir = yaml.safe_load(done.stdout)["hydra"]["run"]["dir"]
    assert re.fullmatch(rf"outputs/{folder}/\d{{4}}-\d\d-\d\d_\d\d-\d\d-\d\d", run_dir), run_dir


def test_a_sweep_writes_under_outputs(tmp_path):
    """``train.py -m`` wrote ``multirun/`` beside ``outputs/`` in the folder it ran in (issue 57)."""
    done = script("train.py", "-m", "seed=0,1", *G20, "train.total_timesteps=128", "algo.params.n_steps=32",
                  "algo.params.batch_size=64", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert [p.name for p in tmp_path.iterdir()] == ["outputs"]
    (sweep,) = (tmp_path / "outputs" / "multirun").iterdir()
    jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir())  # beside Hydra's multirun.yaml
    assert jobs == [f"{n}_g20_left_hand_pose_ppo_mujoco_seed{n}" for n in (0, 1)]


def test_a_run_ends_with_the_command_that_evaluates_it(trained, tmp_path):
    """``make train`` ended on the metrics table alone (issue 57): the last lines name the run and the command."""
    run, stdout = trained
    shown = run.relative_to(run.parents[2])  # outputs/<name>/<time>, relative to the folder it ran in
    with contextlib.chdir(run.parents[2]):  # where it ran: the command as the user there types it
        command = f"{script_command('evaluate.py')} run={shown}"  # this venv's python by its path
    assert stdout.splitlines()[-2:] == [f"run: {shown}", f"evaluate it: {command}"]
    done = subprocess.run([*command.split(), "episodes=1"], cwd=run.parents[2], capture_output=True, text=True,
                          timeout=300)  # pasted as printed  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "script_name, key", [("evaluate.py", "run"), ("export.py", "run"), ("train.py", "train.resume")]
)
def test_a_folder_of_runs_lists_them(launched, tmp_path, script_name, key):
    """``run=outputs/`` said "no config.yaml there" (issue 57): it names the runs inside, the newest first."""
    outputs = launched.parents[1]
    done = script(script_name, f"{key}={outputs}", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, f"error: {key}={outputs}: a folder of 1 run, not a run; choose one "
                                                 f"(newest first): {key}={launched}\n")  # fmt: skip


CRASH = """
calls = 0


def boom(task):
    global calls
    calls += 1
    if calls > 40:  # after the env's own check of the term: a bug that shows during training
        raise RuntimeError("a bug in the user's term")
    return task.base_lin_vel[:, 1] ** 2
"""


def test_a_crashed_run_writes_its_error_into_its_train_log(tmp_path):
    """A run's ``train.log`` held only its start line when it crashed (issue 57): the error follows it."""
    (tmp_path / "crash_terms.py").write_text(CRASH)
    term = '+task.velocity.rewards.boom={func: "crash_terms:boom", weight: -0.1}'
    done = script("train.py", "robot=solenopsis", "train.num_envs=1", "train.progress_bar=false", "hydra.run.dir=run",
                  term, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1 and "a bug in the user's term" in done.stderr
    log = (tmp_path / "run" / "train.log").read_text().splitlines()
    assert " - start robot=solenopsis" in log[0] and " - failed" in log[1], log
    assert log[-1] == "RuntimeError: a bug in the user's term"
