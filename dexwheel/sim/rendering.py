"""Offscreen frames of several simulations of one model (the native vector envs' ``rgb_array``)."""

from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np


def render_each(
    renderer: mujoco.Renderer, datas: Iterable[mujoco.MjData], camera: mujoco.MjvCamera | str | int
) -> tuple[np.ndarray, ...]:
    """One RGB frame per MjData, all from ``camera`` (each a copy: the renderer reuses its buffer)."""
    frames = []
    for data in datas:
        renderer.update_scene(data, camera=camera)
        frames.append(renderer.render().copy())
    return tuple(frames)
