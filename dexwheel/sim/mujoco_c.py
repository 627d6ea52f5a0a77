"""MuJoCo's C API inside compiled kernels: a step's MuJoCo calls without a trip through Python.

A hard-write step is one ``mj_forward`` (13-19 us on the G20) plus about 40 us of Python around it
when each MuJoCo call goes through the bindings. Here the kernels call the C functions themselves:
numba's ``ExternalFunction`` names a symbol of ``libmujoco`` (the library the ``mujoco`` wheel ships
and its bindings use), which llvmlite resolves when a kernel is loaded, so the kernels stay cacheable.
MjModel/MjData are passed as their C addresses (the bindings' ``_address``) and MjData's arrays are
read and written through :func:`f64_array` views of their buffers.
"""

from __future__ import annotations

import ctypes.util
import importlib.metadata
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import llvmlite.binding as llvm
import mujoco
import numpy as np
from numba import carray, types
from numba.extending import intrinsic
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from dexwheel.jit import kernel


def _library_path() -> str:
    """The ``libmujoco`` shipped inside the ``mujoco`` package (the one its bindings load)."""
    package = Path(mujoco.__file__).parent
    pattern = {"win32": "mujoco*.dll", "darwin": "libmujoco*.dylib"}.get(sys.platform, "libmujoco.so*")
    found = sorted(package.glob(pattern))
    if found:
        return str(found[0])
    system = ctypes.util.find_library("mujoco")
    if system is None:
        raise ImportError(f"dexwheel: no MuJoCo library ({pattern}) in {package} or on the system library path")
    return system


def _supported_mujoco() -> str:
    """The ``mujoco`` requirement of dexwheel's metadata (pyproject.toml): the versions these C signatures
    and the golden trajectories were made for."""
    try:
        requirements = importlib.metadata.requires("dexwheel") or []
    except importlib.metadata.PackageNotFoundError:  # run from a source tree without installing it
        return ""
    for text in requirements:
        requirement = Requirement(text)
        if requirement.name == "mujoco" and requirement.marker is None:
            return str(requirement.specifier)
    return ""


def check_mujoco_version(version: str = mujoco.__version__) -> None:
    """ImportError, naming both, when the installed MuJoCo is not one the kernels were made for."""
    supported = _supported_mujoco()
    if supported and not SpecifierSet(supported).contains(version, prereleases=True):
        raise ImportError(
            f"dexwheel: mujoco {version} is installed, but dexwheel's compiled kernels call MuJoCo's C functions "
            f"with the signatures of mujoco{supported} (and its golden trajectories were made with it): "
            f"pip install 'mujoco{supported}'"
        )


check_mujoco_version()
llvm.load_library_permanently(_library_path())

_MODEL_DATA = types.void(types.voidptr, types.voidptr)
#: The C functions the kernels call, with their numba signatures (checked against the bindings below).
C_FUNCTIONS: dict[str, types.Signature] = {
    "mj_forward": _MODEL_DATA,
    "mj_kinematics": _MODEL_DATA,
    "mj_collision": _MODEL_DATA,
    "mj_sensorPos": _MODEL_DATA,  # the position-stage sensors (the projection's contact sensors)
    "mj_setState": types.void(types.voidptr, types.voidptr, types.voidptr, types.intc),
    # (m, d, geom1, geom2, distmax, fromto): the signed distance of two geoms by the collision function
    # mj_collision uses for them (fromto may be 0: not wanted)
    "mj_geomDistance": types.float64(
        types.voidptr, types.voidptr, types.intc, types.intc, types.float64, types.voidptr
    ),
}
#: How the bindings' docstrings spell each C argument type (struct and array pointers, int, double).
_BINDING_TYPES = {"MjModel": types.voidptr, "MjData": types.voidptr, "NDArray": types.voidptr,
                  "SupportsInt": types.intc, "SupportsFloat": types.float64}  # fmt: skip
_BINDING_RETURNS = {"None": types.void, "float": types.float64}


def check_signatures() -> None:
    """Each C function's numba signature against the Python binding's (its docstring's first line): the
    same number of arguments of the same kinds, the same return type. ImportError naming a mismatch."""
    for name, sig in C_FUNCTIONS.items():
        head = getattr(mujoco, name).__doc__.splitlines()[0]
        match = re.fullmatch(rf"{name}\((.*)\) -> (\w+)", head)
        params = re.split(r", (?=\w+: )", match.group(1)) if match else []
        kinds = [next((t for key, t in _BINDING_TYPES.items() if key in p), None) for p in params]
        returns = _BINDING_RETURNS.get(match.group(2)) if match else None
        if not match or kinds != list(sig.args) or returns != sig.return_type:
            raise ImportError(f"dexwheel: {name} of mujoco {mujoco.__version__} is `{head}`, not what the kernels "
                              f"declare ({sig}); see dexwheel/sim/mujoco_c.py")  # fmt: skip


#: How ``mujoco.h`` spells each C argument and return type (pointers and fixed arrays are addresses).
_C_TYPES = {"int": types.intc, "mjtNum": types.float64, "void": types.void}


def header_path() -> Path:
    """The ``mujoco.h`` the ``mujoco`` package ships beside its library (the headers it was built from)."""
    return Path(mujoco.__file__).parent / "include" / "mujoco" / "mujoco.h"


def check_header(header: Path | None = None) -> None:
    """Each C function's numba signature against its declaration in the installed MuJoCo's ``mujoco.h``, and
    ``mjtNum`` a double (the kernels read MjData's arrays as doubles). ImportError naming a mismatch; nothing
    to check when the package ships no headers."""
    header = header or header_path()
    if not header.is_file():
        return
    if mujoco.MJTNUM_BYTES != 8:
        raise ImportError(f"dexwheel: mujoco {mujoco.__version__} is built with {mujoco.MJTNUM_BYTES}-byte mjtNum; "
                          "the kernels read MjData's arrays as doubles")  # fmt: skip
    text = header.read_text()
    for name, sig in C_FUNCTIONS.items():
        match = re.search(rf"MJAPI\s+(\w+)\s+{name}\(([^)]*)\);", text)
        params = [" ".join(p.split()) for p in match.group(2).split(",")] if match else []
        kinds = [types.voidptr if ("*" in p or "[" in p) else _C_TYPES.get(p.rsplit(" ", 1)[0]) for p in params]
        returns = _C_TYPES.get(match.group(1)) if match else None
        if not match or kinds != list(sig.args) or returns != sig.return_type:
            found = " ".join(match.group(0).split()) if match else "not declared"
            raise ImportError(f"dexwheel: {name} in {header} of mujoco {mujoco.__version__} is `{found}`, not what "
                              f"the kernels declare ({sig}); see dexwheel/sim/mujoco_c.py")  # fmt: skip


check_signatures()
check_header()
mj_forward, mj_kinematics, mj_collision, mj_sensorPos, mj_setState, mj_geomDistance = (
    types.ExternalFunction(name, sig) for name, sig in C_FUNCTIONS.items()
)

STATE_TIME = int(mujoco.mjtState.mjSTATE_TIME)

#: Columns of :func:`data_addresses`' table.
DATA, QPOS, QVEL, CTRL, SENSORDATA, GEOM_XPOS, GEOM_XMAT, XANCHOR, XAXIS = range(9)


@intrinsic
def _f64_pointer(typingctx, address):  # noqa: ANN001, ANN202  (numba's intrinsic protocol)
    """An integer address as a ``double*`` (for :func:`numba.carray`)."""
    sig = types.CPointer(types.float64)(types.intp)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


@kernel
def f64_array(address: int, size: int) -> np.ndarray:
    """Inside a kernel: the ``size`` doubles at ``address`` as an array (a view, no copy)."""
    return carray(_f64_pointer(address), size)


def data_addresses(datas: Sequence[mujoco.MjData]) -> np.ndarray:
    """``(N, 9)`` addresses per MjData: the struct, then the arrays ``qpos``, ``qvel``, ``ctrl``,
    ``sensordata``, ``geom_xpos``, ``geom_xmat``, ``xanchor``, ``xaxis`` (columns :data:`DATA` ... :data:`XAXIS`).

    The arrays live in the MjData's one buffer, allocated once, so the addresses hold as long as the
    MjData does (the caller keeps it alive).
    """
    table = np.zeros((len(datas), XAXIS + 1), dtype=np.intp)
    for i, d in enumerate(datas):
        arrays = (d.qpos, d.qvel, d.ctrl, d.sensordata, d.geom_xpos, d.geom_xmat, d.xanchor, d.xaxis)
        table[i] = (d._address, *(a.ctypes.data for a in arrays))
    return table
