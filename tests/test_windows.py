"""Real windows: ``render_mode="human"`` and ``scripts/view.py`` on a virtual X screen (Xvfb).

The screen is Debian's ``xvfb`` (``.ci/run`` installs it where it is missing); it listens on a local
socket only. Without it these tests skip.
"""

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from dexwheel.envs import register_envs

ROOT = Path(__file__).resolve().parents[1]
register_envs()


@pytest.fixture(scope="module")
def x_display() -> Iterator[str]:
    """A fresh Xvfb screen for this module (``-displayfd``: the server picks a free display number)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (Debian package xvfb)")
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write_end), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()  # written once the server accepts connections
    if not number:
        server.kill()
        pytest.skip("Xvfb did not start")
    try:
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def display(x_display: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DISPLAY", x_display)  # read when GLFW initializes, at the window's creation
    return x_display


def window_pixels(viewer) -> np.ndarray:
    """The frame the viewer last drew, read back from its window."""
    image = np.zeros((viewer.viewport.height, viewer.viewport.width, 3), dtype=np.uint8)
    mujoco.mjr_readPixels(image, None, viewer.viewport, viewer.con)
    return image


def test_g20_human_mode_draws_the_compare_view_in_a_window(display):
    env = gym.make("G20Hand-v0", render_mode="human", width=320, height=240, goal_mode="presets")
    env.reset(seed=0, options={"init_qpos": "open"})  # reset draws the first frame
    viewer = env.unwrapped._renderer._get_viewer("human")
    assert type(viewer).__name__ == "WindowViewer"  # a real GLFW window, not an offscreen buffer
    assert (viewer.viewport.width, viewer.viewport.height) == (320, 240)
    np.testing.assert_allclose(viewer.cam.lookat, (0.04, -0.04, 0.12))  # the vendor bridge's compare view
    assert (viewer.cam.distance, viewer.cam.azimuth, viewer.cam.elevation) == (0.50, 180.0, -12.0)
    open_hand = window_pixels(viewer)
    assert open_hand.std() > 1.0  # the hand is drawn, not a blank window
    for _ in range(40):  # each step draws a frame: the fingers close on screen
        env.step(np.ones(16, dtype=np.float32))
    fist = window_pixels(viewer)
    assert np.abs(fist.astype(int) - open_hand).mean() > 0.5
    env.close()
    assert env.unwrapped._renderer is None


def test_wheel_leg_human_mode_draws_in_a_window(display):
    env = gym.make("Solenopsis-v0", render_mode="human", width=320, height=240)
    env.reset(seed=0)
    viewer = env.unwrapped._renderer._get_viewer("human")
    assert type(viewer).__name__ == "WindowViewer"
    assert window_pixels(viewer).std() > 1.0
    env.step(env.action_space.sample())
    env.close()
    assert env.unwrapped._renderer is None


@pytest.mark.parametrize("robot", ["g20_left", "solenopsis"])
def test_view_script_plays_presets_in_mujocos_viewer(display, robot, tmp_path):
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "view.py"), f"robot={robot}", "source=presets", "steps=60",
         "realtime=false"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,  # DISPLAY: set by the fixture
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "played 60 steps" in run.stdout
