"""Progress lines of a running training: one every few seconds in ``train.log`` (and on the console), so a long
run (the rough-terrain one takes most of an hour on 2 cores) shows where it is without TensorBoard.

Every learner (rsl_rl's and stable-baselines3's) writes one every :data:`PROGRESS_EVERY_S` seconds. A line says the
step count, env-steps/s since the last line, the time left to the run's budget at that rate, how the time split
between collecting and learning, and the scalars the learner passes (mean return, episode length,
``Curriculum/terrain_level``)::

    progress step=1245184 env_steps_per_s=4301 time_left_s=291 collect=0.71 learn=0.29 mean_return=121.5 ...

On a terminal the progress bar shows the steps, the rate and the time left, and each line's mean return beside them.

:func:`run_log` appends every log line of a run to its ``train.log``, on either backend (the Isaac Lab launch's too).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from pathlib import Path
from typing import Any

LOG_FILE = "train.log"
#: Seconds between progress lines, for every learner.
PROGRESS_EVERY_S = 30.0
LOG_FORMAT = "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
#: progress lines: to the run's ``train.log`` (:func:`run_log`) and, under ``scripts/train.py``, stdout
log = logging.getLogger("dexwheel.train")


@contextlib.contextmanager
def run_log(run_dir: Path, active: bool = True):
    """Every log line of the run (each segment of a resumed one too) appended to ``<run>/train.log``."""
    if not active:
        yield
        return
    handler = logging.FileHandler(Path(run_dir) / LOG_FILE, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    level = log.level
    root.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield
    except Exception:  # a crash's traceback in the run's log too, not only on the terminal (once there: no console)
        handler.handle(log.makeRecord(log.name, logging.ERROR, __file__, 0, "failed", None, sys.exc_info()))
        raise
    finally:
        root.removeHandler(handler)
        handler.close()
        log.setLevel(level)


class Progress:
    """Counts steps and seconds between lines; :meth:`due` once ``every_s`` seconds have passed. ``total``: the
    run's budget (steps), for the time left; ``bar``: the run's progress bar, whose postfix shows the mean return."""

    def __init__(self, every_s: float | None = None, clock=time.monotonic, total: int | None = None,
                 bar: Any = None) -> None:  # fmt: skip
        self.every_s = float(PROGRESS_EVERY_S if every_s is None else every_s)
        self.clock, self.total, self.bar = clock, total, bar
        self.last = clock()
        self.steps = 0
        self.collect = self.learn = 0.0

    def add(self, steps: int, collect_s: float, learn_s: float) -> None:
        self.steps += steps
        self.collect += collect_s
        self.learn += learn_s

    def due(self) -> bool:
        return self.clock() - self.last >= self.every_s

    def log(self, step: int, scalars: dict[str, float]) -> str:
        """Write one line (and start the next interval); returns it."""
        now = self.clock()
        busy = self.collect + self.learn
        rate = self.steps / max(now - self.last, 1e-9)
        fields = [f"step={step}", f"env_steps_per_s={rate:.0f}"]
        if self.total is not None and rate > 0.0:
            fields.append(f"time_left_s={max(self.total - step, 0) / rate:.0f}")
        if busy > 0.0:
            fields += [f"collect={self.collect / busy:.2f}", f"learn={self.learn / busy:.2f}"]
        fields += [f"{k}={v:.4g}" for k, v in scalars.items()]
        line = "progress " + " ".join(fields)
        log.info(line)
        if self.bar is not None and "mean_return" in scalars:
            self.bar.set_postfix_str(f"return={scalars['mean_return']:.4g}", refresh=False)
        self.last, self.steps, self.collect, self.learn = now, 0, 0.0, 0.0
        return line
