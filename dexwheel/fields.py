"""Env config fields: the error a bad constructor argument raises, and the type check every env config runs.

An env names a bad field as its constructor takes it (``goal_mode``, ``domain_rand.friction``) in
:attr:`ConfigFieldError.field`, and the message's detail starts with that name, so a config layer
(:mod:`dexwheel.rl.env_factory`) can put the field's full config path in its place.
"""

from __future__ import annotations

import dataclasses
import difflib
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np


class ConfigFieldError(ValueError):
    """A config field that cannot be used; ``detail`` starts with ``field``, ``prefix`` names the env."""

    def __init__(self, field: str, detail: str, prefix: str = "") -> None:
        super().__init__(f"{prefix}: {detail}" if prefix else detail)
        self.field, self.detail, self.prefix = field, detail, prefix

    def __reduce__(self) -> tuple[Any, ...]:  # pickles with its fields (the default passes only the message)
        return type(self), (self.field, self.detail, self.prefix)


#: Declared field types the check knows, and how a message says what they take.
_KINDS = {
    "float": "a number",
    "int": "an integer",
    "bool": "true or false",
    "str": "a string",
    "Range": "a (low, high) pair of numbers",
    "tuple[float, float]": "a (low, high) pair of numbers",
}


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _fits(kind: str, value: Any) -> bool:
    if kind == "float":
        return _number(value)
    if kind == "int":
        return _number(value) and float(value).is_integer()
    if kind == "bool":
        return isinstance(value, (bool, np.bool_))
    if kind == "str":
        return isinstance(value, str)
    return isinstance(value, (tuple, list)) and len(value) == 2 and all(_number(v) for v in value)


def check_types(obj: Any, prefix: str = "", env: str = "") -> None:
    """Raise :class:`ConfigFieldError` for the first field of the dataclass ``obj`` (or of a dataclass
    section in it, named ``section.field``) whose value does not fit its declared type: a string where a
    number belongs fails here, naming the field, instead of deep inside the env. Other types pass."""
    for f in dataclasses.fields(obj):
        name, value = prefix + f.name, getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            check_types(value, f"{name}.", env)
            continue
        declared = str(f.type)
        optional = declared.endswith(" | None")
        kind = declared.removesuffix(" | None")
        if kind in _KINDS and not (optional and value is None) and not _fits(kind, value):
            allowed = _KINDS[kind] + (" or None" if optional else "")
            raise ConfigFieldError(name, f"{name}: expected {allowed}, got {value!r}", env)


def closest(name: str, choices: Sequence[str]) -> str | None:
    """The choice nearest to ``name`` (``difflib``; case ignored: ``PD`` is ``pd``), or None when none is near."""
    by_lower = {c.lower(): c for c in choices}
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=1)
    return by_lower[found[0]] if found else None


def unknown_keywords(unknown: Sequence[str], valid: Sequence[str], aliases: Sequence[str] = (),
                     prefix: str = "", near: Sequence[str] = ()) -> ConfigFieldError:  # fmt: skip
    """The error for keyword arguments an env does not take (every env raises this type): it names them (the
    first is the ``field``), the nearest one it takes (or ``near``: the keys the first is, a section level
    deeper), and those it takes (its fields, then ``aliases``)."""
    near = " or ".join(near) or closest(unknown[0], [*valid, *aliases])
    detail = f"{', '.join(unknown)}: unknown keyword argument{'s' if len(unknown) > 1 else ''}"
    detail += f" (did you mean {near}?)" if near else ""
    detail += f"; valid: {', '.join(valid)}" + (f"; aliases: {', '.join(aliases)}" if aliases else "")
    return ConfigFieldError(unknown[0], detail, prefix)
