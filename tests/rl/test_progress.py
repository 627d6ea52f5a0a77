"""Progress lines (dexwheel/rl/progress.py): due every few seconds, the rate and the time split of the interval."""

import logging

from dexwheel.rl.progress import Progress


def test_a_line_is_due_after_its_interval_and_carries_the_rate_and_split(caplog):
    now = [0.0]
    progress = Progress(30.0, clock=lambda: now[0])
    progress.add(4096, collect_s=0.6, learn_s=0.4)
    now[0] = 10.0
    assert not progress.due()
    progress.add(4096, collect_s=0.9, learn_s=0.1)
    now[0] = 32.0
    assert progress.due()
    with caplog.at_level(logging.INFO, logger="dexwheel.train"):
        line = progress.log(8192, {"mean_return": 121.49, "Curriculum/terrain_level": 2.281})
    assert line == ("progress step=8192 env_steps_per_s=256 collect=0.75 learn=0.25 mean_return=121.5 "
                    "Curriculum/terrain_level=2.281")  # fmt: skip
    assert caplog.records[-1].getMessage() == line
    assert not progress.due() and progress.steps == 0  # the next interval starts empty
