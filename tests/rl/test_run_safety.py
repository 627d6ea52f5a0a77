"""What a user saved stays intact: refused resumes, streamed evaluation videos, evaluations kept side by side,
rsl_rl checkpoints checked against their SHA-256."""

import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import imageio.v2 as imageio
import pytest
import yaml
from cfgutil import ROOT, compose_cfg, digest, short

from dexwheel.rl.checkpoints import CheckpointError, latest_checkpoint
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.eval_job import evaluate
from dexwheel.rl.evaluation import run_episodes
from dexwheel.rl.policies import baseline_policy
from dexwheel.rl.schema import ConfigError
from dexwheel.rl.training import train

# every test here trains, or runs a script on a trained run: more than a second each, out of `make test-fast`
pytestmark = pytest.mark.slow

TINY = ["train.total_timesteps=512", "train.eval_every_steps=512", "train.checkpoint_every_steps=512"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("solenopsis_run")
    train(compose_cfg("train", *short("solenopsis", *TINY)), run)
    return run


@pytest.fixture
def run(trained, tmp_path) -> Path:
    """A fresh copy of the trained run for each test."""
    return Path(shutil.copytree(trained, tmp_path / "run"))


@pytest.mark.parametrize(
    "change, message",
    [
        (["robot=m20_legacy"], "robot: run has solenopsis, requested m20_legacy"),
        (["robot=g20_left", "task.hand_pose.max_episode_steps=50"], "robot: run has solenopsis, requested g20_left"),
        (["task.velocity.decimation=2"], "task.velocity.decimation: run has 4, requested 2"),
        (["seed=3"], "seed: run has 0, requested 3"),
        (["algo.policy.net_arch=[32]"], "algo.policy.net_arch: run has [128, 128], requested [32]"),
    ],
)
def test_an_incompatible_resume_is_refused_and_leaves_the_run_untouched(run, change, message):
    before = digest(run)
    robot = "g20_left" if "robot=g20_left" in change else "solenopsis"
    cfg = compose_cfg("train", *short(robot, *TINY, "train.total_timesteps=1024", f"train.resume={run}", *change))
    with pytest.raises(ConfigError, match="train.resume=") as err:
        train(cfg, run.parent / "unused")
    assert message in str(err.value) and "config.yaml" in str(err.value) and "\n" not in str(err.value)
    assert digest(run) == before
    assert not (run.parent / "unused").exists()


def test_the_cli_refuses_an_incompatible_resume_with_exit_status_2(run, tmp_path):
    before = digest(run)
    cmd = [sys.executable, str(ROOT / "scripts" / "train.py"), *short("m20_legacy", *TINY, f"train.resume={run}")]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("error: train.resume=") and "robot: run has solenopsis, requested m20_legacy" in line
    assert digest(run) == before


def test_a_fresh_run_into_a_folder_that_holds_a_run_is_refused(run, tmp_path):
    """``hydra.run.dir`` naming an earlier run's folder (a second ``make train`` with a fixed folder) leaves it
    as it was; the CLI says so in one line with exit status 2."""
    before = digest(run)
    with pytest.raises(ConfigError, match=f"hydra.run.dir={run}: the folder holds a run already .* train.resume="):
        train(compose_cfg("train", *short("solenopsis", *TINY)), run)
    cmd = [sys.executable, str(ROOT / "scripts" / "train.py"), f"hydra.run.dir={run}", *short("solenopsis", *TINY)]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].startswith(f"error: hydra.run.dir={run}")
    assert digest(run) == before


def test_a_budget_only_change_resumes_and_records_the_new_budget(run):
    cfg = compose_cfg("train", *short("solenopsis", *TINY, "train.total_timesteps=1024", f"train.resume={run}"))
    assert train(cfg, run.parent / "unused")["timesteps"] >= 1024
    assert "total_timesteps: 1024" in (run / "config.yaml").read_text()


@pytest.mark.parametrize("budget", [512, 256])
def test_a_resume_to_a_budget_the_run_has_reached_is_refused(run, budget):
    """The run is at step 512: a resume must continue it (a smaller or equal budget would rewrite its final
    files for nothing and record a budget its model has passed)."""
    before = digest(run)
    cfg = compose_cfg("train", *short("solenopsis", *TINY, f"train.total_timesteps={budget}", f"train.resume={run}"))
    with pytest.raises(ConfigError, match=rf"train.total_timesteps={budget}: the run is at step 512 already .*> 512"):
        train(cfg, run.parent / "unused")
    assert digest(run) == before


def test_a_resume_takes_the_checkpoint_with_the_most_steps_whatever_the_file_times(run):
    """Copies and ``touch`` change file times: the latest checkpoint is the one saved at the most steps."""
    checkpoints = run / "checkpoints"
    older = checkpoints / "step_256.zip"
    shutil.copy(checkpoints / "step_512.zip", older)  # its name says 256: an older checkpoint, now the newest file
    os.utime(checkpoints / "final.zip", (1e9, 1e9))
    assert latest_checkpoint(run) == checkpoints / "final.zip"  # 512 steps, as step_512: the final one on a tie
    (checkpoints / "final.zip").unlink()
    assert latest_checkpoint(run) == checkpoints / "step_512.zip"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["+seeed=3"], "+seeed=3: seeed is not a key of the config, and nothing would read it"),
        (["++seeed=3"], "++seeed=3: seeed is not a key of the config"),
        (["+task.train.num_env=4"], "+task.train.num_env=4: task.train.num_env is not a key of the config"),
        (["+robot.foo=1"], "+robot.foo=1: robot.foo is not a key"),
        (["drive.hand.drive.slew_rad_s=0.01"], "drive.hand.drive.slew_rad_s=0.01: drive.hand.* applies to hand robots; this one "
                                         "(solenopsis) reads drive.wheel_leg.*"),
        # deleted, the env's own table kept the term while config.yaml lacked it; train.num_envs fell back on 16
        (["~task.velocity.rewards.action_rate_l2"], "~task.velocity.rewards.action_rate_l2: a config key cannot be "
         "deleted (what reads it would use a default the run's config.yaml does not record); type its value instead, "
         "or task.velocity.rewards.action_rate_l2=null to remove a term from its table"),
        (["~train.num_envs"], "~train.num_envs: a config key cannot be deleted"),
    ],
)  # fmt: skip
def test_an_override_nothing_would_read_is_refused_naming_it(tmp_path, overrides, message):
    """It would be written to the run's config.yaml and have no effect: refused before anything is written."""
    typed = short("solenopsis", *TINY, *overrides)
    with pytest.raises(ConfigError) as err:
        train(compose_cfg("train", *typed), tmp_path / "run", overrides=typed)
    assert str(err.value).startswith(message)
    assert not (tmp_path / "run").exists()


def test_added_keys_that_their_readers_check_are_taken(tmp_path):
    """``++seed`` sets a key the config has; ``+task.velocity.<kwarg>`` goes to the env, which checks it."""
    typed = short("solenopsis", *TINY, "++seed=1", "+task.velocity.domain_rand.friction=[0.5,1.0]")
    cfg = compose_cfg("train", *typed)
    train(cfg, tmp_path / "run", overrides=typed)
    saved = (tmp_path / "run" / "config.yaml").read_text()
    assert "seed: 1" in saved and "- 0.5" in saved


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda run: (run / "config.yaml").write_text("robot: [unclosed\n"), "config.yaml cannot be read as a run's config"),
        (lambda run: (run / "config.yaml").write_bytes(b"\xff\xfe robot"), "config.yaml cannot be read as a run's config"),
        (lambda run: (run / "eval_history.json").write_text('[{"timesteps": 5'), "eval_history.json cannot be read"),
        (lambda run: (run / "eval_history.json").write_text('{"a": 1}'), "eval_history.json is not a list of evaluations"),
        (lambda run: (run / "checkpoints" / "final.vecnormalize.pkl").unlink(), "final.vecnormalize.pkl is missing: the run "
                                                                              "normalises observations"),
    ],
)  # fmt: skip
def test_a_damaged_run_file_is_refused_naming_it_and_nothing_is_written(run, damage, message):
    damage(run)
    before = digest(run)
    cfg = compose_cfg("train", *short("solenopsis", *TINY, "train.total_timesteps=1024", f"train.resume={run}"))
    with pytest.raises((ConfigError, CheckpointError), match=message) as err:
        train(cfg, run.parent / "unused")
    assert "\n" not in str(err.value)
    assert digest(run) == before


def test_the_cli_refuses_a_run_dir_for_a_resume(run, tmp_path):
    """A resumed run writes into its own folder: a typed hydra.run.dir would be ignored, so it is refused."""
    before = digest(run)
    cmd = [sys.executable, str(ROOT / "scripts" / "train.py"), f"hydra.run.dir={tmp_path / 'elsewhere'}",
           *short("solenopsis", *TINY, "train.total_timesteps=1024", f"train.resume={run}")]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert (
        proc.stderr.strip().splitlines()[-1].startswith(f"error: hydra.run.dir={tmp_path / 'elsewhere'}: a resumed run")
    )
    assert digest(run) == before and not (tmp_path / "elsewhere").exists()


def g20_video_cfg(*extra):
    return compose_cfg("evaluate", "robot=g20_left", "policy=random", "episodes=3", "video=true", "video_episodes=1",
                       "task.hand_pose.max_episode_steps=8", "+env_overrides.width=64", "+env_overrides.height=64",
                       *extra)  # fmt: skip


def test_video_streams_only_the_first_episodes_to_the_encoder(tmp_path, monkeypatch, capsys):
    cfg = g20_video_cfg()
    env = make_env(cfg, render_mode="rgb_array", width=64, height=64)
    renders = []
    real_render = env.render
    monkeypatch.setattr(env, "render", lambda: renders.append(1) or real_render())
    appended_after = []  # how many frames had been rendered when each one reached the encoder
    real_get_writer = imageio.get_writer

    def spying_writer(*args, **kwargs):
        writer = real_get_writer(*args, **kwargs)
        real_append = writer.append_data
        writer.append_data = lambda frame, *a: (appended_after.append(len(renders)), real_append(frame, *a))[1]
        return writer

    monkeypatch.setattr(imageio, "get_writer", spying_writer)
    video = tmp_path / "v.mp4"
    result = run_episodes(env, baseline_policy("random", env, 0), "hand_pose", 3, 0,
                          video_path=video, progress=True, video_episodes=2)  # fmt: skip
    env.close()
    recorded = int(result.episodes[0]["length"] + result.episodes[1]["length"])
    assert appended_after == list(range(1, recorded + 1))  # each frame is encoded as soon as it is rendered
    assert len(renders) == recorded  # the third episode is not rendered at all
    assert sum(1 for _ in imageio.get_reader(video)) == recorded
    assert [p.name for p in tmp_path.iterdir()] == ["v.mp4"]  # no temporary file left behind
    assert "episode 3/3" in capsys.readouterr().out  # a log-friendly line per episode (not a terminal)


def test_evaluate_video_episodes_records_the_first_episode(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    evaluate(g20_video_cfg())
    folder = tmp_path / "outputs" / "eval"
    video = folder / "random_g20_left_seed20000_ep3_g20_left.mp4"
    assert sum(1 for _ in imageio.get_reader(video)) == 8  # max_episode_steps: hand episodes never terminate
    assert json.loads((folder / "random_g20_left_seed20000_ep3.json").read_text())["episodes"] == 3


def test_each_evaluation_is_kept_under_its_own_name(run, capsys):
    evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))
    first = run / "eval" / "trained_final_solenopsis_seed20000_ep1.json"
    kept = first.read_bytes()
    assert f"metrics: {first}" in capsys.readouterr().out
    evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))  # the same evaluation again: a second file
    again = run / "eval" / "trained_final_solenopsis_seed20000_ep1_2.json"
    assert f"metrics: {again}" in capsys.readouterr().out
    evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1", "checkpoint=final", "eval_seed=7",
                         "robots=[solenopsis,m20_legacy]"))  # fmt: skip
    cross = run / "eval" / "trained_final_solenopsis+m20_legacy_seed7_ep1.json"
    saved = json.loads(cross.read_text())
    assert saved["robots"] == ["solenopsis", "m20_legacy"] and saved["checkpoint"].endswith("final.zip")
    assert first.read_bytes() == kept
    assert sorted(p.name for p in (run / "eval").iterdir()) == sorted([first.name, again.name, cross.name])


def test_out_refuses_an_existing_file_unless_overwrite(run, tmp_path):
    out = tmp_path / "mine.json"
    out.write_text("my notes")
    with pytest.raises(ConfigError, match=f"out: {out} already exists.*overwrite=true"):
        evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1", f"out={out}"))
    assert out.read_text() == "my notes" and not (run / "eval").exists()
    evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1", f"out={out}", "overwrite=true"))
    assert json.loads(out.read_text())["policy"] == "trained"


def test_paths_typed_as_numbers_name_those_files(run, tmp_path, monkeypatch):
    """Hydra reads ``run=5`` as the integer 5: it names the folder ``5``, as typed, and ``out=7`` the file ``7``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "5").symlink_to(run)
    evaluate(compose_cfg("evaluate", "run=5", "episodes=1", "out=7"))
    assert json.loads((tmp_path / "7").read_text())["policy"] == "trained"
    with pytest.raises(ConfigError, match="checkpoint: a path, got True"):
        evaluate(compose_cfg("evaluate", "run=5", "episodes=1", "checkpoint=true"))
    nothing = re.escape("checkpoint: final | best | latest | a path to a checkpoint, got None")
    with pytest.raises(CheckpointError, match=nothing):
        evaluate(compose_cfg("evaluate", "run=5", "episodes=1", "checkpoint=null"))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "run") == ["5", "7"]  # the refused: nothing


@pytest.mark.parametrize("bad, message", [("episodes=0", "episodes: must be an integer >= 1, got 0"),
                                          ("video_episodes=-1", "video_episodes: must be an integer >= 1, got -1"),
                                          ("overwrite=maybe", "overwrite: must be true or false")])  # fmt: skip
def test_bad_evaluation_settings_are_named(bad, message):
    with pytest.raises(ConfigError, match=message):
        evaluate(compose_cfg("evaluate", "robot=g20_left", "policy=random", bad))


# -- rsl_rl checkpoints carry their SHA-256 ------------------------------------------------------------------
@pytest.fixture(scope="module")
def rsl_trained(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("solenopsis_rsl_run")
    train(compose_cfg("train", *short("solenopsis", *TINY, algo="rsl_ppo")), run)
    return run


@pytest.fixture
def rsl_run(rsl_trained, tmp_path) -> Path:
    return Path(shutil.copytree(rsl_trained, tmp_path / "rsl_run"))


def script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(ROOT / "scripts" / name), *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_pt_checkpoint_whose_bytes_changed_is_refused_by_evaluate_export_and_resume(rsl_run, tmp_path):
    final = rsl_run / "checkpoints" / "final.pt"
    data = bytearray(final.read_bytes())
    data[len(data) // 2] ^= 0x04  # one bit in the middle of the file (tensor data)
    final.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="final.pt does not match"):  # a resume reads its step count
        latest_checkpoint(rsl_run)
    before = digest(rsl_run)
    error = (f"error: checkpoint {final} does not match the SHA-256 it was saved with: its bytes changed after it "
             f"was written; restore it from a copy or use another checkpoint")  # fmt: skip
    resume = short("solenopsis", *TINY, "train.total_timesteps=1024", f"train.resume={rsl_run}", algo="rsl_ppo")
    commands = {
        "evaluate": script("evaluate.py", f"run={rsl_run}", "checkpoint=final", "episodes=1", cwd=tmp_path),
        "export": script("export.py", f"run={rsl_run}", cwd=tmp_path),
        "resume": script("train.py", *resume, cwd=tmp_path),
    }
    for name, proc in commands.items():
        assert proc.returncode == 2, f"{name}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        assert proc.stderr.strip().splitlines()[-1] == error, f"{name}: {proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, name
    assert digest(rsl_run) == before  # nothing in the run folder changed: no eval/, export/ or checkpoint


def test_a_pt_checkpoint_saved_without_a_sha256_is_used_with_a_warning(rsl_run, capsys):
    """Checkpoints saved before dexwheel wrote a SHA-256 (plain torch.save archives) still evaluate: their
    zip CRC32s are checked, and one warning says the file has no SHA-256; a changed one is refused."""
    final = rsl_run / "checkpoints" / "final.pt"
    sealed = final.read_bytes()
    legacy = sealed[: sealed.rindex(b"dexwheel-sha256:") - 2] + b"\0\0"  # the archive torch.save wrote
    assert zipfile.ZipFile(io.BytesIO(legacy)).comment == b""
    final.write_bytes(legacy)
    capsys.readouterr()
    evaluate(compose_cfg("evaluate", f"run={rsl_run}", "checkpoint=final", "episodes=1"))
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: checkpoint {final} has no SHA-256 (saved before dexwheel wrote them, or by another program); "
        f"its zip CRC32s match, so it is used"
    ]
    changed = bytearray(legacy)
    changed[len(changed) // 2] ^= 0x04
    final.write_bytes(bytes(changed))
    with pytest.raises(CheckpointError, match=r"final.pt is corrupted: its entry archive/data/\d+ does not match"):
        evaluate(compose_cfg("evaluate", f"run={rsl_run}", "checkpoint=final", "episodes=1"))


# -- backend=isaaclab: checked here, in the core venv, before Isaac Lab starts (about 20 s) ------------------------
ISAAC = ["backend=isaaclab"]


@pytest.fixture
def no_isaac(monkeypatch):
    """The Isaac Lab child must not start: what is refused is refused before it."""
    from dexwheel.rl import isaaclab_launch

    monkeypatch.setattr(isaaclab_launch, "run_child", lambda *a: pytest.fail(f"Isaac Lab started: {a}"))


@pytest.fixture
def isaac_run(rsl_run) -> Path:
    """The rsl_ppo run as an Isaac Lab run (its config says so; the fake child below trains it)."""
    path = rsl_run / "config.yaml"
    path.write_text(path.read_text().replace("backend:\n  name: mujoco", "backend:\n  name: isaaclab"))
    return rsl_run


@pytest.fixture
def isaac_child(monkeypatch):
    """A fake Isaac Lab child: records what it was given and what the run folder held when it started; ``fail``
    (an exception) makes it fail after the parent opened the run's log."""
    from dexwheel.rl import isaaclab_launch

    seen: dict = {"fail": None}

    def child(module, path):
        job = json.loads(Path(path).read_text())
        run_dir = Path(job["run_dir"])
        seen.update(module=module, job=job, files=digest(run_dir))
        if seen["fail"] is not None:
            (run_dir / "tb").mkdir()  # what a child may have written before it failed
            raise seen["fail"]
        (run_dir / "config.yaml").write_text(yaml.safe_dump(job["config"]))  # the child writes it
        return {"return": 1.0}

    monkeypatch.setattr(isaaclab_launch, "run_child", child)
    return seen


def test_isaaclab_training_gets_its_config_in_a_job_and_the_parent_writes_no_config(isaac_child, tmp_path):
    """The child writes config.yaml once its env and learner exist (tests/isaaclab/test_rsl_training.py); the
    parent never does, so a launch refused there cannot change a run's config."""
    typed = short("solenopsis", *TINY, *ISAAC, algo="rsl_ppo")
    train(compose_cfg("train", *typed), tmp_path / "run", overrides=typed, launched=12.5)
    assert isaac_child["module"] == "dexwheel.isaaclab.train"
    assert "config.yaml" not in isaac_child["files"] and isaac_child["job"]["run_dir"] == str(tmp_path / "run")
    assert isaac_child["job"]["config"]["backend"]["name"] == "isaaclab" and isaac_child["job"]["launched"] == 12.5


def test_a_resume_on_isaaclab_leaves_the_config_to_the_child(isaac_run, isaac_child):
    before = digest(isaac_run)
    typed = [f"train.resume={isaac_run}", "train.total_timesteps=1024", "train.num_envs=2"]
    train(compose_cfg("train", *short("solenopsis", *TINY, *ISAAC, *typed, algo="rsl_ppo")), isaac_run, typed)
    assert isaac_child["files"] == before  # the child started on the run as it was
    job = isaac_child["job"]["config"]
    assert job["train"]["total_timesteps"] == 1024 and job["train"]["num_envs"] == 2


@pytest.mark.parametrize(
    "typed, message",
    [(["train.num_envs=2", "train.eval_episodes=5"],
      "train.eval_episodes: 5 evaluation episodes run on the Isaac Lab training envs; train.num_envs is 2"),
     (["train.vectorization=dummy"], "train.vectorization=dummy: chooses the MuJoCo backend's vector env"),
     (["train.device=gpu"], "train.device: 'gpu' is not one of cpu, cuda, cuda:<index>")],
)  # fmt: skip
def test_a_refused_isaaclab_resume_leaves_the_run_untouched(isaac_run, no_isaac, typed, message):
    before = digest(isaac_run)
    typed = [f"train.resume={isaac_run}", "train.total_timesteps=1024", *typed]
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}"):
        train(compose_cfg("train", *short("solenopsis", *TINY, *ISAAC, *typed, algo="rsl_ppo")), isaac_run, typed)
    assert digest(isaac_run) == before


@pytest.mark.parametrize(
    "algo, typed, message",
    [("ppo", [], "algo=ppo: backend=isaaclab trains with algo=rsl_ppo"),
     ("rsl_ppo", ["task.velocity.scale_rewards_by_dt=false"],
      "task.velocity.scale_rewards_by_dt=false: backend=isaaclab does not run it: Isaac Lab's reward manager"),
     ("rsl_ppo", ["train.vectorization=subproc"],
      "train.vectorization=subproc: chooses the MuJoCo backend's vector env")],
)  # fmt: skip
def test_what_isaaclab_cannot_train_is_refused_naming_the_key(no_isaac, tmp_path, algo, typed, message):
    typed = short("solenopsis", *TINY, *ISAAC, *typed, algo=algo)
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}"):
        train(compose_cfg("train", *typed), tmp_path / "run", overrides=typed)
    assert not (tmp_path / "run").exists()


def test_the_cli_refuses_what_isaaclab_cannot_train_and_leaves_no_folder(tmp_path):
    """Refused in one line before Isaac Lab starts: no folder, not even an empty train.log."""
    scale = "task.velocity.scale_rewards_by_dt=false"
    for algo, extra, named in (("ppo", [], "algo=ppo"), ("rsl_ppo", [scale], scale)):
        typed = [*short("solenopsis", *TINY, *ISAAC, *extra, algo=algo), f"hydra.run.dir={tmp_path / 'run'}"]
        proc = script("train.py", *typed, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert proc.stderr.strip().splitlines()[-1].startswith(f"error: {named}"), proc.stderr[-2000:]
        assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("failure", [SystemExit(2), RuntimeError("the child failed")])
def test_a_fresh_isaaclab_launch_that_fails_leaves_the_folder_as_it_was_found(isaac_child, tmp_path, failure):
    """Nothing it wrote stays (its train.log, what the child wrote), so the retry is not refused as a resume of a
    run that never started; what the folder held before stays."""
    typed = short("solenopsis", *TINY, *ISAAC, algo="rsl_ppo")
    isaac_child["fail"] = failure
    with pytest.raises(type(failure)):
        train(compose_cfg("train", *typed), tmp_path / "new", overrides=typed)
    assert not (tmp_path / "new").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("a user's file")
    with pytest.raises(type(failure)):
        train(compose_cfg("train", *typed), tmp_path / "mine", overrides=typed)
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
    isaac_child["fail"] = None  # the retry trains
    train(compose_cfg("train", *typed), tmp_path / "mine", overrides=typed)
    assert (tmp_path / "mine" / "config.yaml").exists()


def test_an_isaaclab_evaluation_checks_the_checkpoint_and_the_device_before_it_starts(rsl_run, no_isaac, tmp_path):
    final = rsl_run / "checkpoints" / "final.pt"
    data = bytearray(final.read_bytes())
    data[len(data) // 2] ^= 0x04
    final.write_bytes(bytes(data))
    refusals = {
        ("checkpoint=final",): (CheckpointError, f"checkpoint {final} does not match the SHA-256"),
        (f"checkpoint={tmp_path / 'nope.pt'}",): (CheckpointError, f"checkpoint {tmp_path / 'nope.pt'} does not exist"),
        ("train.device=gpu",): (ConfigError, "train.device: 'gpu' is not one of cpu, cuda, cuda:<index>"),
    }
    for typed, (error, message) in refusals.items():
        typed = [f"run={rsl_run}", "backend=isaaclab", "episodes=1", *typed]
        with pytest.raises(error, match=f"^{re.escape(message)}"):
            evaluate(compose_cfg("evaluate", *typed), typed)
    assert not (rsl_run / "eval").exists()


def test_an_isaaclab_evaluation_refuses_what_isaac_lab_cannot_run_naming_the_key(no_isaac, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    typed = ["robot=g20_left", "backend=isaaclab", "policy=zero"]  # the hand's default: hard-write with projection
    with pytest.raises(ConfigError, match=r"^collision.hand.collision.projection=true: backend=isaaclab does not run "
                                          r"it: .*\(Hydra: collision=off"):  # fmt: skip
        evaluate(compose_cfg("evaluate", *typed), typed)
    typed = ["robot=solenopsis", "backend=isaaclab", "policy=zero", "task.velocity.scale_rewards_by_dt=false"]
    with pytest.raises(ConfigError, match=r"^task.velocity.scale_rewards_by_dt=false: backend=isaaclab does not"):
        evaluate(compose_cfg("evaluate", *typed), typed)
    # the object tasks: their own Isaac Lab tasks, which take the USD's contact excludes only
    typed = ["robot=g20_left", "task=in_hand_rotate", "backend=isaaclab", "policy=zero", "benchmark=rotation",
             "+env_overrides.collision.contact_excludes=[[hand_base, thumb_distal]]"]  # fmt: skip
    with pytest.raises(ConfigError, match=r"^env_overrides.collision.contact_excludes=\[\[\"hand_base\", "
                                          r"\"thumb_distal\"\]\]: backend=isaaclab does not run it: the USD carries"):  # fmt: skip
        evaluate(compose_cfg("evaluate", *typed), typed)
    typed[-1] = "+env_overrides.contact_excludes=[[hand_base, thumb_distal]]"  # the key without its section
    with pytest.raises(ConfigError, match=r"contact_excludes: unknown keyword argument \(did you mean "
                                          r"collision.contact_excludes\?\)"):  # fmt: skip
        evaluate(compose_cfg("evaluate", *typed), typed)
    typed = ["robot=g20_left", "task=in_hand_rotate", "backend=isaaclab", "policy=zero", "benchmark=rotation",
             "+env_overrides.object={size: 0.05}"]  # fmt: skip
    with pytest.raises(
        ConfigError, match=r"^env_overrides: \['object'\] are fixed by the in-hand benchmark's protocol"
    ):
        evaluate(compose_cfg("evaluate", *typed), typed)
    assert list(tmp_path.iterdir()) == []


def test_the_isaaclab_child_reports_a_bad_checkpoint_in_one_line(monkeypatch, capsys):
    """What the child finds wrong (a checkpoint changed after the parent's check) is one line, exit status 2."""
    from dexwheel.rl.isaaclab_launch import child_main, log

    for name, value in (("handlers", []), ("propagate", True), ("setLevel", lambda level: None)):
        monkeypatch.setattr(log, name, value)  # child_main sets the logger up for its process: not for this one

    def job(path):
        raise CheckpointError(f"checkpoint {path} does not match the SHA-256 it was saved with")

    monkeypatch.setattr(sys, "argv", ["child", "final.pt"])
    with pytest.raises(SystemExit) as exit_:
        child_main(job)
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "error: checkpoint final.pt does not match the SHA-256 it was saved with\n"


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:0", "cuda:12", "gpu", "cuda0", "0", "cpu:0"])
def test_train_device_takes_cpu_and_cuda_devices_and_refuses_others_before_any_work(device, tmp_path):
    from dexwheel.rl.schema import validate

    cfg = compose_cfg("train", *short("solenopsis", f"train.device={device}"))
    if device in ("cpu", "cuda", "cuda:0", "cuda:12"):
        assert validate(cfg)[0].device == device
        return
    with pytest.raises(ConfigError, match=rf"^train.device: '{device}' is not one of cpu, cuda, cuda:<index>"):
        train(cfg, tmp_path / "run")
    assert not (tmp_path / "run").exists()
