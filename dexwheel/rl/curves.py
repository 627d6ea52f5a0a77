"""Learning curves as PNG files (written atomically) for people who would rather look than read."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dexwheel.atomic import write_atomic  # noqa: E402


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
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    write_atomic(path, buf.getvalue())
    return Path(path)
