"""A MuJoCo task's term table as Isaac Lab terms: each entry maps by its function to an Isaac Lab one.

The Isaac Lab tasks keep, per MuJoCo term function, the Isaac Lab function and how its parameters follow
from the MuJoCo entry's; a table entry whose function has no counterpart is refused by name, so a config
never runs on Isaac Lab without a term it asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dexwheel.tasks.terms import func_path

#: MuJoCo function path -> (Isaac Lab function, MuJoCo params -> Isaac Lab params)
TermMap = Mapping[str, tuple[Callable[..., Any], Callable[[dict], dict]]]


def mapped(table: Mapping[str, Any], mapping: TermMap, section: str, task: str) -> dict[str, tuple[Any, dict, Any]]:
    """``{name: (Isaac Lab function, params, MuJoCo entry)}`` in table order, or refuse the unmapped terms."""
    unknown = {f"{section}.{k}": func_path(t.func) for k, t in table.items() if func_path(t.func) not in mapping}
    if unknown:
        raise ValueError(f"the Isaac Lab {task} task has no counterpart of {unknown}; "
                         "run that config on the MuJoCo env, or add the term to dexwheel/isaaclab/tasks")  # fmt: skip
    out = {}
    for name, t in table.items():
        func, make_params = mapping[func_path(t.func)]
        out[name] = (func, make_params(dict(t.params)), t)
    return out
