"""What a task declares at its Gymnasium surface: an integer-valued action space (the G20 SDK's 0..255) and the
check of ``reset(options=...)``. Here, below the envs, because the tasks build their action spaces and read their
reset options themselves; the envs and the learners take both from here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space


class IntegerBox(spaces.Box):
    """A float32 :class:`~gymnasium.spaces.Box` whose points are whole numbers (the G20 SDK's 0..255).

    ``sample()`` draws integers and ``contains()`` refuses fractions. It stays a float Box (equal to the
    plain one) so that continuous-action learners take it as one; ``dexwheel.rl`` rounds their actions.
    """

    def __init__(self, low: Any, high: Any, shape: Sequence[int] | None = None, seed: Any = None) -> None:
        super().__init__(low, high, shape, np.float32, seed)
        if not (np.all(np.isfinite(self.low)) and np.all(np.isfinite(self.high))):
            raise ValueError("IntegerBox: bounds must be finite")
        if np.any(np.floor(self.low) != self.low) or np.any(np.floor(self.high) != self.high):
            raise ValueError("IntegerBox: bounds must be whole numbers")

    def sample(self, mask: None = None, probability: None = None) -> np.ndarray:
        if mask is not None or probability is not None:
            return super().sample(mask, probability)  # Box's own error
        low, high = self.low.astype(np.int64), self.high.astype(np.int64)
        return self.np_random.integers(low, high, size=self.shape, endpoint=True).astype(self.dtype)

    def contains(self, x: Any) -> bool:
        return super().contains(x) and bool(np.all(np.floor(np.asarray(x)) == x))


@batch_space.register(IntegerBox)
def _batch_integer_box(space: IntegerBox, n: int = 1) -> IntegerBox:
    repeats = (n,) + (1,) * space.low.ndim
    return IntegerBox(np.tile(space.low, repeats), np.tile(space.high, repeats), seed=deepcopy(space.np_random))


def reset_options(env: str, options: Any, valid: Sequence[str]) -> dict[str, Any]:
    """``options`` of ``reset()`` as a dict: None or a dict whose keys are all in ``valid``; anything else
    raises ValueError naming the option and the valid ones."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"{env}.reset: options must be a dict or None, got {type(options).__name__} {options!r}")
    unknown = sorted(map(str, set(options) - set(valid)))
    if unknown:
        raise ValueError(f"{env}.reset: unknown options {unknown}; valid: {list(valid)}")
    return dict(options)
