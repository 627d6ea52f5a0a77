"""A MuJoCo task's term table as Isaac Lab terms: each entry maps by its function to an Isaac Lab one.

The Isaac Lab tasks keep, per MuJoCo term function, the Isaac Lab function and how its parameters follow
from the MuJoCo entry's; a table entry whose function has no counterpart is refused by name, so a config
never runs on Isaac Lab without a term it asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dexwheel.tasks.terms import ObservationTermCfg, clip_range, func_path, noise_cfg

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


def observation_term(func: Callable[..., Any], params: dict, entry: ObservationTermCfg, where: str) -> Any:
    """An Isaac Lab ``ObservationTermCfg`` of ``func`` with the MuJoCo entry's processing (:mod:`dexwheel.tasks.manager`),
    which Isaac Lab's observation manager applies in the same order: ``noise`` (uniform or gaussian, from torch's
    generator: the same distribution, not the same numbers), ``clip``, ``scale``, ``history_length`` (oldest first;
    1 is Isaac Lab's 0, no history)."""
    import torch
    from isaaclab.managers import ObservationTermCfg as ObsTerm
    from isaaclab.utils.noise import GaussianNoiseCfg, UniformNoiseCfg

    kwargs: dict[str, Any] = {}
    if entry.scale is not None:
        kwargs["scale"] = entry.scale
    clip = clip_range(entry.clip, where)
    if clip is not None:
        kwargs["clip"] = clip
    noise = noise_cfg(entry.noise, where)
    if noise is not None:
        scale = noise.scale if not isinstance(noise.scale, (tuple, list)) else torch.tensor(noise.scale)
        kwargs["noise"] = (UniformNoiseCfg(n_min=-scale, n_max=scale) if noise.kind == "uniform"
                           else GaussianNoiseCfg(mean=0.0, std=scale))  # fmt: skip
    if entry.history_length > 1:
        kwargs["history_length"] = int(entry.history_length)
    return ObsTerm(func=func, params=params, **kwargs)


def corrupted(table: Mapping[str, ObservationTermCfg]) -> bool:
    """Whether a group's terms add noise (Isaac Lab adds a term's noise only in a group with ``enable_corruption``)."""
    return any(t.noise is not None and noise_cfg(t.noise, name) is not None for name, t in table.items())


def observation_groups(observations: Mapping[str, ObservationTermCfg], privileged: bool, mapping: TermMap, task: str,
                       policy: Any, critic: Any,
                       params_of: Callable[[Callable[..., Any], dict], dict] | None = None) -> tuple[Any, Any | None]:  # fmt: skip
    """The ``policy`` group and, with ``privileged``, the ``critic`` group (every column, the policy's first: the MuJoCo
    envs' asymmetric observation) of a MuJoCo observation table, filled into the group configs ``policy`` and
    ``critic``; ``params_of(func, params)`` may complete a term's parameters."""
    groups = ("policy", "critic") if privileged else ("policy",)
    table = {k: t for g in groups for k, t in observations.items() if t.group == g}
    for name, (func, params, t) in mapped(table, mapping, "observations", task).items():
        term = observation_term(func, params_of(func, params) if params_of else params, t, f"observations.{name}")
        if t.group == "policy":
            setattr(policy, name, term)
        setattr(critic, name, term)
    policy.enable_corruption = corrupted({k: t for k, t in table.items() if t.group == "policy"})
    critic.enable_corruption = corrupted(table)
    return policy, (critic if privileged else None)
