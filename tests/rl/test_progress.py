"""Progress lines (dexwheel/rl/progress.py): due every few seconds, the rate and the time split of the interval."""

import logging
import re

import pytest
from cfgutil import compose_cfg, short

from dexwheel.rl import progress as progress_lines
from dexwheel.rl.progress import Progress
from dexwheel.rl.training import train


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


def test_a_line_says_the_time_left_to_the_budget_at_its_rate():
    now = [0.0]
    progress = Progress(30.0, clock=lambda: now[0], total=100_000)
    progress.add(3000, collect_s=1.0, learn_s=0.0)
    now[0] = 30.0
    assert progress.log(40_000, {}).startswith("progress step=40000 env_steps_per_s=100 time_left_s=600 ")


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["ppo", "rsl_ppo"])
def test_every_learner_writes_progress_lines_with_steps_rate_return_and_time_left(algo, tmp_path, monkeypatch):
    """The hand's default learner (SB3 PPO) was silent between its start line and its first evaluation (issue 68)."""
    monkeypatch.setattr(progress_lines, "PROGRESS_EVERY_S", 0.0)  # a line at every rollout
    train(compose_cfg("train", *short("g20_left", "task=in_hand_rotate", algo=algo)), tmp_path)
    lines = [line for line in (tmp_path / "train.log").read_text().splitlines() if "] - progress step=" in line]
    assert len(lines) >= 2
    for line in lines:
        assert re.search(r"progress step=\d+ env_steps_per_s=\d+ time_left_s=\d+ collect=\d\.\d\d learn=\d\.\d\d "
                         r"mean_return=\S+ mean_episode_length=\S+", line), line  # fmt: skip
