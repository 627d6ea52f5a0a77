"""MuJoCo's passive viewer beside the bridge's simulation, closed without crashing on exit.

The simulation loop owns MjData and calls :meth:`PassiveViewer.sync` between steps, so the window never
reads a half-written pose. The window runs on its own thread; exiting before that thread has torn the
window down crashes or hangs in GLFW (google-deepmind/mujoco#790), so :meth:`close` joins it, as
``scripts/view.py`` does.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import mujoco
import mujoco.viewer
import numpy as np

from dexwheel.sim.rendering import RenderingError, check_window

#: The viewer cannot open (no display): :func:`dexwheel.sim.rendering.check_window`'s error.
ViewerError = RenderingError


class PassiveViewer:
    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, camera: Mapping[str, Any] | None = None) -> None:
        check_window("the bridge's viewer", instead="run with headless=true")  # GLFW would end the process from C
        before = set(threading.enumerate())
        self._handle = mujoco.viewer.launch_passive(model, data)
        self._threads = set(threading.enumerate()) - before
        if camera:
            with self._handle.lock():
                cam = self._handle.cam
                if "lookat" in camera:
                    cam.lookat[:] = np.asarray(camera["lookat"], dtype=np.float64)
                for key in ("distance", "azimuth", "elevation"):
                    if key in camera:
                        setattr(cam, key, float(camera[key]))

    def sync(self) -> bool:
        """Show the current pose; False once the user has closed the window."""
        if not self._handle.is_running():
            return False
        self._handle.sync()
        return True

    def close(self) -> None:
        self._handle.close()
        for thread in self._threads:
            thread.join(timeout=30)
