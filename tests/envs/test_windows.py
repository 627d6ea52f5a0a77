"""Real windows: ``render_mode="human"`` and ``scripts/view.py`` on a virtual X screen (Xvfb); and without a
display, the Python error naming ``xvfb-run`` / ``MUJOCO_GL=egl`` each renderer raises instead of GLFW's abort.

The screen is Debian's ``xvfb`` (``.ci/run`` installs it where it is missing); it listens on a local
socket only. Without it the window tests skip; the no-display tests run in subprocesses without
``DISPLAY``.
"""

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pytest

from dexwheel import mujoco_gl
from dexwheel.envs import register_envs

ROOT = Path(__file__).resolve().parents[2]
register_envs()


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


# -- no display: a Python error saying what to set, not an abort in GLFW ------------------------------------
def headless_env(mujoco_gl: str | None) -> dict[str, str]:
    """This environment without a display, ``MUJOCO_GL`` unset or set."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL")}
    if mujoco_gl is not None:
        env["MUJOCO_GL"] = mujoco_gl
    return env


def python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


MAKE = "import gymnasium as gym\nfrom dexwheel.envs import register_envs\nregister_envs()\n"


@pytest.mark.parametrize("mujoco_gl", [None, "glfw"], ids=["MUJOCO_GL-unset", "MUJOCO_GL-glfw"])
@pytest.mark.parametrize("env_id", ["G20Hand-v0", "Solenopsis-v0"])
@pytest.mark.slow
def test_human_mode_without_a_display_raises_naming_xvfb_run_and_egl(env_id, mujoco_gl, tmp_path):
    run = python(f"{MAKE}gym.make({env_id!r}, render_mode='human').reset(seed=0)", headless_env(mujoco_gl), tmp_path)
    assert run.returncode == 1, run.stderr[-2000:]  # a Python exception, not GLFW's abort (134)
    assert run.stderr.strip().splitlines()[-1] == (
        f"dexwheel.sim.rendering.RenderingError: {env_id} render_mode='human' opens a window, and there is no "
        f"display (DISPLAY is not set): run it under a virtual screen (xvfb-run -a python ...), or render offscreen "
        f"instead (render_mode='rgb_array' with MUJOCO_GL=egl)"
    )


#: offscreen frames of a single env and of a native vector env (mujoco.Renderer), 64 x 48
OFFSCREEN = {
    "Solenopsis-v0": "env = gym.make('Solenopsis-v0', render_mode='rgb_array', width=64, height=48)\n"
    "env.reset(seed=0)\nprint(env.render().shape)",
    "G20HandVectorEnv": "from dexwheel.envs.g20_vector import G20HandVectorEnv\n"
    "env = G20HandVectorEnv(2, render_mode='rgb_array', width=64, height=48)\nenv.reset(seed=0)\n"
    "print(env.render()[1].shape)",
}


@pytest.mark.parametrize("mujoco_gl", [None, "glfw"], ids=["MUJOCO_GL-unset", "MUJOCO_GL-glfw"])
@pytest.mark.parametrize("name", list(OFFSCREEN))
@pytest.mark.slow
def test_offscreen_frames_without_a_display_say_to_set_mujoco_gl(name, mujoco_gl, tmp_path):
    code = MAKE + OFFSCREEN[name]
    run = python(code, headless_env(mujoco_gl), tmp_path)
    assert run.returncode == 1, run.stderr[-2000:]
    setting = "MUJOCO_GL=glfw" if mujoco_gl else "MUJOCO_GL is not set (GLFW)"
    assert run.stderr.strip().splitlines()[-1] == (
        f"dexwheel.sim.rendering.RenderingError: {name} render_mode='rgb_array' renders with OpenGL, "
        f"{setting} and there is no display (DISPLAY is not set): set MUJOCO_GL=egl (GPU or Mesa; MUJOCO_GL=osmesa "
        f"renders in software), or run under a virtual screen (xvfb-run -a python ...)"
    )
    if mujoco_gl is not None:
        return
    egl = python(code, headless_env("egl"), tmp_path)  # what the message says to set
    if egl.returncode != 0 and "MUJOCO_GL=egl does not work here" in egl.stderr:
        pytest.skip(f"no EGL here: {egl.stderr.strip().splitlines()[-1]}")
    assert egl.returncode == 0 and egl.stdout.strip() == "(48, 64, 3)", egl.stderr[-2000:]


@pytest.mark.slow
def test_view_script_without_a_display_is_one_error_line(tmp_path):
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "view.py"), "robot=solenopsis", "source=presets", "steps=5",
         f"hydra.run.dir={tmp_path / 'hydra'}"],
        cwd=tmp_path, env=headless_env(None), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr.strip().splitlines() == [
        "error: scripts/view.py (MuJoCo's viewer) opens a window, and there is no display (DISPLAY is not set): run "
        "it under a virtual screen (xvfb-run -a python ...), or record a video offscreen instead (MUJOCO_GL=egl "
        "python scripts/evaluate.py ... video=true)"
    ]


@pytest.mark.parametrize("mujoco_gl", [None, "glfw"], ids=["MUJOCO_GL-unset", "MUJOCO_GL-glfw"])
@pytest.mark.slow
def test_an_evaluation_video_without_a_gl_backend_says_what_to_set_and_writes_nothing(mujoco_gl, tmp_path):
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "evaluate.py"), "robot=g20_left", "policy=random", "video=true",
         "episodes=1", "task.hand_pose.max_episode_steps=5", f"hydra.run.dir={tmp_path / 'hydra'}"],
        cwd=tmp_path, env=headless_env(mujoco_gl), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr[-2000:]
    setting = "MUJOCO_GL=glfw" if mujoco_gl else "MUJOCO_GL is not set (GLFW)"
    assert run.stderr.strip().splitlines() == [
        f"error: video=true renders with OpenGL, {setting} and there is no display (DISPLAY is not set): set "
        f"MUJOCO_GL=egl (GPU or Mesa; MUJOCO_GL=osmesa renders in software), or run under a virtual screen "
        f"(xvfb-run -a python ...)"
    ]
    assert not (tmp_path / "outputs").exists()  # no evaluation JSON, no video


@pytest.mark.skipif(mujoco_gl.missing_library("osmesa") is None, reason="OSMesa is installed here")
def test_osmesa_without_its_library_is_one_line_naming_it_and_the_rest_runs(tmp_path):
    """The docs offer MUJOCO_GL=osmesa as the software fallback; without OSMesa, ``import mujoco`` failed in
    PyOpenGL with a 31-line traceback (issue 57). Now a run that renders nothing runs, and a video is refused in
    one line naming the library, before any episode."""
    env = {**headless_env("osmesa")}
    evaluate = [sys.executable, str(ROOT / "scripts" / "evaluate.py"), "robot=g20_left", "policy=random", "episodes=1",
                "task.hand_pose.max_episode_steps=5"]  # fmt: skip
    video = subprocess.run(
        [*evaluate, "video=true"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert video.returncode == 2 and video.stderr.strip().splitlines() == [
        "error: video=true: MUJOCO_GL=osmesa needs the OSMesa library (libOSMesa.so), which is not installed: "
        "install it (Debian/Ubuntu: apt install libosmesa6), or set MUJOCO_GL=egl or unset it"
    ], video.stderr[-2000:]
    assert not (tmp_path / "outputs").exists()
    plain = subprocess.run(evaluate, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0 and "metrics: outputs/eval/" in plain.stdout, plain.stderr[-2000:]
    frames = python(f"{MAKE}{OFFSCREEN['Solenopsis-v0']}", env, tmp_path)
    assert frames.stderr.strip().splitlines()[-1] == (
        "dexwheel.sim.rendering.RenderingError: Solenopsis-v0 render_mode='rgb_array': MUJOCO_GL=osmesa needs the "
        "OSMesa library (libOSMesa.so), which is not installed: install it (Debian/Ubuntu: apt install libosmesa6), "
        "or set MUJOCO_GL=egl or unset it"
    )
