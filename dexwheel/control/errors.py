"""Exceptions and warnings of the action path.

They are separate classes so callers can catch exactly the failure they can handle: a malformed
action from a policy or a teleoperation stream (:class:`ActionError`) is not a mis-wired composer
(:class:`JointCommandError`), which must fail before the control loop ever starts.
"""

from __future__ import annotations


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
