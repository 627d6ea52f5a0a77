"""Action latency: each env applies the action its policy gave ``k`` control steps ago (every task family, both
backends: numpy on MuJoCo, torch on Isaac Lab; one implementation).

A real robot applies a command some time after the policy computed it (inference, the bus, the servo loop). A
task's ``delay_steps`` is that delay in policy steps: an integer ``k`` for every env, or ``(low, high)`` for a
``k`` drawn per env at each of its resets (uniform, inclusive: latency randomisation). The policy's own action
stays what the terms read (``last_action``, the action rate): the robot's delay is hidden from the policy, as it
is on hardware. Until an env has given ``k`` actions in its episode it applies the hold action of its reset
(the one that keeps it where it started).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from dexwheel.control._xp import namespace
from dexwheel.fields import ConfigFieldError

#: The longest delay a task takes (policy steps): 0.4 s at 50 Hz.
MAX_DELAY_STEPS = 20


def delay_range(steps: Any, where: str) -> tuple[int, int]:
    """``delay_steps`` as ``(low, high)`` integers in ``[0, MAX_DELAY_STEPS]``; one error naming ``where``."""
    pair = steps if isinstance(steps, (tuple, list)) else (steps, steps)
    ok = len(pair) == 2 and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in pair)
    if not ok or not 0 <= pair[0] <= pair[1] <= MAX_DELAY_STEPS:
        raise ConfigFieldError(where, f"{where}: expected an integer or (low, high) integers with 0 <= low <= high "
                                      f"<= {MAX_DELAY_STEPS} (policy steps), got {steps!r}")  # fmt: skip
    return int(pair[0]), int(pair[1])


class ActionDelay:
    """The last ``high + 1`` actions of each of ``num_envs`` envs (a ring on ``like``'s library, dtype and device);
    :meth:`__call__` stores the step's actions and returns each env's ``delay[i]`` steps old."""

    def __init__(self, steps: tuple[int, int], like: Any) -> None:
        self.xp = xp = namespace(like)
        self.low, self.high = steps
        n = like.shape[0]
        self.size = self.high + 1
        self._ring = xp.zeros((n, self.size, *like.shape[1:]), dtype=like.dtype, **self._device(like))
        self._rows = xp.arange(n, **self._device(like))
        self.delay = xp.full((n,), self.low, dtype=xp.int64, **self._device(like))
        self._head = 0  # the ring column of the newest action (the same for every env: one step each)

    def _device(self, like: Any) -> dict[str, Any]:
        return {} if self.xp is np else {"device": like.device}

    @property
    def random(self) -> bool:
        """Whether each reset draws a delay (a range)."""
        return self.high > self.low

    def __call__(self, actions: Any) -> Any:
        """Store ``actions`` ``(N, ...)`` as the newest; each env's action ``delay`` steps old (a fresh array)."""
        self._head = (self._head + 1) % self.size
        self._ring[:, self._head] = actions
        return self._ring[self._rows, (self._head - self.delay) % self.size]

    def reset(self, env_ids: Any, hold: Any, delay: Any = None) -> None:
        """Envs ``env_ids`` start an episode: their every stored action is ``hold`` (``(k, ...)`` or one row for all),
        their delay ``delay`` (``(k,)``; None keeps it: a fixed delay)."""
        ring = self._ring
        h = self.xp.asarray(hold, dtype=ring.dtype, **({} if self.xp is np else {"device": ring.device}))
        ring[env_ids] = h[..., None, :] if h.ndim > 1 else h
        if delay is not None:
            self.delay[env_ids] = delay
