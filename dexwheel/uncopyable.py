"""Objects that hold handles a copy would share (C addresses, a DDS participant) refuse to be copied.

A plain ``copy.deepcopy`` or pickle of such an object copies the raw handles: the copy shares them with the
original, and when the (possibly half-built) copy is collected it may delete what the original still uses.
:class:`Uncopyable` refuses ``copy.copy``, ``copy.deepcopy`` and pickling at once, before anything is touched.
"""

from __future__ import annotations

from typing import Any, NoReturn


class Uncopyable:
    """Mixin: ``copy.copy``, ``copy.deepcopy`` and pickling raise ``TypeError(self._copy_refusal())``; a subclass
    says why and what to do instead in ``_why_uncopyable``, or words the whole message in ``_copy_refusal``."""

    _why_uncopyable = "build another one"

    def _copy_refusal(self) -> str:
        """Why this object cannot be copied, and what to do instead (one line)."""
        return f"a {type(self).__name__} cannot be copied or pickled: {self._why_uncopyable}"

    def _refuse_copy(self) -> NoReturn:
        raise TypeError(self._copy_refusal())

    def __reduce__(self) -> NoReturn:  # pickle, and copy's fallback
        self._refuse_copy()

    def __copy__(self) -> NoReturn:
        self._refuse_copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        self._refuse_copy()
