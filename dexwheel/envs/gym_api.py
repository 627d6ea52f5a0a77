"""What every dexwheel env shares at its Gymnasium surface besides what its task declares
(:mod:`dexwheel.tasks.spaces`): the errors of a closed env or one not reset yet."""

from __future__ import annotations

import gymnasium as gym


def closed_error(env: str) -> gym.error.ClosedEnvironmentError:
    """The error of a ``step()`` or ``reset()`` after ``close()``."""
    return gym.error.ClosedEnvironmentError(f"{env}: the env is closed; make a new one")


def not_ready(env: str, closed: bool) -> gym.error.Error:
    """The error of a ``step()`` that cannot run: the env is closed, or not reset since it was made."""
    return closed_error(env) if closed else gym.error.ResetNeeded(f"{env}: call reset() before step()")
