"""The MuJoCo tasks' action latency in the Isaac Lab action terms of both tasks."""

from __future__ import annotations

import torch


def action_delay(steps, where: str, like: torch.Tensor):
    """The MuJoCo task's action latency on torch (:class:`~dexwheel.tasks.action_delay.ActionDelay`), None without."""
    from dexwheel.tasks.action_delay import ActionDelay, delay_range

    delay = delay_range(steps, where)
    return ActionDelay(delay, like) if delay != (0, 0) else None


def reset_delay(delay, ids: torch.Tensor, hold) -> None:
    """Envs ``ids`` of an action delay start an episode holding ``hold``; a range draws each env's delay anew."""
    if delay is not None:
        drawn = torch.randint(delay.low, delay.high + 1, (len(ids),), device=ids.device) if delay.random else None
        delay.reset(ids, hold, drawn)
