"""Joint target sources and the motor frame they are merged into.

Every per-joint command has five fields, the usual motor-driver command: position target, kp, kd,
velocity target and feed-forward torque. Buffers and frames keep them as the rows of one
``(5, dof)`` float32 block, so the composer can move a run of joints, all five fields, in a single
copy; ``position``/``qpos``, ``kp``, ... are contiguous row views of that block and are updated in place.

The blocks are numpy arrays by default; ``xp=torch`` (and a ``device``) keeps them as torch tensors, which
the composer and the resolver then merge with torch's copies (:mod:`dexwheel.control._xp`): the Isaac Lab
tasks run this same code on their tensors.
"""

from __future__ import annotations

import copy
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dexwheel.control import _xp
from dexwheel.control.layout import JointLayout

#: Row order of a target block / motor frame block.
FIELDS: tuple[str, ...] = ("position", "kp", "kd", "vel", "torque")
#: The same rows under their MotorFrame names.
FRAME_FIELDS: tuple[str, ...] = ("qpos", "kp", "kd", "vel", "torque")
#: Fields a source must provide (composition rule 5): the composer never guesses gains.
REQUIRED_FIELDS: tuple[str, ...] = ("position", "kp", "kd")


def _fill(row: np.ndarray, value: ArrayLike | None, what: str, layout: JointLayout) -> None:
    if value is None:
        return
    arr = _xp.as_float64(_xp.namespace(row), value, _xp.device_of(row))
    if arr.ndim not in (0, 1) or (arr.ndim == 1 and tuple(arr.shape) != tuple(row.shape)):
        raise ValueError(
            f"{what} for layout {layout.describe()}: expected a scalar or shape {tuple(row.shape)}, "
            f"got {tuple(arr.shape)}"
        )
    _xp.fill(row, arr)


def _rebuild(cls: type, layout: JointLayout, block: np.ndarray) -> JointTargetBuffer | MotorFrame:
    obj = cls(layout, xp=_xp.namespace(block), device=_xp.device_of(block))
    obj.block[...] = block
    return obj


def _view_of(layout: JointLayout, block: np.ndarray) -> JointTargetView:
    """A view whose five fields are the rows of ``block``, as a buffer's view is."""
    return JointTargetView(layout, *block, block=block)


class JointTargetView:
    """A named source's read handle: a layout plus one float32 array per field.

    Views are usually taken from a :class:`JointTargetBuffer` (``buffer.view``), whose arrays live in
    one block. A view can also wrap arrays owned elsewhere (a policy's output); then ``vel`` and
    ``torque`` may be ``None`` (the composer contributes zeros) but ``position``, ``kp`` and ``kd`` must
    be present, 1-D float32, C-contiguous and ``(dof,)`` long, which the composer checks (rule 5).
    """

    __slots__ = ("block", "kd", "kp", "layout", "position", "torque", "vel")

    def __init__(
        self,
        layout: JointLayout,
        position: np.ndarray | None,
        kp: np.ndarray | None,
        kd: np.ndarray | None,
        vel: np.ndarray | None = None,
        torque: np.ndarray | None = None,
        *,
        block: np.ndarray | None = None,
    ) -> None:
        self.layout = layout
        self.position = position
        self.kp = kp
        self.kd = kd
        self.vel = vel
        self.torque = torque
        #: The ``(5, dof)`` block the five fields are rows of, when they are (buffer views).
        self.block = block

    def field(self, name: str) -> np.ndarray | None:
        return getattr(self, name)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # a copy is independent: a buffer's view is rebuilt over one copied block (its rows stay views of
        # it, and the composer, which reads the block, sees writes to them); other views copy each field
        if self.block is not None:
            return (_view_of, (self.layout, _xp.copy(self.block)))
        return (JointTargetView, (self.layout, *(copy.deepcopy(self.field(f)) for f in FIELDS)))

    def __repr__(self) -> str:
        return f"JointTargetView({self.layout.describe()}, dof={self.layout.dof})"


class JointTargetBuffer:
    """A source's float32 targets for one layout, created once and updated in place every cycle.

    All fields start at zero (``vel`` and ``torque`` stay zero for a source that never sets them, so a
    motor frame never carries a stale velocity or torque). Optional ``position``/``kp``/``kd``/
    ``vel``/``torque`` arguments (scalars or ``(dof,)`` arrays) set the initial values. ``xp`` (numpy, the
    default, or torch) and ``device`` (torch) choose where the block lives.
    """

    __slots__ = ("block", "kd", "kp", "layout", "position", "torque", "vel", "view")

    def __init__(
        self,
        layout: JointLayout,
        *,
        position: ArrayLike | None = None,
        kp: ArrayLike | None = None,
        kd: ArrayLike | None = None,
        vel: ArrayLike | None = None,
        torque: ArrayLike | None = None,
        xp: ModuleType | None = None,
        device: Any = None,
    ) -> None:
        if not isinstance(layout, JointLayout):
            layout = JointLayout(layout)
        self.layout = layout
        xp = _xp.resolve(xp)
        self.block = _xp.zeros(xp, (len(FIELDS), layout.dof), _xp.device(xp, device))
        self.position, self.kp, self.kd, self.vel, self.torque = self.block
        for name, value in zip(FIELDS, (position, kp, kd, vel, torque), strict=True):
            _fill(getattr(self, name), value, name, layout)
        self.view = JointTargetView(layout, self.position, self.kp, self.kd, self.vel, self.torque, block=self.block)

    def __reduce__(self) -> tuple[object, tuple[type, JointLayout, np.ndarray]]:
        # rebuild, so the field arrays stay views of one block after pickling/deepcopy
        return (_rebuild, (JointTargetBuffer, self.layout, _xp.copy(self.block)))

    def __repr__(self) -> str:
        return f"JointTargetBuffer({self.layout.describe()}, dof={self.layout.dof})"


class MotorFrame:
    """One command per joint of ``layout``: float32 ``qpos``, ``kp``, ``kd``, ``vel``, ``torque``.

    The composer and the resolver each own long-lived frames and overwrite them in place; treat a
    frame you did not create as read-only and copy it (:meth:`copy`) to keep it past the next cycle.
    ``xp`` and ``device`` as for :class:`JointTargetBuffer`.
    """

    __slots__ = ("block", "kd", "kp", "layout", "qpos", "torque", "vel")

    def __init__(self, layout: JointLayout, *, xp: ModuleType | None = None, device: Any = None) -> None:
        if not isinstance(layout, JointLayout):
            layout = JointLayout(layout)
        self.layout = layout
        xp = _xp.resolve(xp)
        self.block = _xp.zeros(xp, (len(FRAME_FIELDS), layout.dof), _xp.device(xp, device))
        self.qpos, self.kp, self.kd, self.vel, self.torque = self.block

    def __reduce__(self) -> tuple[object, tuple[type, JointLayout, np.ndarray]]:
        return (_rebuild, (MotorFrame, self.layout, _xp.copy(self.block)))

    def copy(self) -> MotorFrame:
        out = MotorFrame(self.layout, xp=_xp.namespace(self.block), device=_xp.device_of(self.block))
        out.block[...] = self.block
        return out

    def as_dict(self) -> dict[str, dict[str, float]]:
        """``{joint: {field: value}}``, for logs and tests (allocates; never in the control loop)."""
        return {
            name: {f: float(self.block[r, i]) for r, f in enumerate(FRAME_FIELDS)}
            for i, name in enumerate(self.layout.names)
        }

    def __repr__(self) -> str:
        return f"MotorFrame({self.layout.describe()}, dof={self.layout.dof})"
