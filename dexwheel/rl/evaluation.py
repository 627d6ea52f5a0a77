"""Deterministic evaluation episodes: per-task metrics, a summary, optional video."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from dexwheel.atomic import atomic_path
from dexwheel.rl.metrics import make_metrics

Policy = Callable[[np.ndarray], np.ndarray]


@dataclass
class EvalResult:
    episodes: list[dict[str, float]] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        keys = self.episodes[0].keys() if self.episodes else []
        out = {f"{k}": float(np.mean([e[k] for e in self.episodes])) for k in keys}
        out["episodes"] = float(len(self.episodes))
        return out


def run_episodes(
    env: gym.Env,
    policy: Policy,
    task: str,
    n_episodes: int,
    seed: int,
    video_path: Path | None = None,
    progress: bool = False,
    fps: int | None = None,
    video_episodes: int = 1,
) -> EvalResult:
    """Run ``n_episodes`` with seeds ``seed, seed+1, ...``.

    With ``video_path``, the first ``video_episodes`` episodes are rendered (the env needs
    ``render_mode="rgb_array"``) and each frame goes straight to the encoder: memory stays bounded.
    """
    metrics = make_metrics(task)
    result = EvalResult()
    recorded = min(video_episodes, n_episodes) if video_path is not None else 0
    tty = sys.stderr.isatty()
    bar = tqdm(total=n_episodes, desc="evaluating", unit="episode", disable=not (progress and tty))
    with contextlib.ExitStack() as stack:
        if recorded > 0:
            fps = fps or int(round(env.metadata.get("render_fps", 30)))
            add_frame = stack.enter_context(video_writer(video_path, fps))  # type: ignore[arg-type]
        for ep in range(n_episodes):
            obs, _ = env.reset(seed=seed + ep)
            ret, length, done = 0.0, 0, False
            while not done:
                obs, reward, terminated, truncated, info = env.step(policy(obs))
                metrics.step(info)
                ret += float(reward)
                length += 1
                done = terminated or truncated
                if ep < recorded:
                    add_frame(env.render())
            row = metrics.episode(bool(terminated))
            row.update({"return": ret, "length": float(length)})
            result.episodes.append(row)
            bar.update(1)
            if progress and not tty:  # logs and batch jobs get one line per episode instead of a bar
                print(f"evaluating: episode {ep + 1}/{n_episodes} return {ret:.3f} length {length}", flush=True)
    bar.close()
    return result


@contextlib.contextmanager
def video_writer(path: Path, fps: int) -> Iterator[Callable[[np.ndarray], None]]:
    """An MP4 encoder (imageio-ffmpeg, the ``video`` extra) taking one frame at a time; the file appears,
    complete, only when the block exits cleanly."""
    import imageio.v2 as imageio

    with atomic_path(path) as tmp, imageio.get_writer(tmp, fps=fps, codec="libx264", macro_block_size=1) as writer:
        yield writer.append_data


def write_video(path: Path, frames: Iterable[np.ndarray], fps: int) -> Path:
    """Encode ``frames`` (any iterable, consumed one at a time) into an MP4 written atomically."""
    with video_writer(Path(path), fps) as add_frame:
        for frame in frames:
            add_frame(frame)
    return Path(path)


#: metrics that count (episodes evaluated, env steps trained): printed as integers, not ``10.0000``
COUNTS = ("episodes", "timesteps")


def format_table(rows: dict[str, dict[str, Any]]) -> str:
    """A plain-text table: one column per evaluated setting (e.g. per robot), one row per metric; a count as an
    integer, another number with 4 decimals."""
    names = list(rows)
    metrics = sorted({k for r in rows.values() for k in r})
    width = max([len(m) for m in metrics] + [6])
    colw = max([len(n) for n in names] + [10])
    lines = [f"{'metric':<{width}}  " + "  ".join(f"{n:>{colw}}" for n in names)]
    lines.append("-" * len(lines[0]))
    for m in metrics:
        cells = []
        for n in names:
            v = rows[n].get(m, "")
            if isinstance(v, float) and m in COUNTS and v.is_integer():
                v = int(v)
            cells.append(f"{v:>{colw}.4f}" if isinstance(v, float) else f"{v!s:>{colw}}")
        lines.append(f"{m:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)
