"""When each env's command is resampled and its interval events run: absolute control-step numbers, so a step where
nothing is due costs two integer compares (:meth:`Schedule.due`).

Each env draws from its own generator, in a fixed order (a vector env reproduces single envs bit for bit): at its
reset the command (:func:`~dexwheel.tasks.velocity.commands.draw_command`), then one interval per interval event;
when a resample is due a new command (it may reverse, ``commands.rel_reversal``); when an event is due the event,
then its next interval.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dexwheel.tasks.velocity.commands import draw_command

NEVER = np.iinfo(np.int64).max // 2  # "nothing scheduled" as a control-step number


class Schedule:
    """The command resamples and interval events (``(call, low s, high s)`` in table order) of ``task``'s envs."""

    def __init__(self, task: Any, interval_events: list[tuple[functools.partial, float, float]]) -> None:
        n = task.num_envs
        self.task, self.events = task, interval_events
        self.resample_at = np.full(n, NEVER, dtype=np.int64)
        #: When each env's interval events next run (a column per interval event, table order).
        self.event_at = np.full((n, len(interval_events)), NEVER, dtype=np.int64)
        self.next_resample = self.next_event = NEVER

    def due(self, t: int) -> bool:
        return t >= self.next_resample or t >= self.next_event

    def start(self, i: int, rng: np.random.Generator) -> None:
        """Env ``i`` starts an episode now: its command, then one interval per interval event."""
        self.resample(i)
        if self.events:
            t = self.task.t
            for k, (_, lo, hi) in enumerate(self.events):
                self.event_at[i, k] = t + self._interval_steps(rng, lo, hi)
            self.next_event = int(self.event_at.min())

    def run(self, t: int) -> None:
        """Due command resamples, then due interval events (per env, in table order; each then draws its next
        interval)."""
        task = self.task
        for i in np.flatnonzero(self.resample_at <= t).tolist():
            self.resample(i, reverse=True)
        if t >= self.next_event:
            envs, columns = np.nonzero(self.event_at <= t)  # env-major: each env's events in table order
            for i, k in zip(envs.tolist(), columns.tolist(), strict=True):
                call, lo, hi = self.events[k]
                rng = task.rngs[i]
                call(task, i, rng)
                self.event_at[i, k] = t + self._interval_steps(rng, lo, hi)
            self.next_event = int(self.event_at.min())

    def resample(self, i: int, reverse: bool = False) -> None:
        """A new command for env ``i`` (``reverse``: a mid-episode resample) and when the next is due."""
        task = self.task
        rng = task.rngs[i]
        assert rng is not None
        x, wz, after_s = draw_command(task.cfg.commands, rng, float(task.commands[i, 0]), reverse)
        task.commands[i] = x, wz
        self.resample_at[i] = task.t + max(1, round(after_s / task.dt))
        self.next_resample = int(self.resample_at.min())

    def hold(self, envs: range | list[int]) -> None:
        """No more resamples this episode for ``envs`` (a command set by hand)."""
        for i in envs:
            self.resample_at[i] = NEVER
        self.next_resample = int(self.resample_at.min())

    def _interval_steps(self, rng: np.random.Generator, lo: float, hi: float) -> int:
        """Control steps until an interval event runs again: one uniform draw in [lo, hi) seconds, at least 1."""
        return max(1, round((lo + (hi - lo) * rng.random()) / self.task.dt))
