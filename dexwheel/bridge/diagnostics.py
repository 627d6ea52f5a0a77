"""Counted, rate-limited warnings: a flood of bad messages must be visible without flooding the log."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable


class RateLimitedCounter:
    """Counts events (rejected messages, failed writes) per source and logs them at most once per interval.

    The first event of a quiet source is logged at once, so a user sees the problem when it starts; later
    ones are summed and logged with their count when the interval has passed (at the next event or
    :meth:`flush`). ``total`` and ``counts`` keep every event, logged or not. Thread-safe.
    """

    def __init__(
        self,
        logger: logging.Logger,
        what: str,
        interval_s: float = 5.0,
        level: int = logging.WARNING,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not interval_s >= 0:
            raise ValueError(f"interval_s must be >= 0, got {interval_s!r}")
        self.logger, self.what, self.interval_s, self.level = logger, what, float(interval_s), level
        self._clock = clock
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self._pending: dict[str, tuple[int, str]] = {}  # source -> (events not logged yet, latest reason)
        self._last_log: dict[str, float] = {}

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.counts.values())

    def count(self, source: str, reason: str) -> None:
        """Record one event of ``source``; log it now or fold it into the next summary."""
        now = self._clock()
        with self._lock:
            self.counts[source] = self.counts.get(source, 0) + 1
            n, _ = self._pending.get(source, (0, ""))
            self._pending[source] = (n + 1, reason)
            due = now - self._last_log.get(source, -float("inf")) >= self.interval_s
            line = self._take(source, now) if due else None
        if line:
            self.logger.log(self.level, line)

    def flush(self, force: bool = False) -> None:
        """Log every source's pending events whose interval has passed (all of them with ``force``)."""
        now = self._clock()
        with self._lock:
            lines = [
                self._take(s, now)
                for s in list(self._pending)
                if force or now - self._last_log.get(s, -float("inf")) >= self.interval_s
            ]
        for line in lines:
            self.logger.log(self.level, line)

    def _take(self, source: str, now: float) -> str:
        n, reason = self._pending.pop(source)
        self._last_log[source] = now
        return f"{self.what}: {n} on {source} since the last report ({self.counts[source]} in all); latest: {reason}"
