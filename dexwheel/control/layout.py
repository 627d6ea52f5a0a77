"""Ordered joint names: the one vocabulary the composer, the resolver and the mappings share.

A layout is immutable and compares by its names (the label is only for messages), so it can key
caches: the resolver compiles one binding per source layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from dexwheel.control.errors import UnknownJointError


class JointLayout:
    """An immutable, ordered tuple of unique, non-blank joint names plus a label for messages."""

    __slots__ = ("_hash", "_index", "label", "names")

    names: tuple[str, ...]
    label: str

    def __init__(self, names: Iterable[str], label: str = "") -> None:
        names = tuple(names)
        for i, name in enumerate(names):
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"layout {label!r}: joint name #{i} must be a non-blank string, got {name!r}")
        if len(set(names)) != len(names):
            dups = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"layout {label!r}: duplicate joint names {dups}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "label", str(label))
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(names)})
        object.__setattr__(self, "_hash", hash(names))

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("JointLayout is immutable")

    def __reduce__(self) -> tuple[type[JointLayout], tuple[tuple[str, ...], str]]:
        return (JointLayout, (self.names, self.label))

    @property
    def dof(self) -> int:
        return len(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, JointLayout):
            return NotImplemented
        return self._hash == other._hash and self.names == other.names

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"JointLayout({self.names!r}, label={self.label!r})"

    def describe(self) -> str:
        """The label for messages, or a short stand-in when there is none."""
        return repr(self.label) if self.label else f"<{self.dof}-joint layout>"

    def index(self, name: str) -> int:
        """Position of ``name``; an unknown name raises :class:`UnknownJointError` listing the valid ones."""
        try:
            return self._index[name]
        except KeyError:
            raise UnknownJointError(
                f"joint {name!r} is not in layout {self.describe()}; valid names: {list(self.names)}"
            ) from None

    def indices(self, names: Iterable[str]) -> np.ndarray:
        """Positions of ``names`` as an ``intp`` array (for compiled index maps)."""
        names = tuple(names)
        unknown = [n for n in names if n not in self._index]
        if unknown:
            raise UnknownJointError(
                f"joints {unknown} are not in layout {self.describe()}; valid names: {list(self.names)}"
            )
        return np.fromiter((self._index[n] for n in names), dtype=np.intp, count=len(names))

    def select(self, names: Iterable[str], label: str | None = None) -> JointLayout:
        """A sub-layout with ``names`` in the given order (each must be in this layout)."""
        names = tuple(names)
        self.indices(names)  # validates
        return JointLayout(names, self.label if label is None else label)

    def missing_from(self, other: JointLayout | Iterable[str]) -> tuple[str, ...]:
        """The names of this layout that ``other`` lacks, in this layout's order."""
        other_names = other if isinstance(other, JointLayout) else set(other)
        return tuple(n for n in self.names if n not in other_names)


def env_layout(names: Iterable[str], num_envs: int, label: str = "") -> JointLayout:
    """``names`` for one env, or for ``num_envs`` envs side by side with an env prefix (``env3/fl_knee``):
    one layout, so that one ``compose()`` merges every env's layers with precompiled copies."""
    names = tuple(names)
    if num_envs == 1:
        return JointLayout(names, label)
    return JointLayout([f"env{i}/{j}" for i in range(num_envs) for j in names], label)
