"""Checkpoints: atomic, pruned, and a corrupted or missing one gives a clear error; an rsl_rl one carries its SHA-256."""

import pickle
import zipfile

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

from dexwheel.rl.checkpoints import (
    CheckpointError,
    check_checkpoint,
    latest_checkpoint,
    load_rsl,
    load_vecnormalize,
    prune,
    resolve_checkpoint,
    save_checkpoint,
    save_rsl,
    stats_path,
    step_checkpoints,
)


@pytest.fixture(scope="module")
def model_and_stats():
    venv = VecNormalize(DummyVecEnv([lambda: gym.make("CartPole-v1")]), norm_reward=False)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=32, seed=0, device="cpu")
    model.learn(64)
    return model, venv


def test_checkpoint_round_trip_keeps_weights_and_statistics(tmp_path, model_and_stats):
    model, venv = model_and_stats
    path = save_checkpoint(model, tmp_path / "checkpoints" / "step_64", venv)
    check_checkpoint(path)
    loaded = PPO.load(path, device="cpu")
    obs = np.zeros((1, 4), dtype=np.float32)
    np.testing.assert_array_equal(model.predict(obs, deterministic=True)[0], loaded.predict(obs, deterministic=True)[0])
    stats = load_vecnormalize(path, True)
    np.testing.assert_array_equal(stats.obs_rms.mean, venv.obs_rms.mean)
    assert sorted(p.name for p in path.parent.iterdir()) == ["step_64.vecnormalize.pkl", "step_64.zip"]


def test_prune_keeps_the_newest(tmp_path, model_and_stats):
    model, venv = model_and_stats
    for step in (100, 200, 300, 400):
        save_checkpoint(model, tmp_path / "checkpoints" / f"step_{step}", venv)
    save_checkpoint(model, tmp_path / "checkpoints" / "best", venv)
    prune(tmp_path, keep=2)
    assert [p.name for p in step_checkpoints(tmp_path)] == ["step_300.zip", "step_400.zip"]
    assert (tmp_path / "checkpoints" / "best.zip").exists()
    assert not stats_path(tmp_path / "checkpoints" / "step_100.zip").exists()
    assert latest_checkpoint(tmp_path).name == "step_400.zip"


def test_a_corrupted_checkpoint_is_named(tmp_path, model_and_stats):
    model, venv = model_and_stats
    path = save_checkpoint(model, tmp_path / "step_1", venv)
    path.write_bytes(path.read_bytes()[:200])  # truncated, as by a crash without atomic writes
    with pytest.raises(CheckpointError, match="step_1.zip"):
        check_checkpoint(path)
    with zipfile.ZipFile(path := tmp_path / "other.zip", "w") as z:
        z.writestr("readme.txt", "not a model")
    with pytest.raises(CheckpointError, match="incomplete"):
        check_checkpoint(path)
    stats_path(tmp_path / "x.zip").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="corrupted"):
        load_vecnormalize(tmp_path / "x.zip", True)


def test_statistics_belong_to_their_zip_and_are_required_where_the_run_normalises(tmp_path, model_and_stats):
    """The statistics record their zip's SHA-256: a pair from two saves (interrupted between its two renames)
    is refused; missing ones are refused where the run normalises observations, None where it does not."""
    model, venv = model_and_stats
    path = save_checkpoint(model, tmp_path / "best", venv)
    first = stats_path(path).read_bytes()
    model.learn(32, reset_num_timesteps=False)  # other weights, saved under the same name
    save_checkpoint(model, tmp_path / "best", venv)
    assert load_vecnormalize(path, True) is not None
    stats_path(path).write_bytes(first)  # the earlier save's statistics beside the later zip
    with pytest.raises(CheckpointError, match="best.vecnormalize.pkl was saved with another best.zip"):
        load_vecnormalize(path, True)
    with open(stats_path(path), "wb") as f:  # a bare VecNormalize, as saved before the digest: used as it is
        pickle.dump(venv, f)
    np.testing.assert_array_equal(load_vecnormalize(path, True).obs_rms.mean, venv.obs_rms.mean)
    stats_path(path).unlink()
    with pytest.raises(CheckpointError, match=r"best.vecnormalize.pkl is missing: the run normalises observations"):
        load_vecnormalize(path, True)
    assert load_vecnormalize(path, False) is None


def test_a_missing_checkpoint_or_run_is_named(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        check_checkpoint(tmp_path / "nope.zip")
    with pytest.raises(CheckpointError, match="does not exist"):
        latest_checkpoint(tmp_path / "no_run")
    (tmp_path / "empty_run").mkdir()
    with pytest.raises(CheckpointError, match="no checkpoint"):
        latest_checkpoint(tmp_path / "empty_run")


def test_a_run_without_its_final_checkpoint_names_what_it_holds_and_the_option_that_picks_it(tmp_path):
    folder = tmp_path / "run" / "checkpoints"
    folder.mkdir(parents=True)
    for name in ("step_4096.zip", "step_8192.zip", "best.zip"):
        (folder / name).write_bytes(b"")
    with pytest.raises(CheckpointError) as err:
        resolve_checkpoint(tmp_path / "run", "final", "ppo")
    assert str(err.value) == (
        f"checkpoint=final: {folder / 'final.zip'} does not exist (an interrupted or unfinished run); {folder} holds "
        "step_4096.zip, step_8192.zip, best.zip: pick one with checkpoint=latest (step_8192.zip) or checkpoint=best "
        "or checkpoint=<one of them>"
    )
    assert resolve_checkpoint(tmp_path / "run", "best", "ppo") == folder / "best.zip"
    (folder / "best.zip").unlink()
    for name in ("step_4096.zip", "step_8192.zip"):
        (folder / name).unlink()
    with pytest.raises(CheckpointError, match=r"nor does any other checkpoint in .* \(the run saved none yet\)$"):
        resolve_checkpoint(tmp_path / "run", "best", "ppo")


def rsl_state() -> dict:
    gen = torch.Generator().manual_seed(0)
    return {"actor_state_dict": {"mlp.0.weight": torch.randn(16, 8, generator=gen)}, "critic_state_dict": {},
            "optimizer_state_dict": {"state": {}, "param_groups": []}, "iter": 3,
            "infos": {"num_timesteps": 768}}  # fmt: skip


@pytest.mark.slow
def test_an_rsl_checkpoint_refuses_any_changed_byte_naming_the_file(tmp_path):
    path = save_rsl(rsl_state(), tmp_path / "checkpoints" / "step_768")
    assert [p.name for p in path.parent.iterdir()] == ["step_768.pt"]  # one file: the SHA-256 is inside
    data = path.read_bytes()
    assert zipfile.ZipFile(path).comment.startswith(b"dexwheel-sha256:")  # any zip reader skips it
    torch.testing.assert_close(
        load_rsl(path)["actor_state_dict"]["mlp.0.weight"], rsl_state()["actor_state_dict"]["mlp.0.weight"]
    )
    changed = tmp_path / "changed.pt"
    for at in range(len(data)):  # every byte: the archive, its end record, the comment and the digest
        flipped = bytearray(data)
        flipped[at] ^= 0x01
        changed.write_bytes(bytes(flipped))
        with pytest.raises(CheckpointError, match=f"checkpoint {changed} ") as e:
            load_rsl(changed)
        assert "\n" not in str(e.value)
    changed.write_bytes(data[:-40])  # truncated
    with pytest.raises(CheckpointError, match="changed.pt is corrupted or not an rsl_rl checkpoint"):
        check_checkpoint(changed)
