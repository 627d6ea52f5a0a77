"""Copying and pickling the envs: rebuild from the constructor's arguments, then restore a captured state.

An env holds MuJoCo objects, numpy views of their memory and records that carry C addresses of its
own ``MjData`` (the hard-write drive), none of which a plain ``deepcopy`` or pickle can copy faithfully:
copied records would keep the original's addresses. So a copy is a fresh env built from the same
arguments (its own models, ``MjData``, views and addresses), into which the original's state is copied
*in place*: whole ``MjData`` (``mj_copyData``: every derived field, contacts and warm start included, so
the copy continues the same trajectory bit for bit), arrays, records (except their C-address fields) and
plain values. An env or task names what it captures as attribute paths (:func:`capture`);
:func:`restore` writes them back into the fresh env's own objects.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import warnings
from collections.abc import Iterable, Iterator, Mapping
from operator import attrgetter
from typing import Any

import mujoco
import numpy as np

from dexwheel.uncopyable import Uncopyable

#: Record fields holding C addresses (``hand_drive``'s ``addr`` and ``model``): never copied between envs,
#: each env's records keep addresses of its own MuJoCo objects.
ADDRESS_FIELDS = frozenset({"addr", "model"})
#: Size fields two MjData must share for one to be copied into the other.
_DATA_SIZES = ("nbuffer", "narena")
_MODEL_SIZES = ("nq", "nv", "nu", "na", "nbody", "njnt", "ngeom", "nsensordata", "nmocap", "nuserdata", "nplugin")


def copy_data(dst: mujoco.MjData, src: mujoco.MjData) -> None:
    """Copy all of ``src`` into ``dst``'s own buffers: ``dst``'s address, array views and the C
    addresses taken of them stay valid. Refuses MjData of differently sized models (no overrun)."""
    sizes = [(n, getattr(dst, n), getattr(src, n)) for n in _DATA_SIZES]
    sizes += [(n, getattr(dst.model, n), getattr(src.model, n)) for n in _MODEL_SIZES]
    differ = [f"{n}: {a} != {b}" for n, a, b in sizes if a != b]
    if differ:
        raise ValueError(f"cannot restore an MjData of a different model ({', '.join(differ)})")
    mujoco.mj_copyData(dst, dst.model, src)


def copy_records(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` field by field (nested records too), except :data:`ADDRESS_FIELDS`."""
    if dst.dtype != src.dtype or dst.shape != src.shape:
        raise ValueError(f"cannot restore records {src.dtype} {src.shape} into {dst.dtype} {dst.shape}")
    for name in dst.dtype.names:
        if name in ADDRESS_FIELDS:
            continue
        if dst.dtype[name].names is not None:
            copy_records(dst[name], src[name])
        else:
            dst[name] = src[name]


def capture(obj: object, names: Iterable[str]) -> dict[str, Any]:
    """The attributes ``names`` (dotted paths) of ``obj``, by reference: the caller copies them."""
    return {name: attrgetter(name)(obj) for name in names}


def restore(obj: object, saved: Mapping[str, Any]) -> None:
    """Write values :func:`capture` took (from a copy of ``obj``) back into ``obj``.

    MjData, arrays and lists of them are written in place (views of them and C addresses taken of them
    stay valid), records without their address fields; anything else is assigned.
    """
    for name, value in saved.items():
        head, _, attr = name.rpartition(".")
        owner = attrgetter(head)(obj) if head else obj
        current = getattr(owner, attr)
        if isinstance(current, list) and current and isinstance(current[0], (mujoco.MjData, np.ndarray)):
            if len(current) != len(value):
                raise ValueError(f"cannot restore {name}: {len(value)} entries for {len(current)}")
            for dst, src in zip(current, value, strict=True):
                _write(dst, src, name)
        elif isinstance(current, (mujoco.MjData, np.ndarray)):
            _write(current, value, name)
        else:
            setattr(owner, attr, value)


def _write(dst: mujoco.MjData | np.ndarray, src: Any, name: str) -> None:
    if isinstance(dst, mujoco.MjData):
        copy_data(dst, src)
    elif dst.dtype.names is not None:
        copy_records(dst, src)
    elif dst.shape != np.shape(src):
        raise ValueError(f"cannot restore {name}: shape {np.shape(src)} into {dst.shape}")
    else:
        dst[...] = src


@contextlib.contextmanager
def quiet_rebuild() -> Iterator[None]:
    """Rebuilding a copy from the arguments of an object already built: the construction's warnings (a
    composer that leaves the policy nothing, a dropped joint) were shown when the original was made, so
    the copy does not repeat them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def rebuilt(cls: type, args: tuple, kwargs: dict[str, Any], state: Any) -> Any:
    """``cls(*args, **kwargs)`` continued from ``state`` (its ``snapshot()``): what a task is copied and
    unpickled with."""
    with quiet_rebuild():
        obj = cls(*args, **kwargs)
    obj.restore(state)
    return obj


def reduce_task(task: Any, *args: Any, **kwargs: Any) -> tuple:
    """``__reduce__`` of a task: rebuilt from its constructor's arguments, then continued from a copy of
    its ``snapshot()`` (never its own MjData or the C addresses taken of them)."""
    return rebuilt, (type(task), args, kwargs, copy.deepcopy(task.snapshot()))


class PartOfTask(Uncopyable):
    """Mixin of the simulation parts a task owns (physics, drives): they hold views of their own ``MjData``
    and C addresses of it, which a copy would share with the original or turn into stale copies, so copying
    or pickling one alone is refused; the env or task that owns it is copied whole (rebuilt, then restored)."""

    def _copy_refusal(self) -> str:
        return (
            f"a {type(self).__name__} cannot be copied or pickled alone: it holds views and C addresses of its "
            "own MjData, which a copy would share; copy or pickle the env (or task) that owns it, which rebuilds it"
        )


def config_kwargs(cfg: Any) -> dict[str, Any]:
    """A (frozen) config dataclass as the keyword arguments that rebuild it (fields, not recursed)."""
    return {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}


class Reconstructible:
    """Mixin of the envs: ``copy.copy``, ``copy.deepcopy`` and pickling give an independent env that
    continues the same trajectory.

    The state is ``(constructor keyword arguments, env attributes, task state)``, deep-copied in one go
    (so objects the env and its task share, such as the random generators, stay shared in the copy);
    rebuilding calls ``__init__`` with those arguments and then :func:`restore` s the rest. A subclass
    provides :meth:`_init_kwargs` and ``task`` with ``snapshot()`` / ``restore(state)``; its renderer
    and everything else ``__init__`` makes are not copied (the renderer is recreated lazily).
    """

    #: Env attributes copied when present (Gymnasium's seeding and spec, the spaces with their random
    #: generators, the envs' own bookkeeping: reset and closed flags, the vector envs' per-env generators).
    _copied_attrs: tuple[str, ...] = (
        "_np_random",
        "_np_random_seed",
        "spec",
        "action_space",
        "observation_space",
        "single_action_space",
        "single_observation_space",
        "_needs_reset",
        "_closed",
        "closed",
        "_generators",
    )
    task: Any

    def _init_kwargs(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this env (before any state is restored)."""
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        attrs = {k: v for k, v in vars(self).items() if k in self._copied_attrs}
        kwargs, attrs, task = copy.deepcopy((self._init_kwargs(), attrs, self.task.snapshot()))
        return {"kwargs": kwargs, "attrs": attrs, "task": task}

    def __setstate__(self, state: dict[str, Any]) -> None:
        with quiet_rebuild():
            type(self).__init__(self, **state["kwargs"])
        vars(self).update(state["attrs"])
        self.task.restore(state["task"])

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__setstate__(self.__getstate__())  # already a deep copy: no second one
        return new

    def __copy__(self) -> Any:
        # a shallow copy would share the simulation: a copy is always an independent env
        return self.__deepcopy__({})
