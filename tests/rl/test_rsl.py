"""rsl_rl PPO on the MuJoCo backend: the VecEnv adapter's conventions, the runner config, reproducibility."""

import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from cfgutil import compose_cfg, short
from tensordict import TensorDict

import dexwheel  # noqa: F401
from dexwheel.rl.checkpoints import load_rsl
from dexwheel.rl.rsl.cfg import runner_cfg
from dexwheel.rl.rsl.vec_env import RslVecEnv
from dexwheel.rl.schema import ConfigError
from dexwheel.rl.training import train
from dexwheel.robots.g20 import SDK_CHANNELS, SDK_MAX_VALUE


def wheel_leg(n=3, **kw):
    return gym.make_vec("Solenopsis-v0", num_envs=n, vectorization_mode="vector_entry_point", **kw)


def test_actions_beyond_the_bounds_act_as_the_bounds():
    a, b = RslVecEnv(wheel_leg(), seed=3), RslVecEnv(wheel_leg(), seed=3)
    big = torch.full((3, 8), 5.0)
    big[1] = -7.0
    obs_a, rew_a, _, _ = a.step(big)
    obs_b, rew_b, _, _ = b.step(big.clamp(-1.0, 1.0))
    assert torch.equal(obs_a["policy"], obs_b["policy"]) and torch.equal(rew_a, rew_b)


def test_time_outs_mark_truncations_and_the_next_observation_starts_the_next_episode():
    env = wheel_leg(episode_length_s=0.2)  # 10 control steps at 50 Hz
    venv = RslVecEnv(env, seed=0)
    steps = 0
    while True:
        obs, rewards, dones, extras = venv.step(torch.zeros(3, 8))
        steps += 1
        assert dones.dtype == torch.long and rewards.dtype == torch.float32 and rewards.shape == (3,)
        if dones.any():
            break
    assert steps == 10 and dones.tolist() == [1, 1, 1]
    assert extras["time_outs"].tolist() == [True, True, True]
    assert torch.equal(venv.episode_length_buf, torch.zeros(3, dtype=torch.long))
    first = RslVecEnv(wheel_leg(episode_length_s=0.2), seed=0).get_observations()["policy"]
    assert obs["policy"].shape == first.shape and not torch.equal(obs["policy"], first)  # a new episode's (new seed)
    assert {"Step/reward_track_lin_vel_x_exp", "Step/lin_vel_x_error"} <= extras["log"].keys()
    assert all(math.isfinite(v) for v in extras["log"].values())


def test_step_logs_count_a_fall_on_its_last_step_not_as_the_next_episodes_zeros():
    venv = RslVecEnv(wheel_leg(4, terminations={"max_tilt_rad": 0.02}), seed=0)  # a tilt of 0.02 rad ends it
    push = torch.tensor([[1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0]]).repeat(4, 1)
    for _ in range(50):
        _, rewards, dones, extras = venv.step(push)
        fell = dones.bool() & ~extras["time_outs"]
        if fell.any():
            break
    assert fell.any()
    log, frac = extras["log"], fell.float().mean().item()
    assert log["Step/terminated_tilt"] + log["Step/terminated_contact"] >= frac > 0.0
    dt = 0.02
    assert log["Step/reward_termination_penalty"] == pytest.approx(-200.0 * dt * frac)
    assert rewards[fell].max().item() < -200.0 * dt + 0.5  # the penalty is in the reward the learner gets


def test_g20_sdk_actions_are_rounded_and_clipped_to_the_sdk_range():
    def g20():
        return gym.make_vec("G20Hand-v0", num_envs=2, vectorization_mode="vector_entry_point", actions="sdk255")

    a, b = RslVecEnv(g20(), seed=0), RslVecEnv(g20(), seed=0)
    assert a.num_actions == SDK_CHANNELS
    raw = torch.tensor([[100.4] * SDK_CHANNELS, [SDK_MAX_VALUE + 50.0] * SDK_CHANNELS])
    exact = torch.tensor([[100.0] * SDK_CHANNELS, [float(SDK_MAX_VALUE)] * SDK_CHANNELS])
    obs_a, *_ = a.step(raw)  # the env refuses non-integer or out-of-range SDK values: these arrive as 100, 255
    obs_b, *_ = b.step(exact)
    assert torch.equal(obs_a["policy"], obs_b["policy"])


def test_runner_cfg_carries_the_algo_config():
    cfg = compose_cfg("train", "robot=solenopsis", "algo=rsl_ppo", "algo.policy.log_std_init=-0.5")
    rc = runner_cfg(cfg.algo.params, cfg.algo.policy, cfg.train.normalize_obs)
    assert rc["num_steps_per_env"] == cfg.algo.params.num_steps_per_env
    assert rc["algorithm"]["class_name"] == "PPO" and "num_steps_per_env" not in rc["algorithm"]
    assert rc["num_steps_per_env"] == cfg.task.train.steps_per_env == 32  # the task's rollout length
    assert rc["torch_compile_mode"] is None and rc["overlap"] is False  # the runner's, not PPO's arguments
    assert not {"torch_compile_mode", "overlap"} & rc["algorithm"].keys()
    assert rc["algorithm"]["learning_rate"] == cfg.algo.params.learning_rate
    assert rc["actor"]["hidden_dims"] == list(cfg.algo.policy.net_arch) == rc["critic"]["hidden_dims"]
    assert rc["actor"]["distribution_cfg"]["init_std"] == pytest.approx(math.exp(-0.5))
    assert rc["actor"]["obs_normalization"] and "distribution_cfg" not in rc["critic"]
    assert rc["obs_groups"] == {"actor": ["policy"], "critic": ["policy"]}
    assert runner_cfg(cfg.algo.params, cfg.algo.policy, True, "critic")["obs_groups"]["critic"] == ["critic"]


@pytest.mark.slow
def test_privileged_columns_reach_the_critic_only(tmp_path):
    env = wheel_leg(privileged_obs=True)
    venv = RslVecEnv(env, seed=0)
    obs = venv.get_observations()
    policy_dim = env.unwrapped.obs_slices["last_action"].stop
    assert venv.policy_dim == policy_dim < venv.obs_dim == env.single_observation_space.shape[0]
    assert torch.equal(obs["critic"][:, :policy_dim], obs["policy"])
    base_lin_vel = env.unwrapped.obs_slices["base_lin_vel"]
    true_vel = torch.as_tensor(env.unwrapped.task.observation()[:, base_lin_vel])  # privileged: no noise, recomputed
    assert torch.equal(obs["critic"][:, base_lin_vel], true_vel) and true_vel.abs().sum() > 0
    assert set(RslVecEnv(wheel_leg(), seed=0).get_observations().keys()) == {"policy"}
    # a privileged run trains its critic on every column and its actor on the policy columns
    overrides = short("solenopsis", "train.total_timesteps=1024", "task.velocity.privileged_obs=true", algo="rsl_ppo")
    train(compose_cfg("train", *overrides), tmp_path)
    weights = load_rsl(tmp_path / "checkpoints" / "final.pt")
    assert weights["actor_state_dict"]["mlp.0.weight"].shape[1] == policy_dim
    assert weights["critic_state_dict"]["mlp.0.weight"].shape[1] == venv.obs_dim


@pytest.mark.slow
def test_same_seed_same_weights_bit_for_bit(tmp_path):
    """Two runs with one seed on one machine (same thread counts) end with identical actors."""
    overrides = short("solenopsis", "train.total_timesteps=1024", "train.eval_every_steps=1024", algo="rsl_ppo")
    for name in ("a", "b"):
        train(compose_cfg("train", *overrides), tmp_path / name)
    a, b = (load_rsl(tmp_path / n / "checkpoints" / "final.pt")["actor_state_dict"] for n in ("a", "b"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(v, torch.zeros_like(v)) for k, v in a.items() if "normalizer._mean" in k)


@pytest.mark.slow
def test_two_processes_train_one_policy_with_gloo(tmp_path):
    """The distributed path (rsl_rl's multi-GPU training, torchrun's environment) on the CPU: two processes,
    gloo over the loopback device, a file rendezvous (no listening socket); the first process writes the run."""
    import os
    import subprocess
    import sys

    from cfgutil import ROOT

    run = tmp_path / "run"
    args = short("solenopsis", "train.total_timesteps=512", "train.eval_every_steps=256", "train.checkpoint_every_steps=256",
                 "algo.params.num_steps_per_env=32", algo="rsl_ppo")  # fmt: skip
    env = {
        **os.environ,
        "WORLD_SIZE": "2",
        "GLOO_SOCKET_IFNAME": "lo",
        "DEXWHEEL_DIST_INIT": f"file://{tmp_path / 'rendezvous'}",
    }
    procs = [
        subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "train.py"), f"hydra.run.dir={run}", *args],
            env={**env, "RANK": str(r), "LOCAL_RANK": str(r)},
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        for r in (0, 1)
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs[0][-3000:] + outs[1][-3000:]
    # 4 envs x 32 steps x 2 processes = 256 samples per iteration, counted once in the step numbers
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "best.pt",
        "final.pt",
        "step_256.pt",
        "step_512.pt",
    ]
    assert load_rsl(run / "checkpoints" / "final.pt")["iter"] == 2
    lines = (run / "train.log").read_text().splitlines()
    assert (
        sum(" - start robot=" in line for line in lines) == 1 and sum(" - done step=512" in line for line in lines) == 1
    )


@pytest.mark.parametrize("robot", ["solenopsis", "m20_legacy"])
def test_the_mirror_maps_are_the_robots_physical_mirror(robot):
    """From the symmetric start, mirrored actions give mirrored observations: every sign and swapped joint.
    (MuJoCo's contact solver is not exactly symmetric: 1e-4 apart after a step, growing; 15 steps here, with
    wheel targets up to 20 rad/s: the mirror does not depend on the action scale, the solver's drift does.)"""
    env_id = {"solenopsis": "Solenopsis-v0", "m20_legacy": "M20Legacy-v0"}[robot]
    a, b = (gym.make(env_id, reset_noise_scale=0.0, wheel_velocity_scale=20.0).unwrapped for _ in range(2))
    (obs_index, obs_sign), (act_index, act_sign) = a.mirror_maps
    commands = a.obs_slices["velocity_commands"]
    oa, _ = a.reset(seed=0)
    ob, _ = b.reset(seed=0)
    rng = np.random.default_rng(0)
    keep = np.ones(len(oa), bool)
    keep[commands] = False  # each env draws its own commands
    mirror_gap, plain_gap = [], []
    for _ in range(15):
        action = np.clip(rng.normal(0.0, 0.5, 8) + (0.0, 0.0, 0.0, 0.0, 0.6, -0.6, 0.6, -0.6), -1, 1).astype(np.float32)
        oa, *_ = a.step(action)
        ob, *_ = b.step(action[act_index] * act_sign)
        mirror_gap.append(np.abs(oa[obs_index] * obs_sign - ob)[keep])
        plain_gap.append(np.abs(oa - ob)[keep])
    # a contact event in one env and not the other spikes a wheel's velocity for a step or two
    assert np.median(mirror_gap) < 1e-4 and np.mean(mirror_gap) < 1e-2, (np.median(mirror_gap), np.mean(mirror_gap))
    assert np.mean(plain_gap) > 0.05  # the manoeuvre is not symmetric itself: the test can fail


@pytest.mark.slow
def test_a_symmetric_run_learns_mirrored_batches(tmp_path):
    from dexwheel.rl.rsl.symmetry import mirrored

    venv = RslVecEnv(wheel_leg(), seed=0)
    obs = venv.get_observations()
    doubled, actions = mirrored(venv, obs, torch.ones(3, 8))
    assert doubled.batch_size[0] == 6 and torch.equal(doubled["policy"][:3], obs["policy"])
    twice, _ = mirrored(venv, TensorDict({"policy": doubled["policy"][3:]}, batch_size=[3]))
    assert torch.allclose(twice["policy"][3:], obs["policy"])  # the mirror of the mirror
    overrides = short("solenopsis", "train.total_timesteps=1024", "algo.params.symmetry=true", algo="rsl_ppo")
    train(compose_cfg("train", *overrides), tmp_path)
    assert (tmp_path / "checkpoints" / "final.pt").exists()
    hand = short("g20_left", "algo.params.symmetry=true", algo="rsl_ppo")
    with pytest.raises(ConfigError, match="algo.params.symmetry: the g20_left env has no left-right mirror"):
        train(compose_cfg("train", *hand), tmp_path / "hand")


@pytest.mark.slow
def test_the_logged_mirror_loss_reuses_the_updates_forward_pass_with_the_same_numbers(tmp_path, monkeypatch):
    """AugmentedSymmetry skips rsl_rl's second actor pass: the same weights and the same logged loss, bit for bit."""
    from rsl_rl.algorithms import PPO

    from dexwheel.rl.rsl.symmetry import AugmentedSymmetry

    losses: dict[str, list[float]] = {}
    update = PPO.update

    def logged(run: str):
        def wrapped(self):
            assert isinstance(self.symmetry, AugmentedSymmetry) == (run == "reused")
            out = update(self)
            losses.setdefault(run, []).append(out["symmetry"])
            return out

        return wrapped

    overrides = short("solenopsis", "train.total_timesteps=4096", "train.eval_every_steps=4096", algo="rsl_ppo")
    monkeypatch.setattr(PPO, "update", logged("reused"))
    train(compose_cfg("train", *overrides), tmp_path / "reused")
    monkeypatch.setattr(AugmentedSymmetry, "like", classmethod(lambda cls, symmetry: symmetry))  # rsl_rl's own
    monkeypatch.setattr(PPO, "update", logged("rsl_rl"))
    train(compose_cfg("train", *overrides), tmp_path / "rsl_rl")
    a, b = (load_rsl(tmp_path / n / "checkpoints" / "final.pt")["actor_state_dict"] for n in ("reused", "rsl_rl"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert len(losses["reused"]) >= 2 and losses["reused"] == losses["rsl_rl"] and min(losses["reused"]) > 0


@pytest.mark.parametrize(("robot", "mirrored_batches"), [("solenopsis", True), ("g20_left", False)])
def test_symmetry_is_on_by_default_where_the_env_has_a_mirror(robot, mirrored_batches, tmp_path):
    from dexwheel.rl.rsl import RslLearner
    from dexwheel.rl.schema import validate

    cfg = compose_cfg("train", f"robot={robot}", "algo=rsl_ppo", "train.num_envs=2")
    assert cfg.algo.params.symmetry is None
    train_cfg, _, params, policy = validate(cfg)
    learner = RslLearner(cfg, train_cfg, params, policy, tmp_path, None)
    assert (learner.cfg["algorithm"].get("symmetry_cfg") is not None) == mirrored_batches
    assert (learner.runner.alg.symmetry is not None) == mirrored_batches
    learner.close()


def test_updates_run_on_learner_threads_and_rollouts_on_torch_threads(tmp_path, monkeypatch):
    from rsl_rl.algorithms import PPO

    from dexwheel.rl.rsl import RslLearner
    from dexwheel.rl.schema import validate

    seen: dict[str, set[int]] = {"act": set(), "update": set()}
    for name in seen:
        original = getattr(PPO, name)

        def spy(self, *args, _name=name, _original=original, **kwargs):
            seen[_name].add(torch.get_num_threads())
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(PPO, name, spy)
    cfg = compose_cfg("train", "robot=solenopsis", "algo=rsl_ppo", "train.num_envs=2", "train.learner_threads=3")
    train_cfg, _, params, policy = validate(cfg)
    torch.set_num_threads(train_cfg.torch_threads)
    learner = RslLearner(cfg, train_cfg, params, policy, tmp_path, None)
    learner.runner.learn(2)
    learner.close()
    assert seen == {"act": {1}, "update": {3}} and torch.get_num_threads() == 1


@pytest.mark.slow
def test_a_std_floor_clamps_the_policys_noise_and_only_rsl_ppo_takes_one_or_a_compile_mode():
    from dexwheel.rl.schema import validate

    cfg = compose_cfg("train", "robot=solenopsis", "algo.policy.min_std=0.3", "algo.policy.log_std_init=-3")
    _, _, params, policy = validate(cfg)
    rc = runner_cfg(params, policy, True)
    assert rc["actor"]["distribution_cfg"]["std_range"] == [0.3, 1e6]
    assert "std_range" not in runner_cfg(cfg.algo.params, {**cfg.algo.policy, "min_std": None}, True)["actor"][
        "distribution_cfg"]  # fmt: skip
    from rsl_rl.modules.distribution import GaussianDistribution

    gaussian = GaussianDistribution(8, init_std=rc["actor"]["distribution_cfg"]["init_std"], std_range=(0.3, 1e6))
    gaussian.update(torch.zeros(2, 8))
    assert torch.allclose(gaussian._distribution.scale, torch.full((2, 8), 0.3))  # exp(-3) = 0.05 is held at 0.3
    for bad in (["algo=ppo", "+algo.policy.min_std=0.3"], ["algo.policy.min_std=-1"]):
        with pytest.raises(ConfigError, match="algo.policy.min_std"):
            validate(compose_cfg("train", "robot=solenopsis", *bad))
    with pytest.raises(ConfigError, match="algo.params.torch_compile_mode: 'reduce-overhead' is not one of"):
        validate(compose_cfg("train", "robot=solenopsis", "algo.params.torch_compile_mode=reduce-overhead"))
