"""Exceptions and warnings of the action path.

They are separate classes so callers can catch exactly the failure they can handle: a malformed
action from a policy or a teleoperation stream (:class:`ActionError`) is not a mis-wired composer
(:class:`JointCommandError`), which must fail before the control loop ever starts.
"""

from __future__ import annotations

from typing import NoReturn


class JointCommandError(ValueError):
    """A composer/resolver wiring error found at construction (names the joint and the layers)."""


class ActionError(ValueError):
    """An action that cannot be mapped: wrong shape, out of range, NaN/inf, unknown joint name.

    The message names the field (``action[3]``, ``SDK channel 15``), the joint and the allowed range.
    """


class UnknownJointError(ActionError, KeyError):
    """A joint name that the mapping does not know; the message lists the valid names.

    It is both a :class:`ValueError` (bad input) and a :class:`KeyError` (bad name lookup).
    """

    def __str__(self) -> str:  # KeyError would repr() the message; keep it readable
        return str(self.args[0]) if self.args else ""


class ActionClipWarning(UserWarning):
    """Emitted once per mapping call that had to clip (or hold) out-of-range/non-finite entries."""


class JointDroppedWarning(UserWarning):
    """Emitted once per resolver binding whose source has joints the robot does not have."""


class SourceTimeoutError(RuntimeError):
    """An asynchronous source is stale and its slot's policy says the state must not go on."""


class NotCopyable:
    """Mixin of the wiring objects (composer, resolver, latest-value slot): copying or pickling one raises
    a TypeError naming the class and what to do instead, since a copy would come apart, silently, from the
    arrays or the writer it is wired to. Subclasses say why in :attr:`_copy_refusal`."""

    _copy_refusal = "build another one"

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"a {type(self).__name__} cannot be copied or pickled: {self._copy_refusal}")
