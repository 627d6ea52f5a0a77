"""The one config builder of every task: keyword arguments (what ``gymnasium.make`` and Hydra pass) applied to a task's
config dataclass.

A keyword is a top-level field (``decimation=4``), a section given as a dict (``commands={...}``: a dataclass section,
replaced field by field), a term table given as a dict of changes by term name (``rewards={"action_rate_l2": -0.02}``:
:func:`~dexwheel.tasks.terms.merge_terms`), or a name of the task's ``renames`` table: a flat alias or an earlier
name, mapped to the dotted path that holds it now (``action_scale_knee`` -> ``actions.knee_scale``,
``rewards.lin_vel_std`` -> ``rewards.track_lin_vel_x_exp.params.std``, ``penetration_weight`` -> the ``penetration``
reward's weight times -1). A section's own keys are looked up there too (``rewards={"lin_vel_std": 0.3}``).
``convert`` turns a keyword's value into what its field takes (``terrain``'s dict into a terrain config);
``finish`` completes a section's merged changes (domain randomisation ranges switch it on). An unknown keyword or
field fails in one line, naming it and the valid ones.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

from dexwheel.fields import ConfigFieldError, unknown_keywords
from dexwheel.tasks.terms import as_change, merge_terms, plain

#: an alias or earlier name -> the dotted path that holds it now, or ``(path, factor)`` for a number
Renames = Mapping[str, "str | tuple[str, float]"]


def _put(changes: dict[str, Any], path: list[str], value: Any) -> None:
    """``value`` at ``path`` of the nested ``changes`` (a term entry given as a number becomes its weight)."""
    node = changes
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {} if child is None else as_change(child)
        node = child
    old = node.get(path[-1])
    both = old is not None and value is not None and (isinstance(old, dict) or isinstance(value, dict))
    node[path[-1]] = _merged(as_change(old), as_change(value)) if both else value  # a term's weight and params


def _merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` over ``old``, nested dicts merged key by key (two changes of one entry both apply)."""
    out = dict(old)
    for k, v in new.items():
        out[k] = _merged(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def _renamed(renames: Renames, key: str, value: Any, env: str) -> tuple[list[str], Any]:
    """The path a renamed key writes and its value (times its factor: a finite number then)."""
    target = renames[key]
    if isinstance(target, str):
        return target.split("."), value
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        raise ConfigFieldError(key, f"{key} must be a finite number, got {value!r}", env)
    return target[0].split("."), float(target[1]) * value


def build_cfg(cfg: Any, kwargs: Mapping[str, Any], *, tables: Mapping[str, type], renames: Renames | None = None,
              convert: Mapping[str, Callable[[Any, Any, str], Any]] | None = None,
              finish: Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]] | None = None,
              env: str = "") -> Any:  # fmt: skip
    """``cfg`` with ``kwargs`` applied (not validated: the task's ``validate`` does that). ``convert[key](cfg, value,
    typed key)`` and ``finish[section](changes)`` as in the module docstring."""
    renames, convert, finish = renames or {}, convert or {}, finish or {}
    sections = {f.name for f in dataclasses.fields(cfg) if dataclasses.is_dataclass(getattr(cfg, f.name))}
    changes: dict[str, Any] = {}
    for typed, value in kwargs.items():
        value, key = plain(value), typed
        if key in renames:
            path, value = _renamed(renames, key, value, env)
            if len(path) > 1:
                _put(changes, path, value)
                continue
            key = path[0]  # another name of a top-level key: on as that key
        converted = key in convert
        if converted:
            value = convert[key](cfg, value, typed)
        if (key not in tables and key not in sections) or (converted and not isinstance(value, dict)):
            changes[key] = value
            continue
        if not isinstance(value, dict):
            what = "terms by name" if key in tables else "fields"
            raise ConfigFieldError(typed, f"{typed}: expected a dict of {what}, got {value!r}", env)
        for sub, sub_value in value.items():
            dotted = f"{key}.{sub}"
            if dotted in renames:  # an earlier key of the section
                path, sub_value = _renamed(renames, dotted, sub_value, env)
                _put(changes, path, sub_value)
            else:
                _put(changes, [key, sub], sub_value)
    top: dict[str, Any] = {}
    for key, value in changes.items():
        if key in tables:
            top[key] = merge_terms(getattr(cfg, key), value, tables[key], key)
        elif key in sections and isinstance(value, dict):  # (a converted value, a config object, is set as it is)
            value = finish[key](value) if key in finish else value
            section = getattr(cfg, key)
            names = [f.name for f in dataclasses.fields(section)]
            unknown = [k for k in value if k not in names]
            if unknown:
                raise ConfigFieldError(key, f"{key}: unknown field(s) {unknown}; valid: {names}", env)
            top[key] = dataclasses.replace(section, **value)
        else:
            top[key] = value
    valid = [f.name for f in dataclasses.fields(cfg)]
    unknown = [k for k in top if k not in valid]
    if unknown:
        # a field of a section typed without it (``contact_excludes``: ``collision.contact_excludes``)
        nested = [
            f"{s}.{unknown[0]}"
            for s in sorted(sections)
            if unknown[0] in {f.name for f in dataclasses.fields(getattr(cfg, s))}
        ]
        raise unknown_keywords(unknown, valid, sorted(k for k in renames if "." not in k), prefix=env, near=nested)
    return dataclasses.replace(cfg, **top)
