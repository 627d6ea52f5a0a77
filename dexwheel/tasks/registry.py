"""The task registry: one record per task, from which everything that lists tasks derives.

A task is a config and a record (:class:`TaskRecord`), as mjlab's ``register_mjlab_task``: its name (its folder, Hydra
option ``task=<name>``, Hydra key ``task.<name>.*``), the robots it runs on with their Gymnasium ids, its config
factory, its task class and Gymnasium faces, its metrics, its default training budget, its evaluation protocol, its
Isaac Lab counterpart, its golden cases and whether the policy node plays its exports. From the records come the
Gymnasium registration (:func:`dexwheel.envs.register_envs`), the Hydra task options and their env defaults
(:mod:`dexwheel.rl.config_defaults`), the evaluation metrics and protocols (:mod:`dexwheel.rl`), the Isaac Lab ids and
runners (:mod:`dexwheel.isaaclab.tasks`), the golden cases (:mod:`dexwheel.golden`), the bridge's policy node and the
generated reference (``scripts/gen_reference.py``).

Everything a record names is a ``"package.module:attribute"`` path, so this module imports nothing heavy (the Isaac
Lab venv reads it too). A record is checked when it is registered: every required piece given, every module it names
found; a missing one fails then, naming the task and the piece, never after a training run.

A user registers a task of their own from their package (no edit of dexwheel)::

    from dexwheel.tasks.registry import TaskRecord, TrainBudget, register_task, task_record

    base = task_record("in_hand_rotate")
    register_task(dataclasses.replace(base, name="in_hand_rotate_cw", config="mypkg.tasks:rotate_cw_cfg",
                                      envs={"g20_left": "MyRotateCW-v0"}, isaaclab={}, golden=()))

and names the module in ``DEXWHEEL_TASKS`` (``DEXWHEEL_TASKS=mypkg.tasks python scripts/train.py
task=in_hand_rotate_cw``) or as an entry point of the group ``dexwheel.tasks`` in its own ``pyproject.toml``: importing
``dexwheel`` imports them (:func:`load_user_tasks`).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

#: the robot families (``robot.family``)
FAMILIES = ("hand", "wheel_leg")
#: the evaluation protocols a task may name (:mod:`dexwheel.protocols`)
PROTOCOLS = ("steps", "rotation", "reorient")
#: the environment variable listing the user's task modules (comma separated)
USER_TASKS_VAR = "DEXWHEEL_TASKS"
#: the entry-point group of installed packages' task modules
ENTRY_POINT_GROUP = "dexwheel.tasks"


class TaskRegistryError(ValueError):
    """A task record that cannot be registered, or a name no record has: one line naming the task and the piece."""


@dataclass(frozen=True)
class TrainBudget:
    """A task's default training budget (Hydra ``task.train.*``; its wall time and results: docs/results.md)."""

    total_timesteps: int
    num_envs: int
    steps_per_env: int  # the rollout per env per update (rsl_rl's num_steps_per_env, SB3's n_steps)
    eval_every_steps: int
    eval_episodes: int
    checkpoint_every_steps: int


@dataclass(frozen=True)
class GoldenSpec:
    """A pinned trajectory of a task (:mod:`dexwheel.golden`): Gymnasium id ``env_id`` made with ``kwargs``, reset
    with ``seed``, driven by the action ``program`` for ``steps`` steps; ``num_envs`` 0 a single env, ``N`` the
    native vector env."""

    name: str
    env_id: str
    program: str
    steps: int
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    num_envs: int = 0
    seed: int = 0


@dataclass(frozen=True)
class TaskRecord:
    """One task: what every table that lists tasks derives from (see the module docstring). The fields without a
    default are required; each ``"module:attribute"`` path is checked when the record is registered."""

    #: the task's one name: its folder, its Hydra option ``task=<name>`` and key ``task.<name>.*``
    name: str
    #: the robots it runs on (``robot.family``): ``hand`` or ``wheel_leg``
    family: str
    #: what the policy is asked to do, one line (the reference lists it)
    summary: str
    #: robot name -> the Gymnasium id that builds the task for it (robots of one kind may share one: ``G20Hand-v0``)
    envs: Mapping[str, str]
    #: ``f(robot) -> config``: the task's config for a robot (what the robot's id builds without keywords)
    config: str
    #: the task class (a :class:`~dexwheel.tasks.runtime.TaskRuntime`), built as ``cls(cfg, num_envs, ...)``
    task_class: str
    #: ``f(cfg, **changes) -> config``: the one config builder's call for the task's config class
    make_config: str
    #: the single-env Gymnasium face (:class:`~dexwheel.envs.base.TaskEnv` or a family's subclass)
    env: str
    #: the native vector-env face (:class:`~dexwheel.envs.vector_env.TaskVectorEnv` or a family's subclass)
    vector_env: str
    #: the evaluation's metrics class (:mod:`dexwheel.rl.metrics`): what an episode reports
    metrics: str
    #: the default training budget (Hydra ``task.train.*``)
    train: TrainBudget
    #: Hydra group options the task selects for itself (the object tasks: ``drive: pd``)
    groups: Mapping[str, str] = field(default_factory=dict)
    #: the evaluation protocol that scores its policies (``benchmark=<protocol>``: :mod:`dexwheel.protocols`)
    protocol: str | None = None
    #: robot name -> its Isaac Lab id (none: the task runs on MuJoCo only)
    isaaclab: Mapping[str, str] = field(default_factory=dict)
    #: the Isaac Lab env config class its ids subclass (fields ``task``, ``robot``, ``task_overrides``)
    isaaclab_cfg: str | None = None
    #: its pinned trajectories (:mod:`dexwheel.golden`; ``tests/golden/<name>.npz``)
    golden: tuple[GoldenSpec, ...] = ()
    #: the policy node plays its exports (:mod:`dexwheel.bridge.policy_node`: policies on proprioception only)
    bridge: bool = False
    #: the single env's time limit (Gymnasium's ``TimeLimit``), where the config has none
    max_episode_steps: int | None = None

    @property
    def robots(self) -> tuple[str, ...]:
        return tuple(self.envs)

    def default_config(self, robot: str) -> Any:
        """The task's config for ``robot`` (its ``config`` factory)."""
        return resolve(self.config)(robot)


_TASKS: dict[str, TaskRecord] = {}
_PATHS = ("config", "task_class", "make_config", "env", "vector_env", "metrics")


def _module_exists(path: str) -> bool:
    module = path.partition(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing
        return False


def _check(record: TaskRecord) -> None:
    """Refuse a record with a piece missing or naming a module that does not exist (one line: task and piece)."""
    where = f"task {record.name!r}"
    if not record.name or not record.name.isidentifier():
        raise TaskRegistryError(f"task name {record.name!r}: a task's name is an identifier (its Hydra key)")
    if record.family not in FAMILIES:
        raise TaskRegistryError(f"{where}: family {record.family!r}; choose one of {list(FAMILIES)}")
    if not record.envs:
        raise TaskRegistryError(f"{where}: no envs; give envs={{robot: gym id}} for the robots it runs on")
    if not isinstance(record.train, TrainBudget):
        raise TaskRegistryError(f"{where}: train must be a TrainBudget (its default budget)")
    for name in _PATHS:
        path = getattr(record, name)
        if not isinstance(path, str) or ":" not in path:
            raise TaskRegistryError(f"{where}: {name} must be a 'package.module:attribute' path, got {path!r}")
        # a user's module is looked for now; dexwheel's own (imported later, some heavy) by tests/tasks/test_registry.py
        if not path.startswith("dexwheel.") and not _module_exists(path):
            raise TaskRegistryError(f"{where}: {name}={path!r}: no module {path.partition(':')[0]!r}")
    if record.protocol is not None and record.protocol not in PROTOCOLS:
        raise TaskRegistryError(f"{where}: protocol {record.protocol!r}; choose one of {list(PROTOCOLS)} or None")
    if record.isaaclab and not record.isaaclab_cfg:
        raise TaskRegistryError(f"{where}: isaaclab ids given without isaaclab_cfg (the Isaac Lab env config class)")
    unknown = sorted(set(record.isaaclab) - set(record.envs))
    if unknown:
        raise TaskRegistryError(f"{where}: isaaclab ids for robots {unknown} it does not run on ({list(record.envs)})")
    ids = {spec.env_id for spec in record.golden}
    if not ids <= set(record.envs.values()):
        raise TaskRegistryError(f"{where}: golden cases of ids {sorted(ids - set(record.envs.values()))} that are "
                                f"not its envs' ({sorted(set(record.envs.values()))})")  # fmt: skip


def register_task(record: TaskRecord) -> TaskRecord:
    """Add ``record`` (checked: :class:`TaskRegistryError` naming the task and the missing piece). Registering the
    same record again changes nothing; another record under a taken name, or a Gymnasium id another task builds, is
    refused."""
    _check(record)
    old = _TASKS.get(record.name)
    if old is not None:
        if old == record:
            return record
        raise TaskRegistryError(f"task {record.name!r} is registered already (by {old.task_class}); choose a new name")
    for other in _TASKS.values():
        shared = sorted(set(record.envs.values()) & set(other.envs.values()))
        if shared:
            raise TaskRegistryError(f"task {record.name!r}: Gymnasium ids {shared} are already task {other.name}'s")
    _TASKS[record.name] = record
    for derive in _DERIVED:  # what was derived from the tasks already (gym ids, Hydra options) gets this one too
        derive(record)
    return record


#: What derives from each task and was made already (the gym ids at dexwheel's import, the Hydra options at
#: dexwheel.rl's): called for a task registered later, as for the others.
_DERIVED: list[Callable[[TaskRecord], None]] = []


def derive_from_each(make: Callable[[TaskRecord], None]) -> None:
    """Call ``make`` for every registered task now and for every task registered later."""
    if make not in _DERIVED:
        _DERIVED.append(make)
    for record in list(_TASKS.values()):
        make(record)


def register_gym_ids(record: TaskRecord) -> None:
    """Register ``record``'s Gymnasium ids (single and native vector env), each once."""
    from gymnasium.envs.registration import register, registry

    for robot, env_id in record.envs.items():
        if env_id not in registry:
            register(id=env_id, entry_point=record.env, vector_entry_point=record.vector_env,
                     kwargs={"task_name": record.name, "robot": robot},
                     max_episode_steps=record.max_episode_steps)  # fmt: skip


def tasks() -> dict[str, TaskRecord]:
    """Every registered task by name, in registration order (the user's modules loaded first)."""
    load_user_tasks()
    return dict(_TASKS)


def task_record(name: str) -> TaskRecord:
    """The record of task ``name`` (:class:`TaskRegistryError` naming the tasks there are)."""
    load_user_tasks()
    try:
        return _TASKS[name]
    except KeyError:
        raise TaskRegistryError(f"task {name!r}: no such task; tasks: {sorted(_TASKS)}") from None


def record_of_env(env_id: str) -> tuple[TaskRecord, str]:
    """The task and the (first) robot a Gymnasium id builds."""
    for record in tasks().values():
        for robot, eid in record.envs.items():
            if eid == env_id:
                return record, robot
    raise TaskRegistryError(f"{env_id}: no task builds this Gymnasium id")


def env_id(task: str, robot: str) -> str:
    """The Gymnasium id that builds ``task`` for ``robot`` (one line naming the robots it runs on otherwise)."""
    record = task_record(task)
    if robot not in record.envs:
        raise TaskRegistryError(f"task={task} does not run on robot {robot}; it runs on {list(record.envs)}")
    return record.envs[robot]


def resolve(path: str) -> Any:
    """The object a ``"package.module:attribute"`` path names."""
    module, _, attr = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


_loaded: set[str] = set()
_scanned: list[str | None] = [None]  # the DEXWHEEL_TASKS value last loaded (entry points: once per process)


def load_user_tasks() -> None:
    """Import the user's task modules (``DEXWHEEL_TASKS``, comma separated; the entry points of the group
    ``dexwheel.tasks``), each once: they call :func:`register_task`. A module that does not import is named
    (:class:`TaskRegistryError`). The scripts call it once the folder they run in is on the module path
    (:func:`dexwheel.hydra_app.hydra_main`); dexwheel's own import calls it too, and leaves a module it cannot import
    yet for such a later call."""
    value = os.environ.get(USER_TASKS_VAR, "")
    if _scanned[0] == value:
        return
    first = _scanned[0] is None
    _scanned[0] = value
    names = [n.strip() for n in value.split(",") if n.strip()]
    found = [(ep.value, ep) for ep in entry_points(group=ENTRY_POINT_GROUP)] if first else []
    for name in names:
        if name not in _loaded:
            _loaded.add(name)
            try:
                importlib.import_module(name)
            except ImportError as e:
                _loaded.discard(name)
                _scanned[0] = None
                raise TaskRegistryError(f"{USER_TASKS_VAR}={value}: {name}: {e}") from None
    for value, ep in found:
        if value not in _loaded:
            _loaded.add(value)
            ep.load()


def replace(record: TaskRecord, **changes: Any) -> TaskRecord:
    """``record`` with ``changes`` (a variant's record: :func:`dataclasses.replace`)."""
    return dataclasses.replace(record, **changes)
