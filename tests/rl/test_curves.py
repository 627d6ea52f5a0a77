"""The plots people look at instead of tables (dexwheel/rl/curves.py)."""

import numpy as np
import pytest

from dexwheel.protocols import steps
from dexwheel.rl.curves import OUTCOME_BARS, over_time_figure, plot_step_benchmark, step_benchmark_figure

#: a benchmark's outcomes: 4 trials per (scene, height, direction), times irrelevant to the plot
OUTCOMES = {
    ("step", 0.05, "up"): ["success"] * 4,
    ("step", 0.05, "down"): ["success"] * 4,
    ("step", 0.15, "up"): ["success", "timeout", "timeout", "fall"],
    ("step", 0.15, "down"): ["success", "success", "success", "fall"],
    ("stairs", 0.1, "up"): ["fall", "fall", "timeout", "timeout"],
    ("stairs", 0.1, "down"): ["success"] * 4,
}


def _rows():
    return steps.summarize({key: [(o, 1.0) for o in outcomes] for key, outcomes in OUTCOMES.items()})


def test_the_step_benchmark_figure_stacks_each_heights_outcomes():
    """One panel per robot and direction, one bar per height (the stairs last), stacked success, timeout, fall
    as shares of the trials: the table's numbers, drawn."""
    fig = step_benchmark_figure({"solenopsis": _rows(), "m20_legacy": _rows()}, "title")
    assert [ax.get_title() for ax in fig.axes] == ["solenopsis, up", "solenopsis, down", "m20_legacy, up",
                                                    "m20_legacy, down"]  # fmt: skip
    for ax, direction in zip(fig.axes, ["up", "down"] * 2, strict=True):
        keys = [k for k in OUTCOMES if k[2] == direction]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0.050", "0.150", "stairs\n0.100"]
        bars = ax.patches  # matplotlib draws the outcomes one after the other, each over every height
        assert len(bars) == len(OUTCOME_BARS) * len(keys)
        for i, (_, label, _) in enumerate(OUTCOME_BARS):
            mine = bars[i * len(keys) : (i + 1) * len(keys)]
            expected = [OUTCOMES[k].count(label) / 4 for k in keys]
            assert [b.get_height() for b in mine] == pytest.approx(expected)
            below = [sum(OUTCOMES[k].count(lb) for _, lb, _ in OUTCOME_BARS[:i]) / 4 for k in keys]
            assert [b.get_y() for b in mine] == pytest.approx(below)  # stacked: each starts where the last ended
    assert fig.axes[0].get_ylim() == (0.0, 1.0)


def test_a_step_benchmark_plot_is_a_png_written_whole(tmp_path):
    path = plot_step_benchmark(tmp_path / "steps.png", {"solenopsis": _rows()}, "title")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["steps.png"]  # no temporary file left behind


def test_traces_over_time_are_overlaid_per_quantity_with_the_span_shaded():
    t = np.arange(5) * 0.1
    panels = {"height (m)": {"MuJoCo": t**2, "Isaac Lab": t**2 + 0.01}, "pitch (rad)": {"MuJoCo": -t, "Isaac Lab": t}}
    fig = over_time_figure(t, panels, "title", span=(0.0, 0.2, "approach"))
    assert [ax.get_ylabel() for ax in fig.axes] == list(panels)
    for ax, series in zip(fig.axes, panels.values(), strict=True):
        assert [line.get_label() for line in ax.lines] == list(series)
        for line, values in zip(ax.lines, series.values(), strict=True):
            assert np.array_equal(line.get_xdata(), t) and np.array_equal(line.get_ydata(), values)
        (shaded,) = ax.patches
        assert shaded.get_label() == "approach" and shaded.get_x() == 0.0 and shaded.get_width() == pytest.approx(0.2)
