"""rsl_rl's learning loop with the next rollout collected while PPO updates on the last (``algo.params.overlap``).

On a laptop's cores the simulation and the learner take turns: the vector env's threads idle while PPO
updates, and the update's thread idles while the envs step (docs/notes/2026-12-training-time.md).
Here the update of iteration ``k`` runs on a second thread while the main thread collects rollout ``k + 1``
with a frozen copy of the models from before that update (the collector), so rollout ``k + 1`` is one update
behind the policy it trains: PPO's ratio and the adaptive schedule's KL start from that lag instead of from
zero, and the clip bounds the step as it does for any stale sample. The collector's models take the learner's
weights (and observation normalisers) after each update; the two rollout storages trade places.

The same seed gives the same weights, whichever thread runs first. Both threads would draw from torch's one
global generator: the collector its action noise, the update its mini-batch permutation and, in each mini-batch,
actions it samples and discards (rsl_rl's update calls the actor with ``stochastic_output=True`` for the log-prob
and entropy). So the collector waits until the update has drawn its permutation, and the update's discarded
samples come from a generator of its own (the same distribution; PPO's arithmetic does not read them).
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Generator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch
from rsl_rl.algorithms import PPO
from rsl_rl.storage import RolloutStorage


def collector_of(alg: PPO) -> PPO:
    """A PPO object that acts and stores like ``alg`` but with its own models and storage (a shallow copy
    otherwise: it never updates, so the optimiser and the extensions stay the learner's)."""
    collector = copy.copy(alg)
    collector.actor = copy.deepcopy(alg._raw_actor)  # type: ignore[attr-defined]
    collector.critic = copy.deepcopy(alg._raw_critic)  # type: ignore[attr-defined]
    collector.storage = copy.deepcopy(alg.storage)
    collector.transition = RolloutStorage.Transition()
    return collector


def sync(collector: PPO, alg: PPO) -> None:
    """The collector's models take the learner's weights and normaliser statistics."""
    collector.actor.load_state_dict(alg._raw_actor.state_dict())  # type: ignore[attr-defined]
    collector.critic.load_state_dict(alg._raw_critic.state_dict())  # type: ignore[attr-defined]


def _signalling(generator: Callable[..., Generator], drawn: threading.Event) -> Callable[..., Generator]:
    """``storage.mini_batch_generator`` that sets ``drawn`` once its permutation is drawn (at the first batch)."""

    def wrapped(*args: Any, **kwargs: Any) -> Generator:
        batches = generator(*args, **kwargs)
        first = next(batches)
        drawn.set()
        yield first
        yield from batches

    return wrapped


def _sampling_from(distribution: Any, generator: torch.Generator) -> Callable[[], torch.Tensor]:
    """``distribution.sample`` (rsl_rl's ``GaussianDistribution``) drawing from ``generator``."""

    def sample() -> torch.Tensor:
        normal = distribution._distribution
        return torch.normal(normal.loc, normal.scale.expand_as(normal.loc), generator=generator)

    return sample


class OverlappingLoop:
    """``learn(runner, iterations)``: rsl_rl's ``OnPolicyRunner.learn`` (rollout, returns, update, log) with
    the update of one iteration and the rollout of the next on two threads."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ppo-update")
        self.drawn = threading.Event()
        self.discarded = torch.Generator().manual_seed(0)  # the update's discarded action samples
        #: made at the first ``learn`` (before any update: afterwards the models hold tensors of the autograd
        #: graph, which cannot be deep-copied), synced at each later one
        self.collector: PPO | None = None

    def _update(self, alg: PPO) -> Future:
        self.drawn.clear()
        storage = alg.storage

        def timed() -> tuple[dict[str, float], float]:
            t0 = time.time()
            storage.mini_batch_generator = _signalling(  # type: ignore[method-assign]
                type(storage).mini_batch_generator.__get__(storage), self.drawn)  # fmt: skip
            distribution = alg._raw_actor.distribution  # type: ignore[attr-defined]
            distribution.sample = _sampling_from(distribution, self.discarded)
            try:
                return alg.update(), time.time() - t0
            finally:  # no copy of the storage or the models carries these along
                del storage.mini_batch_generator
                del distribution.sample

        return self.pool.submit(timed)

    def _wait_for_draw(self, pending: Future) -> None:
        while not self.drawn.wait(0.001):
            if pending.done():  # it failed before drawing: its error is raised by result()
                return

    @staticmethod
    def _collect(runner: Any, collector: PPO, obs: Any) -> Any:
        with torch.inference_mode():
            for _ in range(runner.cfg["num_steps_per_env"]):
                actions = collector.act(obs)
                obs, rewards, dones, extras = runner.env.step(actions.to(runner.env.device))
                obs, rewards, dones = obs.to(runner.device), rewards.to(runner.device), dones.to(runner.device)
                collector.process_env_step(obs, rewards, dones, extras)
                runner.logger.process_env_step(rewards, dones, extras, None)
            collector.compute_returns(obs)
        return obs

    def learn(self, runner: Any, iterations: int) -> None:
        alg = runner.alg
        if getattr(alg, "rnd", None) is not None or alg.actor.is_recurrent or alg.critic.is_recurrent:
            raise ValueError("algo.params.overlap: only for feed-forward PPO without RND")
        obs = runner.env.get_observations().to(runner.device)
        alg.train_mode()
        runner.logger.init_logging_writer()
        if self.collector is None:
            self.collector = collector_of(alg)
        collector = self.collector
        sync(collector, alg)
        start_it = runner.current_learning_iteration
        t0 = time.time()
        obs = self._collect(runner, collector, obs)
        collect_time = time.time() - t0
        for it in range(start_it, start_it + iterations):
            alg.storage, collector.storage = collector.storage, alg.storage  # the learner takes the rollout
            pending = self._update(alg)
            next_collect = 0.0
            if it + 1 < start_it + iterations:
                self._wait_for_draw(pending)
                t0 = time.time()
                obs = self._collect(runner, collector, obs)  # with the models from before this update
                next_collect = time.time() - t0
            loss_dict, learn_time = pending.result()
            sync(collector, alg)
            runner.current_learning_iteration = it
            runner.logger.log(it=it, start_it=start_it, total_it=start_it + iterations, collect_time=collect_time,
                              learn_time=learn_time, loss_dict=loss_dict, learning_rate=alg.learning_rate,
                              action_std=alg.get_policy().output_std, rnd_weight=None)  # fmt: skip
            collect_time = next_collect
        if runner.logger.writer is not None:
            runner.logger.stop_logging_writer()

    def close(self) -> None:
        self.pool.shutdown()
