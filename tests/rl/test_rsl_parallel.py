"""``train.critic_thread``: rsl_rl's PPO update with the critic's half of each mini-batch on a second thread."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from cfgutil import compose_cfg

from dexwheel.rl.rsl import RslLearner
from dexwheel.rl.rsl.parallel import _Critic
from dexwheel.rl.schema import ConfigError, critic_thread, validate

# every test here trains, or runs a script on a trained run: more than a second each, out of `make test-fast`
pytestmark = pytest.mark.slow


def learner(tmp_path, *extra) -> RslLearner:
    cfg = compose_cfg("train", "robot=solenopsis", "algo=rsl_ppo", "train.num_envs=4",
                      "algo.params.num_steps_per_env=16", *extra)  # fmt: skip
    train_cfg, _, params, policy = validate(cfg)
    torch.set_num_threads(train_cfg.torch_threads)
    return RslLearner(cfg, train_cfg, params, policy, tmp_path, None)


def weights(alg) -> dict[str, torch.Tensor]:
    return {
        f"{name}.{k}": v.clone() for name in ("actor", "critic") for k, v in getattr(alg, name).state_dict().items()
    }


def same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def trained(tmp_path, iterations: int, *extra) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], set[str]]:
    """The actor's and critic's weights before and after ``iterations``, and the threads the critic's passes ran on."""
    one = learner(tmp_path, *extra)
    alg = one.runner.alg
    before, threads = weights(alg), set()

    def forward(*_args) -> None:
        if torch.is_grad_enabled():  # the update's passes, not the rollouts' value estimates
            threads.add(threading.current_thread().name.split("_")[0])

    def backward(grad: torch.Tensor) -> None:
        threads.add(threading.current_thread().name.split("_")[0])

    alg.critic.register_forward_hook(forward)
    next(alg.critic.parameters()).register_hook(backward)
    one.runner.learn(iterations)
    after = weights(alg)
    one.close()
    return before, after, threads


def test_the_critics_half_runs_on_its_own_thread_to_the_same_weights_bit_for_bit(tmp_path):
    """Mirrored mini-batches (the wheel-leg default) over three updates: the same actor and critic either way."""
    start, on, on_threads = trained(tmp_path / "on", 3, "train.critic_thread=true")
    _, off, off_threads = trained(tmp_path / "off", 3, "train.critic_thread=false")
    assert on_threads == {"ppo-critic"} and off_threads == {"MainThread"}
    assert same(on, off)
    changed = {k.split(".")[0] for k in start if not torch.equal(start[k], on[k])}
    assert changed == {"actor", "critic"}  # both halves learned


def test_beside_the_overlapping_rollouts_too(tmp_path):
    """``algo.params.overlap`` runs the update on a thread of its own: the critic's thread works from there too."""
    overlap = "algo.params.overlap=true"
    _, on, on_threads = trained(tmp_path / "on", 3, overlap, "train.critic_thread=true")
    _, off, off_threads = trained(tmp_path / "off", 3, overlap)  # off by default beside the rollouts
    assert on_threads == {"ppo-critic"} and off_threads == {"ppo-update"} and same(on, off)


def test_a_call_on_other_observations_is_the_critics_own():
    """The update's critic call reads the observations the actor just read; any other call computes there."""
    linear = torch.nn.Linear(3, 1)

    def critic(obs, masks=None, hidden_state=None):
        return linear(obs)

    side = ThreadPoolExecutor(max_workers=1)
    wrapped = _Critic(critic, side)
    a, b = torch.ones(2, 3), torch.zeros(2, 3)
    wrapped.start(a)
    assert torch.equal(wrapped(b), linear(b))  # started on a, asked for b: b's values, computed here
    assert wrapped.pending is None
    wrapped.start(a)
    values = wrapped(a)
    values.sum().backward()
    assert torch.equal(values, linear(a)) and torch.equal(linear.weight.grad, a.sum(0, keepdim=True))
    side.shutdown()


def test_on_by_default_only_for_a_cpu_learner_on_one_thread_and_refused_where_it_cannot_run():
    def resolved(*overrides, overlap=False):
        train_cfg, *_ = validate(compose_cfg("train", "robot=solenopsis", "algo=rsl_ppo", *overrides))
        return critic_thread(train_cfg, overlap)

    assert resolved() and not resolved("train.learner_threads=2") and not resolved(overlap=True)
    assert not resolved("train.device=cuda:0") and resolved("train.critic_thread=true", overlap=True)
    refused = {
        "algo=ppo": "only rsl_ppo's updates have one",
        "train.device=cuda:0": "train.device=cuda:0 computes both halves",
        "train.learner_threads=2": "train.critic_thread=true with train.learner_threads=2",
    }
    for override, message in refused.items():
        with pytest.raises(ConfigError, match=message):
            validate(compose_cfg("train", "robot=solenopsis", override, "train.critic_thread=true"))
