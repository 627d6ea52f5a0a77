"""rsl_rl's PPO update with the critic's half of each mini-batch on a second thread (``train.critic_thread``).

The actor and the critic share no weights, so each mini-batch's gradient is two independent computations, which
rsl_rl's update runs one after the other on one core while the simulation's threads wait for it. Here the
critic's half runs on a second thread beside the actor's: its forward pass starts when the update calls the
actor (the critic reads the same observations), and its backward pass starts when the update's backward reaches
the values, so it runs beside the actor's backward; the update's backward returns once both are done, before the
gradients are clipped and Adam steps. Each half runs the operations it ran before on the same inputs, one torch
thread each, so the weights are the same to the bit (``tests/rl/test_rsl_parallel.py``).

rsl_rl's ``PPO.update`` runs unchanged: only the two models it calls are wrapped while it runs. A call the update
makes otherwise than expected (other observations, a recurrent model's masks) runs on the calling thread as before.
The CPU only: a GPU computes both halves itself, and the autograd engine's device threads would wait on each other.
Beside another training on the same 2 cores it neither gains nor costs much (docs/notes/2026-12-training-time.md).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch
from rsl_rl.algorithms import PPO


class _Values(torch.autograd.Function):
    """The critic's values, computed on the side thread, as a node of the update's graph: its backward hands the
    values' gradient to the side thread and makes the update's backward wait for that thread at its end."""

    @staticmethod
    def forward(ctx: Any, anchor: torch.Tensor, values: torch.Tensor, backward: Callable) -> torch.Tensor:
        ctx.backward = backward
        return values.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, None, None]:
        done: Future = ctx.backward(grad)
        torch.autograd.Variable._execution_engine.queue_callback(done.result)
        return None, None, None


class _Critic:
    """The critic as the update sees it: called on the observations the actor was just called on, it returns the
    values the side thread computed from them; any other call is the critic's own."""

    def __init__(self, critic: Any, side: ThreadPoolExecutor) -> None:
        self.critic, self.side = critic, side
        self.pending: tuple[Any, Future] | None = None
        self.anchor = torch.zeros((), requires_grad=True)  # puts the values' node into the update's graph

    def start(self, obs: Any) -> None:
        self.pending = (obs, self.side.submit(self.critic, obs))

    def __call__(self, obs: Any, masks: Any = None, hidden_state: Any = None) -> torch.Tensor:
        pending, self.pending = self.pending, None
        if pending is not None:
            started, future = pending
            values = future.result()  # waited for either way: the side thread is free for the next one
            if started is obs and masks is None and hidden_state is None:
                return _Values.apply(self.anchor, values.detach(), lambda grad: self.side.submit(values.backward, grad))
        return self.critic(obs, masks=masks, hidden_state=hidden_state)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.critic, name)


class _Actor:
    """The actor as the update sees it: the update's own call (gradients on, actions sampled) starts the critic
    on the same observations."""

    def __init__(self, actor: Any, critic: _Critic) -> None:
        self.actor, self.critic = actor, critic

    def __call__(self, obs: Any, *args: Any, **kwargs: Any) -> Any:
        if torch.is_grad_enabled() and kwargs.get("stochastic_output"):
            self.critic.start(obs)
        return self.actor(obs, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.actor, name)


class CriticThread:
    """``alg.update`` with the critic's half of each mini-batch on a thread of its own; :meth:`close` ends it."""

    def __init__(self, alg: PPO) -> None:
        self.alg, self.update = alg, alg.update
        self.side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ppo-critic")

    def __call__(self) -> dict[str, float]:
        alg = self.alg
        if alg.use_mixed_precision:  # autocast is per thread: the side thread's critic would run in full precision
            return self.update()
        actor, critic = alg.actor, alg.critic
        wrapped = _Critic(critic, self.side)
        alg.actor, alg.critic = _Actor(actor, wrapped), wrapped
        try:
            return self.update()
        finally:
            alg.actor, alg.critic = actor, critic

    def close(self) -> None:
        self.side.shutdown()
