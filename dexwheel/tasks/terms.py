"""Named terms: a reward, observation, termination or event is one function plus one config entry.

As in mjlab's ``RewardTermCfg`` and Isaac Lab's managers, a term is a function of the batched task state,
``func(task, **params)``, returning one value per env (``(N,)``; an observation term ``(N,)`` or
``(N, k)``), and its entry in the task config says which function, with which weight (rewards) or scale
(observations) and parameters. A task's default table names its terms in the order they are computed
and summed; a user adds, reweights or removes terms by name, from ``gymnasium.make`` or Hydra, without
editing the package::

    gym.make("Solenopsis-v0", rewards={
        "lateral_vel_l2": {"func": "mypkg.terms:lateral_vel_l2", "weight": -0.5, "params": {"scale": 2.0}},
        "action_rate_l2": -0.02,            # a number reweights a term
        "undesired_contacts": {"weight": 0},  # weight 0 disables one (its info key stays, always 0)
    })

``func`` is a callable or a ``"package.module:function"`` path (what a Hydra config holds). A term
that cannot be imported, fails on its first call or returns the wrong shape is refused when the task is
built, in one line naming the term (:class:`~dexwheel.fields.ConfigFieldError`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dexwheel.fields import ConfigFieldError

TermFunc = Callable[..., np.ndarray]


@dataclass(frozen=True)
class RewardTermCfg:
    """A reward term: ``weight * func(task, **params)`` (times the control period where the task scales by it)."""

    func: str | TermFunc
    weight: float = 1.0
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NoiseCfg:
    """Additive observation noise, Isaac Lab's ``Unoise`` / ``Gnoise``: ``kind`` "uniform" adds a number uniform
    in ``[-scale, scale]``, "gaussian" one of standard deviation ``scale``; ``scale`` is one number for every
    column or one per column of the term. A bare number in a term's ``noise`` is uniform noise of that scale."""

    kind: str = "uniform"
    scale: float | tuple[float, ...] = 0.0


NOISE_KINDS = ("uniform", "gaussian")


@dataclass(frozen=True)
class ObservationTermCfg:
    """An observation term: ``func(task, **params)`` in a group's columns, processed as Isaac Lab's observation
    manager does, in this order: ``noise`` added (:class:`NoiseCfg`, or a number: uniform), ``clip`` to
    ``(low, high)``, times ``scale``; then the last ``history_length`` frames side by side, oldest first
    (1: the current one only).

    ``group`` "policy" terms are what the actor reads (and the critic); "critic" terms follow them, only in
    tasks built with privileged observations (an asymmetric actor-critic).
    """

    func: str | TermFunc
    params: Mapping[str, Any] = field(default_factory=dict)
    scale: float | None = None
    group: str = "policy"
    noise: NoiseCfg | float | None = None
    clip: tuple[float, float] | None = None
    history_length: int = 1


@dataclass(frozen=True)
class TerminationTermCfg:
    """A termination term: ``func(task, **params)`` is True where an env's episode ends (terminated)."""

    func: str | TermFunc
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EventTermCfg:
    """An event term: ``func(task, env, rng, **params)`` changes env ``env`` with its generator ``rng``.

    ``mode`` "reset" runs at each reset of the env, in table order (domain randomisation before the start
    pose); "interval" runs every ``interval_range_s`` seconds of an episode (a fresh draw from the env's
    generator each time, as Isaac Lab's interval events; pushes). Events run per env because each env draws
    from its own generator: the draws, not their arithmetic, are what must match between single and vector envs.

    ``interval_range_s`` is ``(low, high)`` seconds, or the dotted path of the task config's field that holds
    them (``"domain_rand.push_interval_s"``: the number stays in one place, under the key users know; a
    None there turns the event off). ``domain_randomization`` marks an event as domain randomisation
    (mjlab's flag of that name): it runs only while the task's ``domain_rand.enabled`` is on.
    """

    func: str | TermFunc
    mode: str = "reset"
    params: Mapping[str, Any] = field(default_factory=dict)
    interval_range_s: tuple[float, float] | str | None = None
    domain_randomization: bool = False


TermCfg = RewardTermCfg | ObservationTermCfg | TerminationTermCfg | EventTermCfg
OBSERVATION_GROUPS = ("policy", "critic")
EVENT_MODES = ("reset", "interval")


def func_path(func: str | TermFunc) -> str | TermFunc:
    """A function as its ``"module:qualname"`` path when importing that path gives it back, else itself
    (a lambda, or a function defined in ``__main__``, stays a callable: it cannot be saved as a path)."""
    if isinstance(func, str):
        return func
    path = f"{getattr(func, '__module__', '')}:{getattr(func, '__qualname__', '')}"
    try:
        return path if resolve(path, "") is func else func
    except ConfigFieldError:
        return func


def resolve(func: str | TermFunc, where: str) -> TermFunc:
    """The callable a term entry names; one clear error naming ``where`` (``rewards.my_term``) otherwise."""
    if callable(func):
        return func
    if not isinstance(func, str):
        raise ConfigFieldError(where, f"{where}.func: expected a callable or 'package.module:function', got {func!r}")
    module_name, sep, qualname = func.partition(":")
    if not sep or not module_name or not qualname:
        raise ConfigFieldError(where, f"{where}.func: {func!r} is not a 'package.module:function' path")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigFieldError(where, f"{where}.func: cannot import module {module_name!r} ({e})") from e
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise ConfigFieldError(where, f"{where}.func: module {module_name!r} has no {qualname!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigFieldError(where, f"{where}.func: {func!r} is not callable")
    return obj


def merge_terms(
    table: Mapping[str, TermCfg], changes: Mapping[str, Any], kind: type, section: str
) -> dict[str, TermCfg]:
    """``table`` with ``changes`` applied, by term name (order kept; new terms last).

    A change is a term entry (``kind``), a dict of its fields (``params`` merges into the existing
    parameters; a new term needs ``func``), ``None`` to remove the term, or, for rewards, a number: the
    new weight.
    """
    out = dict(table)
    names = [f.name for f in dataclasses.fields(kind)]
    for name, change in changes.items():
        where = f"{section}.{name}"
        if change is None:
            if name not in out:
                raise ConfigFieldError(where, f"{where}: no such term to remove; terms: {list(out)}")
            del out[name]
        elif isinstance(change, kind):
            out[name] = change
        elif kind is RewardTermCfg and isinstance(change, numbers.Real) and not isinstance(change, bool):
            if name not in out:
                raise ConfigFieldError(where, f"{where}: no such term to reweight; terms: {list(out)} "
                                              "(a new term needs a dict with 'func')")  # fmt: skip
            out[name] = dataclasses.replace(out[name], weight=float(change))
        elif isinstance(change, Mapping):
            unknown = [k for k in change if k not in names]
            if unknown:
                raise ConfigFieldError(where, f"{where}: unknown field(s) {unknown}; a term takes {names}")
            fields = dict(change)
            if name in out:
                base = out[name]
                if "params" in fields:
                    fields["params"] = {**base.params, **dict(fields["params"] or {})}
                out[name] = dataclasses.replace(base, **fields)
            elif "func" not in fields:
                raise ConfigFieldError(where, f"{where}: a new term needs 'func' ('package.module:function'); "
                                              f"existing terms: {list(out)}")  # fmt: skip
            else:
                out[name] = kind(**fields)
        else:
            raise ConfigFieldError(where, f"{where}: expected a dict of {names}" +
                                   (", a number (the weight)" if kind is RewardTermCfg else "") + f" or None, got {change!r}")  # fmt: skip
    return out


def plain(value: Any) -> Any:
    """Lists (and Hydra ListConfigs) -> tuples, mappings -> dicts, recursively: a change as a task config takes it."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(plain(v) for v in value)
    return value


def as_change(value: Any) -> dict[str, Any]:
    """A term change as a dict of fields (an entry's fields; a bare number is a reward weight)."""
    if isinstance(value, dict):
        return dict(value)
    if dataclasses.is_dataclass(value):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return {"weight": value}


def validate_terms(table: Mapping[str, TermCfg], section: str) -> None:
    """Check each entry's fields (not the function: :func:`resolve` does that when the task is built)."""
    for name, term in table.items():
        where = f"{section}.{name}"
        if not isinstance(term.params, Mapping):
            raise ConfigFieldError(where, f"{where}.params: expected a dict of keyword arguments, got {term.params!r}")
        if isinstance(term, RewardTermCfg) and not (isinstance(term.weight, numbers.Real) and np.isfinite(term.weight)):
            raise ConfigFieldError(where, f"{where}.weight: expected a finite number, got {term.weight!r}")
        if isinstance(term, ObservationTermCfg):
            if term.group not in OBSERVATION_GROUPS:
                raise ConfigFieldError(where, f"{where}.group: {term.group!r}; use one of {list(OBSERVATION_GROUPS)}")
            if term.scale is not None and not (isinstance(term.scale, numbers.Real) and np.isfinite(term.scale)):
                raise ConfigFieldError(where, f"{where}.scale: expected a finite number or None, got {term.scale!r}")
            noise_cfg(term.noise, where)
            clip_range(term.clip, where)
            h = term.history_length
            if not (isinstance(h, numbers.Integral) and not isinstance(h, bool) and h >= 1):
                raise ConfigFieldError(where, f"{where}.history_length: expected an integer >= 1 (1: the current "
                                              f"frame only), got {h!r}")  # fmt: skip
        if isinstance(term, EventTermCfg):
            if term.mode not in EVENT_MODES:
                raise ConfigFieldError(where, f"{where}.mode: {term.mode!r}; use one of {list(EVENT_MODES)}")
            if not isinstance(term.domain_randomization, bool):
                raise ConfigFieldError(where, f"{where}.domain_randomization: expected true or false, "
                                              f"got {term.domain_randomization!r}")  # fmt: skip
            r = term.interval_range_s
            if term.mode == "reset" and r is not None:
                raise ConfigFieldError(where, f"{where}.interval_range_s: only an interval event has one, "
                                              f"got {r!r} on a reset event")  # fmt: skip
            if term.mode == "interval" and not (isinstance(r, str) or _is_interval(r)):
                raise ConfigFieldError(where, f"{where}.interval_range_s: an interval event needs (low, high) seconds "
                                              f"with 0 < low <= high, or the path of a config field holding them "
                                              f"('domain_rand.push_interval_s'), got {r!r}")  # fmt: skip


@dataclass(frozen=True)
class Check:
    """What a term's parameter allows, written in its annotation (``std: Annotated[float, Check(gt=0)]``): a task's
    config checks every entry's parameters against its function's signature (:func:`check_params`), naming the
    parameter, so a built-in term is its function plus its table entry. ``gt``/``ge``/``le`` bound a number (or
    each number of a sequence); ``among`` lists what a sequence's entries may be."""

    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    among: tuple[str, ...] | None = None
    unit: str = ""

    def __call__(self, value: Any, where: str) -> None:
        if self.among is not None:
            entries = [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else [value]
            bad = [v for v in entries if v not in self.among]
            if bad:
                raise ConfigFieldError(where, f"{where}: {bad} not allowed; choose from {list(self.among)}")
            return
        numbers_ = list(value) if isinstance(value, (tuple, list)) else [value]
        bounds = " and ".join(
            f"{op} {b:g}" for op, b in ((">", self.gt), (">=", self.ge), ("<=", self.le)) if b is not None
        )
        ok = numbers_ and all(_real(v) for v in numbers_)
        ok = ok and all((self.gt is None or v > self.gt) and (self.ge is None or v >= self.ge)
                        and (self.le is None or v <= self.le) for v in numbers_)  # fmt: skip
        if not ok:
            what = "finite numbers" if isinstance(value, (tuple, list)) else "a finite number"
            unit = f" ({self.unit})" if self.unit else ""
            raise ConfigFieldError(
                where, f"{where}: must be {what}{' ' + bounds if bounds else ''}{unit}, got {value!r}"
            )


#: The leading arguments of a term function before its parameters: ``(task)``, an event's ``(task, env, rng)``.
_LEADING = {"event": (None, 0, None), "term": (None,)}


def check_params(table: Mapping[str, TermCfg], section: str) -> None:
    """Every entry's parameters against its function's signature: a parameter it does not take, one it needs and
    lacks, and each value against the :class:`Check` in its annotation; then the function's own
    ``check_params(params, where)`` for rules across its parameters, where it has one. One error naming the
    entry and the parameter."""
    import typing

    for name, cfg in table.items():
        where = f"{section}.{name}"
        func = resolve(cfg.func, where)
        try:
            sig = inspect.signature(func)
        except ValueError:  # no signature to read (a builtin): its first call tells
            continue
        leading = _LEADING["event" if isinstance(cfg, EventTermCfg) else "term"]
        try:
            sig.bind(*leading, **cfg.params)
        except TypeError as e:
            takes = [p for p in list(sig.parameters)[len(leading) :]]
            hint = getattr(func, "params_elsewhere", "")
            raise ConfigFieldError(where, f"{where}.params: {func_path(cfg.func)!r} takes {takes or 'none'}, got "
                                          f"{dict(cfg.params)} ({e}){'; ' + hint if hint else ''}") from e  # fmt: skip
        try:
            hints = typing.get_type_hints(func.__init__ if inspect.isclass(func) else func, include_extras=True)
        except Exception:  # annotations a user's module cannot resolve: nothing declared to check
            hints = {}
        for pname, param in sig.parameters.items():
            value = cfg.params.get(pname, param.default)
            for check in getattr(hints.get(pname), "__metadata__", ()):
                if isinstance(check, Check) and value is not inspect.Parameter.empty:
                    check(value, f"{where}.params.{pname}")
        across = getattr(func, "check_params", None)
        if callable(across):
            across(cfg.params, where)


def _real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and bool(np.isfinite(x))


def noise_cfg(noise: NoiseCfg | float | Mapping | None, where: str) -> NoiseCfg | None:
    """An observation term's ``noise`` as a :class:`NoiseCfg` (None: no noise); a number is uniform noise of that
    scale, a dict the fields of one (what Hydra holds). One error naming ``where`` otherwise."""
    if noise is None:
        return None
    if _real(noise):
        noise = NoiseCfg("uniform", float(noise))
    elif isinstance(noise, Mapping):
        unknown = [k for k in noise if k not in ("kind", "scale")]
        if unknown:
            raise ConfigFieldError(where, f"{where}.noise: unknown field(s) {unknown}; noise takes kind and scale")
        noise = NoiseCfg(**noise)
    if not isinstance(noise, NoiseCfg):
        raise ConfigFieldError(where, f"{where}.noise: expected a number (uniform +-scale), "
                                      f"{{kind: uniform|gaussian, scale: s}} or None, got {noise!r}")  # fmt: skip
    if noise.kind not in NOISE_KINDS:
        raise ConfigFieldError(where, f"{where}.noise.kind: {noise.kind!r}; use one of {list(NOISE_KINDS)}")
    scales = noise.scale if isinstance(noise.scale, (tuple, list)) else (noise.scale,)
    if not scales or not all(_real(x) and x >= 0 for x in scales):
        raise ConfigFieldError(where, f"{where}.noise.scale: expected a finite number >= 0 or one per column, "
                                      f"got {noise.scale!r}")  # fmt: skip
    return noise


def clip_range(clip: Any, where: str) -> tuple[float, float] | None:
    """An observation term's ``clip`` as ``(low, high)`` floats (None: none); one error naming ``where`` otherwise."""
    if clip is None:
        return None
    if not (isinstance(clip, (tuple, list)) and len(clip) == 2 and all(_real(x) for x in clip) and clip[0] < clip[1]):
        raise ConfigFieldError(where, f"{where}.clip: expected (low, high) with low < high, or None, got {clip!r}")
    return float(clip[0]), float(clip[1])


def _is_interval(r: Any) -> bool:
    return (
        isinstance(r, (tuple, list))
        and len(r) == 2
        and all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in r)
        and 0 < r[0] <= r[1] < np.inf
    )


def interval_range(term: EventTermCfg, cfg: Any, where: str) -> tuple[float, float] | None:
    """An interval event's ``(low, high)`` seconds: its own, or the value of the config field its
    ``interval_range_s`` names (None: that field turns the event off). A path naming no field, or a field
    holding no interval, is one error naming ``where`` (``events.push``)."""
    r = term.interval_range_s
    if isinstance(r, str):
        value = cfg
        for part in r.split("."):
            if not (dataclasses.is_dataclass(value) and part in {f.name for f in dataclasses.fields(value)}):
                raise ConfigFieldError(where, f"{where}.interval_range_s: {r!r} names no field of the task config")
            value = getattr(value, part)
        if value is None:
            return None
        if not _is_interval(value):
            raise ConfigFieldError(where, f"{where}.interval_range_s: {r!r} holds {value!r}, not (low, high) seconds "
                                          "with 0 < low <= high")  # fmt: skip
        r = value
    if r is None:
        return None
    return float(r[0]), float(r[1])


def bind_event(term: EventTermCfg, where: str) -> tuple[TermFunc, functools.partial]:
    """An event's function and its call ``func(task, env_id, rng)`` with the entry's params bound.

    An event changes the state, so it is not called to check it (as :func:`bind` calls the other terms);
    its signature must take ``(task, env_id, rng, **params)``, else one error naming ``where``.
    """
    func = resolve(term.func, where)
    try:
        inspect.signature(func).bind(None, 0, None, **term.params)
    except TypeError as e:
        raise ConfigFieldError(where, f"{where}: {func_path(term.func)!r} cannot be called as "
                                      f"func(task, env_id, rng, **{dict(term.params)}): {e}") from e  # fmt: skip
    except ValueError:  # no signature to read (a builtin): its first call will tell
        pass
    return func, functools.partial(func, **term.params)


@dataclass(frozen=True)
class BoundTerm:
    """A term ready to call: ``term.call(task)`` is ``func(task, **params)`` (one C-level partial call), or the
    instance of a stateful term (a class: built once as ``cls(task, **params)``, called as ``instance(task)``,
    told of resets by ``reset(env_ids)``, as Isaac Lab's ``ManagerTermBase`` and mjlab's class terms)."""

    name: str
    call: Callable[[Any], Any]
    reset: Callable[[np.ndarray], None] | None = None


def bind_term(cfg: TermCfg, where: str, task: Any) -> BoundTerm:
    """Resolve one entry into a :class:`BoundTerm`; a class is a stateful term and must have ``reset(env_ids)``."""
    func = resolve(cfg.func, where)
    name = where.rpartition(".")[2]
    if not inspect.isclass(func):
        return BoundTerm(name, functools.partial(func, **cfg.params))
    if not callable(getattr(func, "reset", None)):
        raise ConfigFieldError(where, f"{where}.func: {func_path(cfg.func)!r} is a class, a term that keeps state, and "
                                      "needs a reset(env_ids) method (it forgets an env's state at its reset)")  # fmt: skip
    try:
        instance = func(task, **cfg.params)
    except Exception as e:  # a user's class: any error is its own, named here
        raise ConfigFieldError(where, f"{where}: building {func_path(cfg.func)!r} as cls(task, **{dict(cfg.params)}) "
                                      f"failed: {type(e).__name__}: {e}") from e  # fmt: skip
    return BoundTerm(name, instance, instance.reset)


def bind(
    table: Mapping[str, TermCfg], section: str, task: Any, num_envs: int, kind: str
) -> list[tuple[BoundTerm, np.ndarray]]:
    """Resolve every term and call it once on ``task`` (its state as built): ``[(term, first value)]``.

    ``kind`` "scalar" wants ``(N,)`` values (rewards, terminations), "vector" ``(N,)`` or ``(N, k)``
    (observations). A function that raises, returns another shape or a value that is not finite is refused
    here, naming the term, rather than failing somewhere inside a step.
    """
    bound = []
    for name, cfg in table.items():
        where = f"{section}.{name}"
        term = bind_term(cfg, where, task)
        try:
            value = np.asarray(term.call(task))
        except Exception as e:  # a user's function: any error is its own, named here
            raise ConfigFieldError(where, f"{where}: calling {func_path(cfg.func)!r} with params "
                                          f"{dict(cfg.params)} failed: {type(e).__name__}: {e}") from e  # fmt: skip
        want = f"({num_envs},)" if kind == "scalar" else f"({num_envs},) or ({num_envs}, k)"
        ok = (
            value.ndim >= 1
            and value.shape[0] == num_envs
            and (value.ndim == 1 or (kind == "vector" and value.ndim == 2))
        )
        if not ok or value.dtype.kind not in "biuf":
            raise ConfigFieldError(where, f"{where}: {func_path(cfg.func)!r} returned shape {value.shape} dtype "
                                          f"{value.dtype}; a term returns {want} numbers, one row per env")  # fmt: skip
        if not np.isfinite(value).all():
            raise ConfigFieldError(where, f"{where}: {func_path(cfg.func)!r} returned a value that is not finite "
                                          f"({_first_bad(value)}) on the state as built; a term returns finite numbers")  # fmt: skip
        bound.append((term, value))
    return bound


def _first_bad(value: np.ndarray) -> str:
    """``env i: nan`` (and the column) of a term value's first entry that is not finite."""
    where = np.argwhere(~np.isfinite(value))[0]
    at = f"env {where[0]}" + (f", column {where[1]}" if len(where) > 1 else "")
    return f"{at}: {value[tuple(where)]}"
