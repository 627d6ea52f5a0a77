"""Merge named joint-target sources into one motor frame (see ``shared/spec/composer.md``).

Producing a command and merging commands are separate jobs. Each producer (policy, topic, IK,
trajectory, state logic) updates its own :class:`~dexwheel.control.targets.JointTargetBuffer`; the
composer only merges. Everything that can be wrong with the wiring (a typo, a forgotten joint, an
accidental takeover, a source without gains) is found here, at construction, before the control
loop starts; :meth:`JointCommandComposer.compose` then only runs precompiled copies.

The layers' arrays are numpy arrays or torch tensors (all of one library and device: the composer's
frame lives there too, :mod:`dexwheel.control._xp`), so the MuJoCo envs and the Isaac Lab tasks merge
with this one composer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from dexwheel.control import _xp
from dexwheel.control._copyplan import Op, compile_copy
from dexwheel.control.errors import JointCommandError
from dexwheel.control.layout import JointLayout
from dexwheel.control.targets import FIELDS, REQUIRED_FIELDS, JointTargetView, MotorFrame
from dexwheel.uncopyable import Uncopyable


@dataclass(frozen=True)
class JointCommandLayer:
    """A named source in a composer. ``override=True`` lets it take joints an earlier layer owns."""

    name: str
    view: JointTargetView
    override: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise JointCommandError(f"a layer name must be a non-blank string, got {self.name!r}")


def _check_source(layer: JointCommandLayer, xp=np, device=None) -> None:
    """Rule 5: every source provides complete position, kp and kd (float32, one value per joint), as arrays
    of the composer's library ``xp`` on its ``device``."""
    view = layer.view
    if not isinstance(view, JointTargetView):
        raise JointCommandError(
            f"layer {layer.name!r}: expected a JointTargetView (e.g. JointTargetBuffer(...).view), "
            f"got {type(view).__name__}"
        )
    if not isinstance(view.layout, JointLayout):
        raise JointCommandError(f"layer {layer.name!r}: its view has no JointLayout")
    shape = (view.layout.dof,)
    joints = list(view.layout.names)
    for field in FIELDS:
        arr = view.field(field)
        if arr is None:
            if field in REQUIRED_FIELDS:
                raise JointCommandError(
                    f"layer {layer.name!r} provides no {field} for joints {joints}; every source must "
                    f"provide complete position, kp and kd (the composer never guesses gains)"
                )
            continue
        problem = None
        if not _xp.same_place(arr, xp, device):
            kind = "a numpy array" if xp is np else f"a torch tensor on {device}"
            got = _xp.where(arr) if isinstance(arr, np.ndarray) or hasattr(arr, "device") else type(arr).__name__
            problem = f"is a {got}, not {kind} (the layers' first array decides)"
        elif not _xp.is_float32(arr):
            problem = f"has dtype {arr.dtype}, expected float32"
        elif tuple(arr.shape) != shape:
            problem = f"has shape {tuple(arr.shape)}, expected {shape} (one value per joint)"
        elif not _xp.is_contiguous(arr):
            problem = "is not C-contiguous"
        if problem:
            raise JointCommandError(f"layer {layer.name!r}: {field} for joints {joints} {problem}")


def _first_place(layer: JointCommandLayer) -> tuple:
    """The array library and device of a layer's position (numpy when it is neither; rule 5 then names it)."""
    position = getattr(layer.view, "position", None)
    try:
        xp = _xp.namespace(position)
    except TypeError:
        return np, None
    return xp, _xp.device_of(position)


class JointCommandComposer(Uncopyable):
    """Merge layers into one long-lived :class:`MotorFrame` in ``output_layout`` order.

    Construction rules (each failure names the joint(s) and the layer(s)):

    1. every joint of the output layout is covered by at least one layer;
    2. no layer contains a joint outside the output layout;
    3. two ordinary layers may not own the same joint;
    4. a later layer replaces an existing owner only with ``override=True``;
    5. every source provides complete position, kp and kd.

    Layer names are unique and there is at least one layer. Each joint is written only by its final
    owner, so :meth:`compose` never writes a joint twice and never depends on stale values.

    A composer cannot be copied or pickled (TypeError): its copies are compiled against its sources' arrays.
    """

    _why_uncopyable = (
        "its copies are compiled against its sources' arrays, which a copy would not read; build another "
        "JointCommandComposer over the sources it should merge"
    )

    def __init__(self, output_layout: JointLayout, layers: Iterable[JointCommandLayer]) -> None:
        if not isinstance(output_layout, JointLayout):
            output_layout = JointLayout(output_layout)
        layers = tuple(layers)
        out_name = output_layout.describe()
        if not layers:
            raise JointCommandError(f"composer for output {out_name}: at least one layer is required")
        seen: set[str] = set()
        xp, device = np, None  # the library (and device) of the first layer's position: the frame's too
        for layer in layers:
            if not isinstance(layer, JointCommandLayer):
                raise JointCommandError(f"composer for output {out_name}: expected JointCommandLayer, got {layer!r}")
            if layer.name in seen:
                raise JointCommandError(f"composer for output {out_name}: layer name {layer.name!r} is used twice")
            if not seen:
                xp, device = _first_place(layer)
            seen.add(layer.name)
            _check_source(layer, xp, device)

        owner: dict[str, int] = {}
        for li, layer in enumerate(layers):
            foreign = [n for n in layer.view.layout.names if n not in output_layout]
            if foreign:
                raise JointCommandError(
                    f"layer {layer.name!r} contains joints {foreign} that are not in the output layout "
                    f"{out_name}; output joints: {list(output_layout.names)}"
                )
            for name in layer.view.layout.names:
                prev = owner.get(name)
                if prev is not None and not layer.override:
                    prev_layer = layers[prev]
                    if prev_layer.override:
                        raise JointCommandError(
                            f"layer {layer.name!r} would replace the owner of joint {name!r}, override layer "
                            f"{prev_layer.name!r}, without override=True"
                        )
                    raise JointCommandError(
                        f"joint {name!r} is owned by two ordinary layers, {prev_layer.name!r} and "
                        f"{layer.name!r}; declare JointCommandLayer({layer.name!r}, ..., override=True) if "
                        f"{layer.name!r} is meant to replace {prev_layer.name!r} there"
                    )
                owner[name] = li
        uncovered = [n for n in output_layout.names if n not in owner]
        if uncovered:
            raise JointCommandError(
                f"output joints {uncovered} of {out_name} are covered by no layer "
                f"(layers: {[layer.name for layer in layers]})"
            )

        self._output_layout = output_layout
        self._layers = layers
        self._owners = MappingProxyType({n: layers[owner[n]].name for n in output_layout.names})
        self._frame = MotorFrame(output_layout, xp=xp, device=device)
        ops: list[Op] = []
        for li, layer in enumerate(layers):
            view = layer.view
            owned = [n for n in view.layout.names if owner[n] == li]
            src_idx = view.layout.indices(owned)
            dst_idx = output_layout.indices(owned)
            if view.block is not None:
                ops += compile_copy(self._frame.block, dst_idx, view.block, src_idx)
                continue
            for row, field in enumerate(FIELDS):
                arr = view.field(field)
                if arr is None:  # vel/torque the source leaves unset: zeros, never stale values
                    arr = _xp.zeros(xp, (view.layout.dof,), device)
                ops += compile_copy(self._frame.block[row : row + 1], dst_idx, arr.reshape(1, -1), src_idx)
        self._ops = tuple(ops)

    def compose(self) -> MotorFrame:
        """Copy every layer's owned joints into the frame and return it (the same object every call).

        No name lookup, no allocation, no logging: only the copies compiled at construction.
        """
        for op in self._ops:
            op()
        return self._frame

    @property
    def frame(self) -> MotorFrame:
        """The long-lived output frame (also what :meth:`compose` returns)."""
        return self._frame

    @property
    def output_layout(self) -> JointLayout:
        return self._output_layout

    @property
    def layers(self) -> tuple[JointCommandLayer, ...]:
        return self._layers

    @property
    def owners(self) -> Mapping[str, str]:
        """Output joint -> name of the layer that finally owns it (after overrides)."""
        return self._owners

    @property
    def op_count(self) -> int:
        """How many precompiled copies one :meth:`compose` runs (for tests and benchmarks)."""
        return len(self._ops)
