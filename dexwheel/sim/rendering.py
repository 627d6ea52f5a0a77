"""Rendering: a lit scene a person can read, offscreen frames of several simulations of one model (the native
vector envs' ``rgb_array``), and the one check every renderer runs before it starts.

Without a display, GLFW (MuJoCo's window, and its default OpenGL backend on Linux) ends the process from C
(an assertion, exit status 134) or fails deep in a traceback. :func:`check_render_mode` (a window:
:func:`check_window`; offscreen frames: :func:`check_offscreen`) raises :class:`RenderingError` first,
saying what to set: ``MUJOCO_GL=egl`` for offscreen frames, ``xvfb-run`` for a window without a screen.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import mujoco
import numpy as np

from dexwheel.mujoco_gl import missing_library

#: how to get a virtual screen for a window (Debian's xvfb package)
XVFB = "run it under a virtual screen (xvfb-run -a python ...)"
#: the offscreen alternative to a window
OFFSCREEN = "render offscreen instead (render_mode='rgb_array' with MUJOCO_GL=egl)"
#: MUJOCO_GL values MuJoCo and gymnasium render offscreen with on Linux ('' and glfw: a hidden GLFW window)
GL_BACKENDS = ("glfw", "egl", "osmesa")
#: checks passed in this process: (kind, MUJOCO_GL, display)
_passed: set[tuple[str, str, str]] = set()


class RenderingError(RuntimeError):
    """Rendering cannot start here (no display for a window, no working OpenGL backend offscreen); the message
    says what to set instead."""


def _display() -> str:
    return os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or ""


def _glfw_starts() -> bool:
    """Whether GLFW initialises (connects to the display); GLFW's own complaints are not printed."""
    import glfw

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bool(glfw.init())


def check_window(what: str, instead: str = OFFSCREEN) -> None:
    """Raise :class:`RenderingError` when ``what`` (a window: ``render_mode="human"``, MuJoCo's viewer) cannot
    open: on Linux, no ``DISPLAY`` / ``WAYLAND_DISPLAY``, or one GLFW cannot connect to. ``instead``: the
    alternative the message offers besides a virtual screen."""
    if not sys.platform.startswith("linux"):
        return
    display = _display()
    key = ("window", "", display)
    if key in _passed:
        return
    if not display:
        raise RenderingError(
            f"{what} opens a window, and there is no display (DISPLAY is not set): {XVFB}, or {instead}"
        )
    if not _glfw_starts():
        raise RenderingError(
            f"{what} opens a window, and the display {display!r} cannot be opened: {XVFB}, or {instead}"
        )
    _passed.add(key)


def check_offscreen(what: str) -> None:
    """Raise :class:`RenderingError` when ``what`` cannot render offscreen frames with the OpenGL backend
    ``MUJOCO_GL`` selects (unset: GLFW, which needs a display on Linux); EGL and OSMesa are tried once."""
    backend = os.environ.get("MUJOCO_GL", "").strip().lower()
    display = _display() if backend in ("", "glfw") else ""
    key = ("offscreen", backend, display)
    if key in _passed:
        return
    fix = "set MUJOCO_GL=egl (GPU or Mesa; MUJOCO_GL=osmesa renders in software)"
    if backend not in ("", *GL_BACKENDS):
        raise RenderingError(f"{what}: MUJOCO_GL={backend!r} is not one of {list(GL_BACKENDS)}; {fix}")
    if backend in ("", "glfw") and sys.platform.startswith("linux"):
        name = "MUJOCO_GL=glfw" if backend else "MUJOCO_GL is not set (GLFW)"
        if not display:
            raise RenderingError(
                f"{what} renders with OpenGL, {name} and there is no display (DISPLAY is not set): {fix}, "
                f"or run under a virtual screen (xvfb-run -a python ...)"
            )
        if not _glfw_starts():
            raise RenderingError(
                f"{what} renders with OpenGL, {name} and the display {display!r} cannot be opened: {fix}"
            )
    elif backend in ("egl", "osmesa"):
        if missing := missing_library(backend):
            raise RenderingError(f"{what}: {missing}")
        try:
            if backend == "egl":
                from mujoco.egl import GLContext
            else:
                from mujoco.osmesa import GLContext
            context = GLContext(16, 16)
            context.make_current()
            context.free()
        except Exception as e:  # noqa: BLE001 - a missing library and a failing driver mean the same to a user
            raise RenderingError(
                f"{what}: the OpenGL backend MUJOCO_GL={backend} does not work here ({type(e).__name__}: {e}); "
                f"set MUJOCO_GL to one whose library is installed (egl: libegl1, osmesa: libosmesa6), or run under "
                f"a virtual screen with MUJOCO_GL=glfw (xvfb-run -a python ...)"
            ) from None
    _passed.add(key)


def check_render_mode(render_mode: str | None, env: str) -> None:
    """The check for an env's ``render_mode``: ``"human"`` a window, any other mode offscreen frames."""
    if render_mode == "human":
        check_window(f"{env} render_mode='human'")
    elif render_mode is not None:
        check_offscreen(f"{env} render_mode={render_mode!r}")


def free_camera(model: mujoco.MjModel, settings: Mapping[str, Any]) -> mujoco.MjvCamera:
    """A free camera of ``model`` with ``settings`` (``distance``, ``azimuth``, ``elevation``, ``lookat``, as
    Gymnasium's ``default_cam_config``) applied over MuJoCo's default."""
    cam = mujoco.MjvCamera()
    mujoco.mjv_defaultFreeCamera(model, cam)
    for key, value in settings.items():
        if key == "lookat":
            cam.lookat[:] = value
        else:
            setattr(cam, key, value)
    return cam


def render_each(
    renderer: mujoco.Renderer, datas: Iterable[mujoco.MjData], camera: mujoco.MjvCamera | str | int
) -> tuple[np.ndarray, ...]:
    """One RGB frame per MjData, all from ``camera`` (each a copy: the renderer reuses its buffer)."""
    frames = []
    for data in datas:
        renderer.update_scene(data, camera=camera)
        frames.append(renderer.render().copy())
    return tuple(frames)


def add_studio(spec: mujoco.MjSpec, floor_z: float, floor_group: int) -> None:
    """Light the scene and give it a backdrop and a floor, so that a still or a video shows the robot
    clearly (MuJoCo's default is a dim headlight in front of black).

    Render-only: lights, textures and ``visual`` settings take no part in the physics, and the floor is a
    visual geom (contype = conaffinity = 0, ``floor_group``) on a static body added after every other
    one, so no body or geom of the robot changes its index and no contact, sensor or collision pair changes.
    """
    spec.visual.headlight.ambient = [0.25, 0.25, 0.25]
    spec.visual.headlight.diffuse = [0.35, 0.35, 0.35]
    spec.visual.headlight.specular = [0.05, 0.05, 0.05]
    spec.add_texture(name="studio_sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX, builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
                     rgb1=[0.80, 0.84, 0.90], rgb2=[0.35, 0.39, 0.45], width=512, height=3072)  # fmt: skip
    floor_tex = spec.add_texture(name="studio_floor", type=mujoco.mjtTexture.mjTEXTURE_2D,
                                 builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.62, 0.64, 0.67],
                                 rgb2=[0.55, 0.57, 0.60], width=512, height=512)  # fmt: skip
    mat = spec.add_material(name="studio_floor", texrepeat=[16, 16], reflectance=0.05)
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = floor_tex.name
    directional = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
    spec.worldbody.add_light(name="studio_key", type=directional, pos=[1, -0.5, 2], dir=[-0.5, 0.25, -1],
                             diffuse=[0.6, 0.6, 0.6], specular=[0.2, 0.2, 0.2], castshadow=True)  # fmt: skip
    spec.worldbody.add_light(name="studio_fill", type=directional, pos=[-1, 1, 1], dir=[0.5, -0.5, -0.5],
                             diffuse=[0.25, 0.25, 0.25], specular=[0, 0, 0], castshadow=False)  # fmt: skip
    stage = spec.worldbody.add_body(name="studio")
    stage.add_geom(name="studio_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1, 1, 0.05], pos=[0, 0, floor_z],
                   material=mat.name, contype=0, conaffinity=0, group=floor_group)  # fmt: skip


def compile_without_textures(spec: mujoco.MjSpec) -> mujoco.MjModel:
    """``spec`` compiled with every builtin texture at 1 x 1 texel: the same model but for ``tex_*``.

    Textures take no part in the physics and MuJoCo's builtin ones are large (a 512 x 3072 skybox is 4.7 MB of
    ``tex_data``), so a model each env of a vector env holds for its physics can leave them out, and the one
    model a renderer draws with keeps them. Every other field compiles to the same bits (the number, order
    and ids of textures and materials included), so an ``MjData`` of either model works with the other. The
    spec is left as it was; textures loaded from files keep their data.
    """
    sizes = [(t, t.width, t.height) for t in spec.textures if t.builtin != mujoco.mjtBuiltin.mjBUILTIN_NONE]
    try:
        for t, _, _ in sizes:
            t.width = t.height = 1
        return spec.compile()
    finally:
        for t, width, height in sizes:
            t.width, t.height = width, height
