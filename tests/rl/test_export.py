"""ONNX export (scripts/export.py, dexwheel.rl.export): the graph acts as the torch policy, the metadata
describes the env, evaluate.py plays the exported policy, refusals are one-line errors."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from cfgutil import SHORT, SHORT_EPISODES, compose_cfg, digest, short
from stable_baselines3 import PPO, SAC
from tensordict import TensorDict

from dexwheel.rl.checkpoints import CheckpointError, load_vecnormalize
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.eval_job import evaluate
from dexwheel.rl.export import ExportedPolicy, export_policy, session
from dexwheel.rl.policies import load_policy
from dexwheel.rl.run_config import env_id, run_config
from dexwheel.rl.schema import ConfigError
from dexwheel.rl.training import train

# every test here trains, or runs a script on a trained run: more than a second each, out of `make test-fast`
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
STEPS = ["train.total_timesteps=1024", "train.eval_every_steps=1024", "train.checkpoint_every_steps=1024"]
SAC_SHORT = ["algo=sac", "algo.params.learning_starts=256", "algo.params.buffer_size=4096", "algo.params.batch_size=64",
       "algo.policy.net_arch=[64,64]"]  # fmt: skip
CASES = [("solenopsis", "rsl_ppo"), ("solenopsis", "ppo"), ("g20_left", "ppo"), ("solenopsis", "sac")]
#: exported and torch actions agree to this (float32 GEMMs of two libraries)
ATOL = 1e-5


def overrides(robot, algo):
    if algo == "sac":
        task = "hand_pose" if robot.startswith("g20") else "velocity"
        return [f"robot={robot}", *SHORT, *SAC_SHORT, f"task.{task}.{SHORT_EPISODES[task]}", *STEPS]
    return short(robot, *STEPS, algo=algo)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``runs(robot, algo)``: a tiny training run (trained once per module) and its default export."""
    done = {}

    def get(robot, algo):
        if (robot, algo) not in done:
            run = tmp_path_factory.mktemp(f"{robot}_{algo}")
            train(compose_cfg("train", *overrides(robot, algo)), run)
            done[robot, algo] = run, *export_policy(run)
        return done[robot, algo]

    return get


def observations(run, n=300):
    """Observations the env gives under the trained policy (every other step a random action, for variety)."""
    cfg = run_config(run)
    env = make_env(cfg)
    act = load_policy(run, "final", cfg)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    rows = []
    for i in range(n):
        rows.append(obs)
        a = act(obs) if i % 2 == 0 else env.action_space.sample()
        obs, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            obs, _ = env.reset(seed=i + 1)
    env.close()
    return np.asarray(rows, dtype=np.float32)


def torch_actions(run, obs):
    """The torch policy's raw deterministic actions (before clipping), and its normaliser's mean."""
    cfg = run_config(run)
    algo = cfg.algo.name
    if algo == "rsl_ppo":
        from dexwheel.rl.rsl import load_actor

        env = make_env(cfg)
        actor = load_actor(run / "checkpoints" / "final.pt", cfg, env.action_space)
        env.close()
        x = torch.from_numpy(obs[:, : actor.obs_dim])
        with torch.no_grad():
            raw = actor(TensorDict({"policy": x}, batch_size=[len(obs)])).numpy()
        return raw, actor.obs_normalizer.mean.numpy()
    checkpoint = run / "checkpoints" / "final.zip"
    model = {"ppo": PPO, "sac": SAC}[algo].load(checkpoint, device="cpu")
    stats = load_vecnormalize(checkpoint, True)
    x = torch.as_tensor(stats.normalize_obs(obs))
    with torch.no_grad():
        if algo == "ppo":
            raw = model.policy.get_distribution(x).mode().numpy()
        else:  # SAC: tanh-squashed mean, rescaled to the bounds as predict() does
            raw = model.policy.unscale_action(model.policy.actor(x, deterministic=True).numpy())
    return raw, stats.obs_rms.mean


@pytest.mark.parametrize(("robot", "algo"), CASES)
def test_onnx_runtime_acts_as_the_torch_policy(runs, robot, algo):
    run, onnx_path, meta_path = runs(robot, algo)
    assert (onnx_path, meta_path) == (run / "export" / "policy.onnx", run / "export" / "policy.json")
    obs = observations(run)
    raw, mean = torch_actions(run, obs)
    assert np.abs(mean).max() > 1e-3  # the normaliser is trained: it has to be in the graph
    got = session(onnx_path).run(
        ["actions"], {"obs": obs[:, : json.loads(meta_path.read_text())["observation"]["size"]]}
    )[0]
    assert got.shape == raw.shape == (len(obs), raw.shape[1])
    np.testing.assert_allclose(got, raw, rtol=0, atol=ATOL)  # raw: before clipping
    cfg = run_config(run)
    env = make_env(cfg)
    exported = ExportedPolicy.load(onnx_path).policy(env)
    trained = load_policy(run, "final", cfg)
    env.close()
    clipped = np.array([exported(o) for o in obs])
    np.testing.assert_allclose(clipped, np.array([trained(o) for o in obs]), rtol=0, atol=ATOL)
    np.testing.assert_array_equal(clipped, np.clip(got, env.action_space.low, env.action_space.high))


@pytest.mark.parametrize(("robot", "algo"), CASES[:3])
def test_metadata_describes_the_env(runs, robot, algo):
    run, onnx_path, meta_path = runs(robot, algo)
    meta = json.loads(meta_path.read_text())
    cfg = run_config(run)
    env = make_env(cfg)
    size, actions = env.observation_space.shape[0], env.action_space.shape[0]
    slices = dict(env.unwrapped.obs_slices)
    env.close()
    assert (meta["robot"], meta["env_id"], meta["algo"]) == (robot, env_id(cfg), algo)  # the task record's
    assert meta["run"] == ".." and meta["run_absolute"] == str(run.resolve())  # relative to policy.json's folder
    assert meta["checkpoint"] == ("checkpoints/final.pt" if algo == "rsl_ppo" else "checkpoints/final.zip")
    assert meta["num_timesteps"] >= 1024
    assert meta["control_hz"] == 50.0  # wheel-leg: 4 x 5 ms physics steps; G20: control_hz 50
    obs = meta["observation"]
    assert obs["size"] == size
    assert [t["name"] for t in obs["layout"]] == list(slices)
    assert [(t["start"], t["stop"]) for t in obs["layout"]] == [(s.start, s.stop) for s in slices.values()]
    assert obs["layout"][0]["start"] == 0 and obs["layout"][-1]["stop"] == size
    act = meta["action"]
    assert act["size"] == actions == len(act["joints"]) == len(act["clip"][0]) == len(act["clip"][1])
    assert act["mapping"] == cfg.action.name
    if robot == "solenopsis":
        assert act["joints"][:4] == [f"{leg}_knee_joint" for leg in ("fl", "fr", "hl", "hr")]
        assert act["clip"] == [[-1.0] * 8, [1.0] * 8] and act["scaling"]["knee_scale"] == 0.25
    else:
        from dexwheel.robots.g20 import ACTIVE_JOINTS

        assert act["joints"] == list(ACTIVE_JOINTS) and act["mapping"] == "normalized"
    model = onnx.load(str(onnx_path))
    assert [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] == [18] == [meta["onnx"]["opset"]]
    sess = session(onnx_path)
    assert [i.name for i in sess.get_inputs()] == [meta["onnx"]["input"]] == ["obs"]
    assert [o.name for o in sess.get_outputs()] == [meta["onnx"]["output"]] == ["actions"]
    assert sess.get_inputs()[0].shape[1] == size
    assert meta["versions"]["torch"] == torch.__version__ and meta["versions"]["onnx"] == onnx.__version__
    assert not [p for p in onnx_path.parent.iterdir() if p.name not in ("policy.onnx", "policy.json")]  # no temp files


@pytest.mark.parametrize(("robot", "algo"), CASES[:3])
def test_evaluate_plays_the_exported_policy_as_the_trained_one(runs, robot, algo):
    run, onnx_path, _ = runs(robot, algo)
    common = ["episodes=2", "checkpoint=final"]
    trained = evaluate(compose_cfg("evaluate", f"run={run}", *common))
    exported = evaluate(compose_cfg("evaluate", "policy=onnx", f"onnx={onnx_path}", *common))  # run: the metadata's
    assert trained.keys() == exported.keys() == {robot}
    for key, value in trained[robot].items():
        assert exported[robot][key] == pytest.approx(value, rel=0, abs=1e-6), key
    saved = json.loads((run / "eval" / f"onnx_final_{robot}_seed20000_ep2.json").read_text())
    assert saved["policy"] == "onnx" and saved["onnx"] == str(onnx_path) and saved["results"] == exported


def test_an_export_moved_with_its_run_or_alone_still_finds_the_run(runs, tmp_path):
    import shutil

    run, onnx_path, _ = runs("solenopsis", "ppo")
    moved = Path(shutil.copytree(run, tmp_path / "archive" / "run"))  # the run, its export inside, moved
    copied = tmp_path / "deploy" / "policy.onnx"  # the export alone, elsewhere: the absolute path finds the run
    copied.parent.mkdir()
    shutil.copy(onnx_path, copied)
    shutil.copy(onnx_path.with_suffix(".json"), copied.with_suffix(".json"))
    assert ExportedPolicy.load(moved / "export" / "policy.onnx").run == moved / "export" / ".."
    assert ExportedPolicy.load(copied).run == run.resolve()
    cfg = compose_cfg("evaluate", "policy=onnx", f"onnx={moved / 'export' / 'policy.onnx'}", "episodes=1")
    evaluate(cfg)
    name = "onnx_final_solenopsis_seed20000_ep1.json"  # next to the moved run, its config used
    assert (moved / "eval" / name).exists() and not (run / "eval" / name).exists()


def test_an_env_of_another_observation_size_is_refused(runs):
    _, onnx_path, _ = runs("solenopsis", "ppo")
    g20_run, *_ = runs("g20_left", "ppo")
    cfg = compose_cfg("evaluate", "policy=onnx", f"onnx={onnx_path}", f"run={g20_run}", "episodes=1")
    with pytest.raises(ConfigError, match=r"observations of size 28; robot g20_left's env gives size 74") as e:
        evaluate(cfg)
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="policy=onnx needs onnx="):
        evaluate(compose_cfg("evaluate", "policy=onnx", "episodes=1"))


def test_existing_files_are_refused_unless_overwrite(runs, tmp_path):
    run, onnx_path, meta_path = runs("solenopsis", "rsl_ppo")
    before = onnx_path.read_bytes(), meta_path.read_text()
    with pytest.raises(ConfigError, match=f"out: {onnx_path} already exists.*overwrite=true"):
        export_policy(run)
    assert (onnx_path.read_bytes(), meta_path.read_text()) == before
    out = tmp_path / "deploy" / "walker.onnx"
    assert export_policy(run, "latest", out) == (out, out.with_suffix(".json"))
    out.unlink()  # the metadata alone still blocks
    with pytest.raises(ConfigError, match="walker.json already exists"):
        export_policy(run, "latest", out)
    assert export_policy(run, "best", out, overwrite=True) == (out, out.with_suffix(".json"))
    assert json.loads(out.with_suffix(".json").read_text())["checkpoint"].endswith("best.pt")
    assert export_policy(run, "final", tmp_path / "folder")[0] == tmp_path / "folder" / "policy.onnx"


def test_the_script_exports_and_its_errors_are_one_line(runs, tmp_path):
    run, *_ = runs("solenopsis", "ppo")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def script(*args):
        cmd = [sys.executable, str(ROOT / "scripts" / "export.py"), *args]
        return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    ok = script(f"run={run}", f"out={tmp_path / 'p.onnx'}")
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "p.onnx").stat().st_size > 1000 and (tmp_path / "p.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "p.onnx"]  # no outputs/ or log files
    again = script(f"run={run}", f"out={tmp_path / 'p.onnx'}")
    assert again.returncode == 2 and again.stderr.strip().splitlines() == [
        f"error: out: {tmp_path / 'p.onnx'} already exists; choose another out= or pass overwrite=true"
    ]
    before = digest(run)
    typo = script(f"run={run}", "+checkpont=step_1024")  # refused, not final.pt exported in its place
    takes = "export.py takes run=, checkpoint=, out=, overwrite="
    assert typo.returncode == 2 and typo.stderr.strip().splitlines() == [
        f"error: checkpont: no such export setting; {takes}"
    ]
    deleted = script(f"run={run}", "~checkpoint")
    assert deleted.returncode == 2 and deleted.stderr.strip().splitlines() == [
        "error: ~checkpoint: export.py's settings cannot be deleted; it takes run=, checkpoint=, out=, overwrite="
    ]
    assert digest(run) == before and sorted(p.name for p in tmp_path.iterdir()) == ["p.json", "p.onnx"]
    (tmp_path / "5").symlink_to(run)  # Hydra reads run=5 as the number 5: it names the folder 5
    named = script("run=5", "out=6", "checkpoint=latest")
    assert named.returncode == 0, named.stderr
    recorded = json.loads((tmp_path / "6" / "policy.json").read_text())["run"]  # relative to the export
    assert (tmp_path / "6" / recorded).resolve() == (tmp_path / "5").resolve()
    lossy = script("run=5.0")  # what was typed is lost (5.0 reads as 5.0, "5.00" too): refused, not guessed
    assert lossy.returncode == 2 and lossy.stderr.strip().splitlines() == [
        "error: run: a path, got 5.0; quote a path Hydra would read as a value: run=\"'<path>'\""
    ]


def test_a_bad_run_or_checkpoint_is_a_one_line_error(runs, tmp_path):
    with pytest.raises(CheckpointError, match=f"run={tmp_path / 'nope'}: no config.yaml there") as e:
        export_policy(tmp_path / "nope")
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="run: export needs run="):
        export_policy("")
    run, *_ = runs("solenopsis", "ppo")
    with pytest.raises(CheckpointError, match="step_7.zip does not exist"):
        export_policy(run, str(run / "checkpoints" / "step_7.zip"), tmp_path / "x.onnx")
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_privileged_run_exports_the_policy_columns_only(tmp_path):
    """An rsl_ppo actor of an env with privileged columns reads the policy columns: the graph takes those, the
    metadata says so, and evaluate.py feeds the env's leading columns."""
    run = tmp_path / "run"
    train(compose_cfg("train", *short("solenopsis", *STEPS, "task.velocity.privileged_obs=true",
                                      algo="rsl_ppo")), run)  # fmt: skip
    onnx_path, meta_path = export_policy(run)
    meta = json.loads(meta_path.read_text())["observation"]
    env = make_env(run_config(run))
    policy_dim, size = env.unwrapped.policy_obs_dim, env.observation_space.shape[0]
    names = [n for n, s in env.unwrapped.obs_slices.items() if s.stop <= policy_dim]
    env.close()
    assert (meta["size"], meta["env_size"]) == (policy_dim, size) and policy_dim < size
    assert [t["name"] for t in meta["layout"]] == names and meta["layout"][-1]["stop"] == policy_dim
    assert session(onnx_path).get_inputs()[0].shape == ["batch", policy_dim]
    common = ["episodes=1", "checkpoint=final"]
    trained = evaluate(compose_cfg("evaluate", f"run={run}", *common))
    exported = evaluate(compose_cfg("evaluate", "policy=onnx", f"onnx={onnx_path}", *common))
    for key, value in trained["solenopsis"].items():
        assert exported["solenopsis"][key] == pytest.approx(value, rel=0, abs=1e-6), key


def test_the_sdk_mapping_names_its_channels_and_asks_for_rounding():
    from dexwheel.rl.export import action_description, observation_layout
    from dexwheel.robots.g20 import SDK_CHANNELS, SDK_MAX_VALUE

    cfg = compose_cfg("train", "robot=g20_left", "action=sdk255")
    env = make_env(cfg)
    act = action_description(env, cfg)
    layout = observation_layout(env, env.observation_space.shape[0])
    env.close()
    assert act["mapping"] == "sdk255" and act["size"] == SDK_CHANNELS == len(act["joints"])
    assert act["joints"][0] == "thumb_cmc_pitch" and act["joints"][11] == "reserved_11" and act["integer"]
    assert act["clip"] == [[0.0] * SDK_CHANNELS, [float(SDK_MAX_VALUE)] * SDK_CHANNELS]
    assert [t["name"] for t in layout] == ["qpos", "qvel", "goal", "last_action"] and layout[-1]["stop"] == 78


def copy_export(onnx_path, folder):
    """A copy of an export's two files in ``folder``: ``(onnx, json)``."""
    folder.mkdir(exist_ok=True)
    shutil.copy(onnx_path, folder / "policy.onnx")
    shutil.copy(onnx_path.with_suffix(".json"), folder / "policy.json")
    return folder / "policy.onnx", folder / "policy.json"


def test_an_onnx_of_another_export_is_refused(runs, tmp_path):
    run, onnx_path, meta_path = runs("solenopsis", "ppo")
    _, other, _ = runs("solenopsis", "rsl_ppo")  # the same observation size: only the digest tells them apart
    assert json.loads(meta_path.read_text())["onnx"]["sha256"] == hashlib.sha256(onnx_path.read_bytes()).hexdigest()
    mixed, mixed_meta = copy_export(onnx_path, tmp_path / "mixed")
    shutil.copy(other, mixed)
    with pytest.raises(ConfigError, match=r"is not the model .* describes \(its onnx.sha256 differs\)") as e:
        ExportedPolicy.load(mixed)
    assert str(mixed) in str(e.value) and str(mixed_meta) in str(e.value) and "\n" not in str(e.value)
    before = digest(run)
    with pytest.raises(ConfigError, match="is not the model"):
        evaluate(compose_cfg("evaluate", "policy=onnx", f"onnx={mixed}", "episodes=1"))
    assert digest(run) == before  # nothing recorded


def test_an_export_without_a_digest_plays_with_a_warning_if_version_1(runs, tmp_path):
    _, onnx_path, _ = runs("solenopsis", "ppo")
    legacy, legacy_meta = copy_export(onnx_path, tmp_path)
    meta = json.loads(legacy_meta.read_text())
    del meta["onnx"]["sha256"]
    legacy_meta.write_text(json.dumps({**meta, "format_version": 1}))  # as exports before the digest were
    with pytest.warns(UserWarning, match="version 1 export, without the sha256 of policy.onnx"):
        assert ExportedPolicy.load(legacy).metadata["checkpoint"] == meta["checkpoint"]
    legacy_meta.write_text(json.dumps(meta))  # a version 2 export that lost its digest
    with pytest.raises(ConfigError, match=f"{legacy_meta} has no onnx.sha256"):
        ExportedPolicy.load(legacy)


def test_corrupt_export_files_are_one_line_errors_naming_the_file(runs, tmp_path):
    _, onnx_path, _ = runs("solenopsis", "ppo")
    path, meta_path = copy_export(onnx_path, tmp_path)
    good = meta_path.read_bytes()

    def refused(match, file):
        with pytest.raises(ConfigError, match=match) as e:
            ExportedPolicy.load(path)
        assert str(e.value).startswith(f"onnx: {file} ") and "\n" not in str(e.value)

    meta_path.write_bytes(b"\xff" + good)  # not UTF-8
    refused("cannot be read as JSON", meta_path)
    meta = json.loads(good)
    meta_path.write_text(json.dumps({k: v for k, v in meta.items() if k != "observation"}))
    refused(r"has no observation.size \(int\); export the run again", meta_path)
    meta_path.write_bytes(good)
    path.write_bytes(onnx_path.read_bytes()[:500])  # truncated: its digest differs
    refused("is not the model", path)
    del meta["onnx"]["sha256"]
    meta_path.write_text(json.dumps({**meta, "format_version": 1}))  # a version 1 export: onnxruntime reads it
    with pytest.warns(UserWarning, match="version 1 export"):
        refused(r"is not a valid ONNX model \(.*INVALID_PROTOBUF", path)
    meta_path.write_bytes(b"\xff" + good)  # evaluate.py: one line, exit status 2
    cmd = [sys.executable, str(ROOT / "scripts" / "evaluate.py"), "policy=onnx", f"onnx={path}", "episodes=1"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"error: onnx: {meta_path} cannot be read as JSON "
        "('utf-8' codec can't decode byte 0xff in position 0: invalid start byte)"
    ]
