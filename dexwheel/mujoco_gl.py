"""MuJoCo imported whatever ``MUJOCO_GL`` names, and the library an OpenGL backend lacks named in one line.

``import mujoco`` with ``MUJOCO_GL=osmesa`` (or ``egl``) loads that backend through PyOpenGL at once; when its
library is not installed, PyOpenGL fails deep inside (``AttributeError: 'NoneType' object has no attribute
'glGetError'``, a 31-line traceback) and nothing imports. :func:`import_mujoco`, run as ``dexwheel`` is imported,
imports MuJoCo with rendering off in that case, so everything but rendering runs; a renderer's check
(:func:`dexwheel.sim.rendering.check_offscreen`) refuses first, in one line naming the missing library
(:func:`missing_library`).
"""

from __future__ import annotations

import ctypes
import os
import sys

#: MUJOCO_GL backend: (the library PyOpenGL loads for it, the Debian/Ubuntu package that installs it)
LIBRARIES = {"osmesa": ("OSMesa", "libosmesa6"), "egl": ("EGL", "libegl1")}


def _loads(name: str) -> bool:
    """Whether ``lib<name>.so`` loads as PyOpenGL loads it (the bare name, then ``.so.9`` ... ``.so.0``)."""
    for filename in [f"lib{name}.so", *(f"lib{name}.so.{i}" for i in reversed(range(10)))]:
        try:
            ctypes.CDLL(filename, mode=ctypes.RTLD_LOCAL)  # PyOpenGL's own load makes it global
            return True
        except OSError:
            continue
    return False


def backend() -> str:
    return os.environ.get("MUJOCO_GL", "").strip().lower()


def missing_library(name: str | None = None) -> str | None:
    """What the OpenGL backend ``name`` (default: ``MUJOCO_GL``'s) lacks here, as a message naming the library
    and its package; None when it loads or the backend needs none."""
    name = backend() if name is None else name
    if name not in LIBRARIES or not sys.platform.startswith("linux"):
        return None
    library, package = LIBRARIES[name]
    if _loads(library):
        return None
    other = "egl" if name == "osmesa" else "osmesa"
    return (f"MUJOCO_GL={name} needs the {library} library (lib{library}.so), which is not installed: install it "
            f"(Debian/Ubuntu: apt install {package}), or set MUJOCO_GL={other} or unset it")  # fmt: skip


def guard() -> None:
    """When ``MUJOCO_GL``'s backend lacks its library, import MuJoCo now with rendering off (``MUJOCO_GL`` restored
    after), before anything imports it as it is; otherwise nothing (MuJoCo is imported where it is used)."""
    if "mujoco" in sys.modules or missing_library() is None:
        return
    typed = os.environ["MUJOCO_GL"]
    os.environ["MUJOCO_GL"] = "disable"
    try:
        import mujoco  # noqa: F401
    finally:
        os.environ["MUJOCO_GL"] = typed
