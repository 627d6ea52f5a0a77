"""The one task runtime: what every task does in a step and at a reset, written once (mjlab's and Isaac Lab's
manager-based env); a task family fills in only what is its own.

One control step of every env, in this order::

    action path (the family's: checked and mapped; a rejected action raises before anything changes)
      -> drive.step (the family's drive) -> state read-out (the family's) -> elapsed += 1, time-out
      -> termination terms -> reward terms, weighed in place and summed left to right (info["reward_<term>"] is the
         term's weighted contribution, the reward their sum) -> the family's metrics -> termination flags
      -> last action -> commands (the family's: resamples, goals, interval events) -> observation terms
      -> containment (a physics blow-up ends the episode as truncated with info["diverged"])

and a reset of env ``i``: its generator kept, the reset events in table order, the family's start (the physics
written), the term runner told. ``info`` has one layout for every task: ``reward_<term>`` in table order, the
family's :attr:`~TaskRuntime.METRICS`, ``diverged``, ``terminated_<term>``; the single env reads one row of it, the
vector env every row. A copy or a pickle is rebuilt from the task's arguments and continues from :meth:`snapshot`.

A family subclasses :class:`TaskRuntime`, builds its scene, drive and state, then calls :meth:`_start_runtime`, and
implements the hooks below (``_apply_action``, ``_advance``, ``_write_metrics``, ``_update_commands``,
``_start_episode``); the term functions read the family's attributes (its :attr:`~TaskRuntime.READS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from dexwheel.sim import snapshot
from dexwheel.sim.divergence import all_finite, contain
from dexwheel.tasks import kernels
from dexwheel.tasks.manager import TermRunner
from dexwheel.tasks.spaces import reset_options

#: what every task's terms may read, whatever its family
COMMON_READS: dict[str, str] = {
    "num_envs": "int, the envs of the batch",
    "dt": "float, the control period (s)",
    "action": "(N, A) the action of this step, as the terms see it (scaled to [-1, 1] where the action is not)",
    "last_action": "(N, A) the action of the step before (a fresh episode: the one that holds its start)",
    "terminated": "(N,) bool, whether a termination term ended the episode in this step",
    "elapsed": "(N,) int, control steps since the env's reset",
}
_KINDS = {float: np.float64, int: np.int64, bool: np.bool_}


class TaskRuntime:
    """The step, reset, ``info``, containment and copies of a batch of ``num_envs`` envs of one task.

    A family sets ``cfg``, ``num_envs``, ``dt``, ``max_episode_steps`` (None: never) and its state before calling
    :meth:`_start_runtime`. ``sim`` is what the divergence check reads (``monitor``, ``qpos``, ``qvel``: a PD drive or
    the physics); None for a drive that integrates nothing (hard-write), whose steps are checked for finite values.
    """

    #: the family's name in messages (``"G20Hand"``)
    NAME: ClassVar[str] = "Task"
    #: ``info`` keys the family measures each step, with their types, between the reward terms and ``diverged``
    METRICS: ClassVar[tuple[tuple[str, type], ...]] = ()
    #: what the family's terms may read beyond :data:`COMMON_READS` (attribute -> shape and meaning)
    READS: ClassVar[Mapping[str, str]] = {}
    #: the family's attributes a copy continues from, as dotted paths (:func:`dexwheel.sim.snapshot.capture`)
    STATE: ClassVar[tuple[str, ...]] = ()
    #: what ``reset(options=...)`` takes (:meth:`checked_options`)
    RESET_OPTIONS: ClassVar[tuple[str, ...]] = ()

    cfg: Any
    num_envs: int
    dt: float
    max_episode_steps: int | None
    sim: Any = None

    # -- construction -------------------------------------------------------------------------------------
    def _start_runtime(self, observations: Mapping[str, Any], rewards: Mapping[str, Any],
                       terminations: Mapping[str, Any], *, reset_events: list[Callable[..., None]],
                       action_dim: int, action_dtype: type = np.float64, reward_scale: float = 1.0,
                       metrics: tuple[tuple[str, type], ...] | None = None, max_steps: int | None = None) -> None:  # fmt: skip
        """Bind the term tables (every term called once on the built state: a bad one fails now, naming it) and lay
        out the step's buffers. ``observations`` are the terms of the groups the task builds, in column order;
        ``reset_events`` the bound reset events in table order (``call(task, env, rng)``); ``reward_scale``
        multiplies every weight (the control period, where a task scales by it); ``metrics`` the family's
        :attr:`METRICS` where they depend on its config; ``max_steps`` (a vector env's ``max_episode_steps``) ends
        episodes sooner than the task's own length."""
        n = self.num_envs
        self.metric_fields = self.METRICS if metrics is None else tuple(metrics)
        self._reset_events = list(reset_events)
        self.elapsed = np.zeros(n, dtype=np.int64)
        limits = [k for k in (self.max_episode_steps, max_steps) if k is not None]
        self._max_steps = min(limits) if limits else np.iinfo(np.int64).max
        self.action = np.zeros((n, action_dim), dtype=action_dtype)
        self.last_action = np.zeros((n, action_dim), dtype=action_dtype)
        self.terminated = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self.reward = np.zeros(n)
        self.rngs: list[np.random.Generator | None] = [None] * n
        self.terms = TermRunner(self, n, observations, rewards, terminations, reward_scale=reward_scale)
        self.obs_layout = layout = self.terms.layout
        self.obs_slices, self.obs_dim, self.policy_obs_dim = layout.slices, layout.dim, layout.policy_dim
        self.observation_space = spaces.Box(-np.inf, np.inf, (layout.dim,), np.float32)
        self.obs = np.zeros((n, layout.dim), dtype=np.float32)
        self.reward_coef = self.terms.reward_coef
        self.term_flags = np.zeros((n, len(terminations)), dtype=bool)
        fields = [*((f"reward_{k}", float) for k in rewards), *self.metric_fields, ("diverged", bool),
                  *((f"terminated_{k}", bool) for k in terminations)]  # fmt: skip
        self.info_keys = tuple(k for k, _ in fields)
        self.info_types = tuple(kind for _, kind in fields)
        #: The last step's ``info`` values per env, one row each (:attr:`info_keys` order).
        self.values = np.zeros((n, len(fields)))
        nr, nm = len(rewards), len(self.metric_fields)
        self._metrics_block = self.values[:, nr : nr + nm]
        #: each metric's column (a view) by key
        self.metrics = {k: self.values[:, nr + j] for j, (k, _) in enumerate(self.metric_fields)}
        self.diverged = np.zeros(n, dtype=bool)
        self._diverged_col = self.values[:, nr + nm]
        self._flags_block = self.values[:, nr + nm + 1 :]
        self._any_diverged = False

    # -- the family's part ---------------------------------------------------------------------------------
    def _apply_action(self, actions: Any) -> Any:
        """Check and map ``actions`` ``(N, A)`` into the action path, ``self.action`` the terms' view of it; raise
        (changing nothing) on an invalid one. Returns what :meth:`_advance` needs."""
        raise NotImplementedError

    def _advance(self, mapped: Any) -> None:
        """The action path into the drive, one control step of physics, the state the terms read."""
        raise NotImplementedError

    def _write_metrics(self, block: np.ndarray) -> None:
        """The step's metrics (:attr:`metric_fields`) into ``block`` ``(N, k)``, after the reward terms."""

    def _update_commands(self) -> None:
        """After the terms: what the family changes before the observation (command resamples, new goals, interval
        events)."""

    def _before_events(self, i: int, options: Mapping[str, Any], fresh: bool) -> None:
        """Env ``i``'s start state before its reset events change it (the nominal start)."""

    def _start_episode(self, i: int, rng: np.random.Generator, options: Mapping[str, Any], fresh: bool) -> None:
        """Env ``i`` starts an episode (after its reset events): its start state written into the physics, its
        command; ``fresh``: a seeded reset (forget what the env carried between episodes)."""
        raise NotImplementedError

    def _reset_metrics(self, idx: np.ndarray | slice, info: dict[str, np.ndarray]) -> None:
        """Metrics of freshly reset envs ``idx`` that are not 0 (their errors from the new command)."""

    def checked_options(self, options: Any) -> dict[str, Any]:
        """``reset`` options (None or a dict of :attr:`RESET_OPTIONS`), checked (a refused one raises naming it
        before anything changes) and converted."""
        return reset_options(self.NAME, options, self.RESET_OPTIONS)

    # -- what the envs show ------------------------------------------------------------------------------
    def sync_data(self, i: int) -> Any:
        """Env ``i``'s MjData at its current state (rendering, probes)."""
        return self.drive.sync_data(i)

    @property
    def render_model(self) -> Any:
        """The model to render any env's state with."""
        return self.models[0]

    def camera(self) -> str | Mapping[str, Any]:
        """The view of the envs' frames: a camera's name, or a free camera's settings (``distance``, ``azimuth``,
        ``elevation``, ``lookat``)."""
        return {}

    # -- step -----------------------------------------------------------------------------------------------
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One control step of every env: ``(obs, reward, terminated, truncated, values)``, the task's own buffers
        (copy them to keep them); no env is reset here. Raises, changing nothing, on an invalid action."""
        mapped = self._apply_action(actions)
        # -- from here on the step commits ------------------------------------------------------------
        self._advance(mapped)
        self.elapsed += 1
        np.greater_equal(self.elapsed, self._max_steps, out=self.truncated)
        flags = self.term_flags
        self.terms.terminations(flags)
        kernels.any_row(flags, self.terminated)
        self.terms.rewards(self.values)
        kernels.weigh_rows(self.values, self.reward_coef, self.reward)  # each term's contribution, their sum
        self._write_metrics(self._metrics_block)
        self._flags_block[:] = flags
        self.last_action[:] = self.action
        self.terms.advance()
        self._update_commands()
        self.compute_obs()
        self._contain()
        return self.obs, self.reward, self.terminated, self.truncated, self.values

    def _contain(self) -> None:
        """Envs whose physics blew up (:mod:`dexwheel.sim.divergence`): truncated with ``info["diverged"]``, their
        reward and reward terms 0, their observation finite. A term's own NaN stops the step naming the term."""
        sim = self.sim
        if sim is None:  # a drive that integrates nothing: a value that is not finite is a term's
            if not (all_finite(self.obs) and all_finite(self.reward)):
                self.terms.check_finite(np.ones(self.num_envs, dtype=bool), self.values, self.obs,
                                        int(self.elapsed.max()))  # fmt: skip
            return
        diverged = sim.monitor.check(self.obs, self.reward)
        if diverged is None and not self._any_diverged:
            return
        self._any_diverged = diverged is not None
        self.diverged[:] = False if diverged is None else diverged
        self._diverged_col[:] = self.diverged
        if diverged is None:
            return
        physics_ok = ~sim.monitor.warned & np.isfinite(sim.qpos).all(axis=1) & np.isfinite(sim.qvel).all(axis=1)
        self.terms.check_finite(diverged & physics_ok, self.values, self.obs, int(self.elapsed.max()))
        self.truncated |= diverged
        contain(diverged, self.reward, self.values[:, : len(self.reward_coef)], self.values, self.obs)

    def compute_obs(self, out: np.ndarray | None = None) -> np.ndarray:
        """The observation terms, processed, into ``out`` (default: the task's ``obs``), every env."""
        return self.terms.compute_obs(self.obs if out is None else out)

    def observation(self, idx: np.ndarray | list[int] | slice = slice(None)) -> np.ndarray:
        """The observation of the envs ``idx`` as they are now (fresh rows; the task's ``obs`` unchanged)."""
        return self.compute_obs(np.empty_like(self.obs))[idx]

    # -- info -----------------------------------------------------------------------------------------------
    def step_info(self) -> dict[str, np.ndarray]:
        """The last step's ``info`` as fresh ``(N,)`` arrays of their types (the vector env's)."""
        return {key: (col if kind is float else col.astype(_KINDS[kind]))
                for key, kind, col in zip(self.info_keys, self.info_types, self.values.T.copy(), strict=True)}  # fmt: skip

    def step_info_of(self, i: int) -> dict[str, Any]:
        """Env ``i``'s last step ``info`` as plain numbers (the single env's)."""
        row = self.values[i].tolist()
        return {key: kind(v) for key, kind, v in zip(self.info_keys, self.info_types, row, strict=True)}

    def reset_info(self, idx: np.ndarray | slice) -> dict[str, np.ndarray]:
        """The ``info`` of freshly reset envs ``idx``: every step key (0 but the family's reset metrics), so a vector
        env's infos stay aligned."""
        k = len(self.elapsed[idx])
        info = {key: np.zeros(k, dtype=_KINDS[kind]) for key, kind in zip(self.info_keys, self.info_types, strict=True)}
        self._reset_metrics(idx, info)
        return info

    # -- reset ----------------------------------------------------------------------------------------------
    def reset_env(self, i: int, rng: np.random.Generator, options: Mapping[str, Any] | None = None,
                  fresh: bool = False) -> None:  # fmt: skip
        """Start a new episode in env ``i`` with generator ``rng`` (kept for the episode's draws): the reset events
        in table order, then the family's start; ``options`` as :meth:`checked_options` returned them."""
        self.rngs[i] = rng
        options = options or {}
        self._before_events(i, options, fresh)
        if self._runs_reset_events(options):
            for call in self._reset_events:
                call(self, i, rng)
        self._start_episode(i, rng, options, fresh)
        self.elapsed[i] = 0
        self.values[i] = 0.0
        self.terms.reset(i, [rng])
        self._after_reset(i, options)

    def _after_reset(self, i: int, options: Mapping[str, Any]) -> None:
        """What an option changes once env ``i`` has started (a start pose placed, a command held)."""

    def _runs_reset_events(self, options: Mapping[str, Any]) -> bool:
        """Whether this reset runs the reset events (a family may skip them for a start the user gave)."""
        return True

    # -- copies (dexwheel.sim.snapshot) -------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """What a copy of this task continues from, by reference (the env deep-copies it): the runtime's buffers,
        the family's :attr:`STATE` and the term runner's."""
        names = ["elapsed", "action", "last_action", "terminated", "truncated", "reward", "obs", "values", "rngs",
                 "diverged", "_any_diverged", *self.STATE]  # fmt: skip
        return {"attrs": snapshot.capture(self, names), "terms": self.terms.state(), "family": self._snapshot_extra()}

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from another task's :meth:`snapshot` (same config), written into this task's own objects."""
        self._restore_extra(state["family"])
        snapshot.restore(self, state["attrs"])
        self.terms.load_state(state["terms"])
        self._after_restore()

    def _snapshot_extra(self) -> Any:
        """What else a copy needs that is no attribute path (a family's models)."""
        return None

    def _restore_extra(self, extra: Any) -> None:
        """Apply :meth:`_snapshot_extra`'s part, before the attributes are restored."""

    def _after_restore(self) -> None:
        """After the attributes are restored (models rebuilt from the restored draws)."""

    def _init_args(self) -> tuple[tuple, dict[str, Any]]:
        """The constructor's arguments that rebuild this task (before its state is restored)."""
        return (self.cfg, self.num_envs), {}

    def __reduce__(self) -> tuple:
        args, kwargs = self._init_args()
        return snapshot.reduce_task(self, *args, **kwargs)

    def close(self) -> None:
        """Release the physics' threads and buffers."""
