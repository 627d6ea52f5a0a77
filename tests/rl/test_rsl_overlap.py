"""``algo.params.overlap``: rsl_rl's loop with the next rollout collected while PPO updates on the last."""

import pytest
import torch
from cfgutil import compose_cfg, short

from dexwheel.rl.checkpoints import load_rsl
from dexwheel.rl.rsl import RslLearner
from dexwheel.rl.rsl.overlap import collector_of, sync
from dexwheel.rl.schema import validate
from dexwheel.rl.training import train

# every test here trains, or runs a script on a trained run: more than a second each, out of `make test-fast`
pytestmark = pytest.mark.slow

OVERLAP = "algo.params.overlap=true"


def learner(tmp_path, *extra):
    cfg = compose_cfg("train", "robot=solenopsis", "algo=rsl_ppo", "train.num_envs=4",
                      "algo.params.num_steps_per_env=16", *extra)  # fmt: skip
    train_cfg, _, params, policy = validate(cfg)
    torch.set_num_threads(train_cfg.torch_threads)
    return RslLearner(cfg, train_cfg, params, policy, tmp_path, None)


def weights(learner: RslLearner) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in learner.runner.alg.get_policy().state_dict().items()}


def same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def run(tmp_path, iterations: int, *extra) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    one = learner(tmp_path, *extra)
    one.runner.learn(iterations)
    out = weights(one)
    one.close()
    return out


def test_one_iteration_is_rsl_rls_own_to_the_bit_and_later_ones_lag_one_update(tmp_path):
    """Its first rollout is collected before any update, as in rsl_rl's loop; from the second on, each rollout
    is collected by the models from before the update that runs beside it, so the weights part ways."""
    assert same(run(tmp_path / "a", 1), run(tmp_path / "b", 1, OVERLAP))
    assert not same(run(tmp_path / "c", 3), run(tmp_path / "d", 3, OVERLAP))


def test_the_collector_has_its_own_models_and_storage_until_synced(tmp_path):
    one = learner(tmp_path, OVERLAP)
    alg = one.runner.alg
    collector = collector_of(alg)
    assert collector.storage is not alg.storage and collector.actor is not alg.actor
    with torch.no_grad():
        next(alg.actor.parameters()).add_(1.0)
    assert not same(collector.actor.state_dict(), alg.actor.state_dict())
    sync(collector, alg)
    assert same(collector.actor.state_dict(), alg.actor.state_dict())
    assert same(collector.critic.state_dict(), alg.critic.state_dict())
    one.close()


def test_an_overlapping_run_trains_reproducibly_and_counts_its_steps(tmp_path):
    """A whole run (evaluations and checkpoints between chunks): two with one seed end with the same weights,
    bit for bit, whichever thread drew its random numbers first."""
    overrides = short("solenopsis", "train.total_timesteps=1024", "train.eval_every_steps=512", OVERLAP,
                      algo="rsl_ppo")  # fmt: skip
    for name in ("a", "b"):
        train(compose_cfg("train", *overrides), tmp_path / name)
    a, b = (load_rsl(tmp_path / n / "checkpoints" / "final.pt") for n in ("a", "b"))
    assert same(a["actor_state_dict"], b["actor_state_dict"]) and same(a["critic_state_dict"], b["critic_state_dict"])
    assert a["infos"]["num_timesteps"] == 1024
    log = (tmp_path / "a" / "train.log").read_text()
    assert "done step=1024" in log
