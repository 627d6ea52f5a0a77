"""The single-env base both Gymnasium faces share (:class:`TaskEnv`); the vector base is
:class:`~dexwheel.envs.vector_env.NativeVectorEnv`.

A single env is the ``N = 1`` case of its task: the task steps, the env adds Gymnasium's surface: the
reset and closed guards, rendering through Gymnasium's ``MujocoRenderer`` (checked for a display or an
offscreen GL backend first, :func:`~dexwheel.sim.rendering.check_render_mode`), ``close``, and copying
and pickling (:class:`~dexwheel.sim.snapshot.Reconstructible`).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dexwheel.envs.gym_api import closed_error, not_ready
from dexwheel.sim.rendering import check_render_mode
from dexwheel.sim.snapshot import Reconstructible


class TaskEnv(Reconstructible, gym.Env):
    """A task's single env. A subclass sets ``task`` and ``render_mode``, calls :meth:`_start_env` with its
    name in messages (``"G20Hand"``), and provides ``model``, ``data`` and :meth:`_renderer_kwargs`."""

    def _start_env(self, name: str) -> None:
        self._name = name
        self._renderer: Any = None
        self._needs_reset = True
        self._closed = False

    def _env_id(self) -> str:
        """Its registered id when made by ``gymnasium.make`` (the class name otherwise)."""
        return self.spec.id if self.spec is not None else type(self).__name__

    def _renderer_kwargs(self) -> dict[str, Any]:
        return {}

    def _check_open(self) -> None:
        """Before a reset: a closed env raises ``ClosedEnvironmentError``."""
        if self._closed:
            raise closed_error(self._name)

    def _check_ready(self) -> None:
        """Before a step: an env not reset yet (or closed) raises, saying which."""
        if self._needs_reset:
            raise not_ready(self._name, self._closed)

    def render(self) -> np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn(f"{self._env_id()}: render() without a render_mode; pass render_mode='rgb_array' or "
                            "'human' to gymnasium.make")  # fmt: skip
            return None
        if self._renderer is None:
            check_render_mode(self.render_mode, self._env_id())  # no display, no OpenGL: say what to set
            from gymnasium.envs.mujoco.mujoco_rendering import MujocoRenderer

            self._renderer = MujocoRenderer(self.model, self.data, **self._renderer_kwargs())
        return self._renderer.render(self.render_mode)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = self._needs_reset = True
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self.task.close()
