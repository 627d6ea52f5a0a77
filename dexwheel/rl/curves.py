"""Plots as PNG files (written atomically) for people who would rather look than read: learning curves, the
step and in-hand benchmarks' results, and traces over time side by side (the cross-backend comparison)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dexwheel.atomic import write_atomic  # noqa: E402

#: The step benchmark's outcomes stacked bottom to top: the table row's count, the legend's label, the colour.
OUTCOME_BARS = (("successes", "success", "#2a9d8f"), ("timeouts", "timeout", "#b0b0b0"), ("falls", "fall", "#d62828"))


def plot_learning_curve(
    path: Path,
    steps: Sequence[int],
    series: dict[str, Sequence[float]],
    title: str,
) -> Path:
    """One panel per series (e.g. eval return, tracking error) against environment steps."""
    n = max(1, len(series))
    fig, axes = plt.subplots(n, 1, figsize=(7, 2.6 * n), sharex=True, squeeze=False)
    for ax, (name, values) in zip(axes[:, 0], series.items(), strict=False):
        ax.plot(list(steps)[: len(values)], list(values), marker="o", markersize=3)
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("environment steps")
    fig.suptitle(title)
    fig.tight_layout()
    return save_png(fig, path)


def step_benchmark_figure(results: Mapping[str, Sequence[Mapping]], title: str) -> Figure:
    """The step benchmark's table as bars: a row of panels per robot, one panel per direction, one bar per
    height (the stairs last), its trials' shares of success, timeout and fall stacked. ``results`` maps a robot
    to its table rows (:func:`dexwheel.protocols.steps.summarize`)."""
    directions = list(dict.fromkeys(r["direction"] for rows in results.values() for r in rows))
    fig, axes = plt.subplots(len(results), len(directions), figsize=(4.2 * len(directions), 3.0 * len(results)),
                             sharey=True, squeeze=False, layout="constrained")  # fmt: skip
    for axes_row, (robot, rows) in zip(axes, results.items(), strict=True):
        for ax, direction in zip(axes_row, directions, strict=True):
            mine = [r for r in rows if r["direction"] == direction]
            x = range(len(mine))
            bottom = [0.0] * len(mine)
            for count, label, colour in OUTCOME_BARS:
                share = [r[count] / r["trials"] for r in mine]
                ax.bar(x, share, bottom=bottom, color=colour, label=label, width=0.8)
                bottom = [b + s for b, s in zip(bottom, share, strict=True)]
            ax.set_xticks(list(x), [f"{r['height']:.3f}" if r["scene"] == "step" else f"{r['scene']}\n{r['height']:.3f}"
                                    for r in mine], rotation=60, fontsize=7)  # fmt: skip
            ax.set_title(f"{robot}, {direction}", fontsize=9)
            ax.set_ylim(0.0, 1.0)
            ax.axhline(0.5, color="black", linestyle="--", linewidth=0.8, alpha=0.5)  # "in at least half the trials"
            ax.grid(axis="y", alpha=0.3)
        axes_row[0].set_ylabel("share of trials")
    for ax in axes[-1]:
        ax.set_xlabel("height (m)")
    fig.suptitle(title)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    return fig


def plot_step_benchmark(path: Path, results: Mapping[str, Sequence[Mapping]], title: str) -> Path:
    """:func:`step_benchmark_figure` written to ``path``."""
    return save_png(step_benchmark_figure(results, title), path)


def in_hand_benchmark_figure(results: Mapping[str, Sequence[Mapping]], title: str) -> Figure:
    """Per robot, each object's mean angular velocity about the axis (rad/s, the bar; its spread over trials, the
    whisker) beside its drop rate (the share of trials that dropped the object)."""
    fig, axes = plt.subplots(len(results), 2, figsize=(10, 0.5 + 2.6 * len(results)), squeeze=False,
                             layout="constrained")  # fmt: skip
    for (rate_ax, drop_ax), (robot, rows) in zip(axes, results.items(), strict=True):
        names = [r["object"] for r in rows]
        y = np.arange(len(rows))
        rate_ax.barh(y, [r["rate_mean"] for r in rows], xerr=[r["rate_std"] for r in rows], color="#2a9d8f")
        drop_ax.barh(y, [r["drop_rate"] for r in rows], color="#e76f51")
        for ax in (rate_ax, drop_ax):
            ax.set_yticks(y, names, fontsize=8)
            ax.invert_yaxis()
            ax.grid(axis="x", alpha=0.3)
        rate_ax.set_xlabel("mean angular velocity about the axis (rad/s)")
        drop_ax.set_xlabel("drop rate")
        drop_ax.set_xlim(0, 1)
        rate_ax.set_title(robot, fontsize=9, loc="left")
    fig.suptitle(title)
    return fig


def plot_in_hand_benchmark(path: Path, results: Mapping[str, Sequence[Mapping]], title: str) -> Path:
    """:func:`in_hand_benchmark_figure` written to ``path``."""
    return save_png(in_hand_benchmark_figure(results, title), path)


def over_time_figure(t: Sequence[float], panels: Mapping[str, Mapping[str, Sequence[float]]], title: str,
                     span: tuple[float, float, str] | None = None) -> Figure:  # fmt: skip
    """One panel per quantity (``panels``: its axis label -> series label -> values at the times ``t``, s), the
    series overlaid; ``span``: a time interval shaded in every panel, ``(start, end, label)``."""
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 2.4 * len(panels)), sharex=True, squeeze=False,
                             layout="constrained")  # fmt: skip
    for ax, (quantity, series) in zip(axes[:, 0], panels.items(), strict=True):
        for label, values in series.items():
            ax.plot(t, values, label=label, linewidth=1.2)
        if span is not None:
            ax.axvspan(span[0], span[1], color="#e9c46a", alpha=0.25, label=span[2])
        ax.set_ylabel(quantity)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(title)
    return fig


def plot_over_time(path: Path, t: Sequence[float], panels: Mapping[str, Mapping[str, Sequence[float]]], title: str,
                   span: tuple[float, float, str] | None = None) -> Path:  # fmt: skip
    """:func:`over_time_figure` written to ``path``."""
    return save_png(over_time_figure(t, panels, title, span), path)


def save_png(fig: Figure, path: Path) -> Path:
    """``fig`` as a PNG at ``path`` (atomically), then closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return Path(path)
