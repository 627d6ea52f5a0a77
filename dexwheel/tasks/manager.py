"""The one runtime of a task's term tables, for every task family: bind, lay out, observe, weigh, reset.

A task builds one :class:`TermRunner` from its config's tables (:mod:`dexwheel.tasks.terms`) and calls it in a
fixed order each step: :meth:`TermRunner.terminations`, :meth:`TermRunner.rewards` (the task then weighs and
sums them in its compiled ``finish_step``, with its metrics), :meth:`TermRunner.advance` and
:meth:`TermRunner.compute_obs`; at an env's reset :meth:`TermRunner.reset`. Stateful terms (classes with
``reset(env_ids)``) are told of resets here.

An observation term is processed as Isaac Lab's observation manager does, in this order: noise added, clipped,
scaled, then its last ``history_length`` frames laid side by side, oldest first. A term with none of these runs
exactly as ``value * scale`` (or ``value``), so the default tables' observations are what they always were.

Observation noise is counter-based: a hash of each env's noise key, the control step within its episode, the
term and the column (splitmix64). So a step's noise is fresh every step, the same however often the step computes
its observation, the same for env ``i`` of a vector env as for a single env with the same seed, and drawing it
takes nothing from the env's random generator (the key comes from the generator's state at the reset, read, not
advanced): the trajectories of a task without noise are exactly those of the tables without these fields.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.kernels import box_muller
from dexwheel.tasks.terms import (
    BoundTerm,
    ObservationTermCfg,
    RewardTermCfg,
    TerminationTermCfg,
    bind,
    clip_range,
    noise_cfg,
)

_C1, _C2, _C3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD1B54A32D192ED03), np.uint64(0x8CB92BA72F3D8DD7)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


class TermValueError(ValueError):
    """A term returned a value that is not finite during a step: the message names the term, the env and the
    step (the physics was finite, so it is the term's, not a divergence)."""


@dataclass(frozen=True)
class ObservationLayout:
    """Named column slices of the observation (policy part first, then the optional privileged part)."""

    slices: dict[str, slice]
    policy_dim: int
    dim: int


def counter_uniform(key: np.ndarray, step: np.ndarray, width: int, salt: int) -> np.ndarray:
    """``(N, width)`` numbers in [0, 1) from each env's ``key`` ``(N,)``, its ``step`` ``(N,)`` and the column, for
    the stream ``salt`` (a counter-based hash, splitmix64: the same inputs give the same numbers, nothing drawn)."""
    t = np.asarray(step, dtype=np.int64).astype(np.uint64)[:, None]
    cols = np.arange(1, width + 1, dtype=np.uint64) * _C2
    with np.errstate(over="ignore"):
        z = np.asarray(key, dtype=np.uint64)[:, None] ^ (t * _C1) ^ cols ^ (np.uint64(salt) * _C3)
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53


def state_key(rng: np.random.Generator) -> int:
    """A 64-bit key from ``rng``'s state, read without advancing it (the noise key of an env's new episode)."""
    return int.from_bytes(hashlib.blake2b(repr(rng.bit_generator.state).encode(), digest_size=8).digest(), "little")


class _ObsTerm:
    """One bound observation term and its processing (its columns, noise, clip, scale, history)."""

    def __init__(self, term: BoundTerm, cfg: ObservationTermCfg, value: np.ndarray, start: int, where: str) -> None:
        self.name, self.call, self.scale = term.name, term.call, cfg.scale
        n = value.shape[0]
        self.width = value.shape[1] if value.ndim == 2 else 1
        self.noise = noise_cfg(cfg.noise, where)
        self.clip = clip_range(cfg.clip, where)
        self.history = int(cfg.history_length)
        self.plain = self.noise is None and self.clip is None and self.history == 1
        stop = start + self.width * self.history
        # a plain (N,) term fills one column: obs[:, start], which takes an (N,) value
        self.cols: slice | int = start if (self.plain and value.ndim == 1) else slice(start, stop)
        self.slice = slice(start, stop)
        self.salt = zlib.crc32(self.name.encode())
        if self.noise is not None:
            scale = np.asarray(self.noise.scale, dtype=np.float64)
            if scale.ndim == 1 and scale.shape[0] != self.width:
                raise ConfigFieldError(where, f"{where}.noise.scale: {scale.shape[0]} numbers for a term of {self.width} column(s); "
                                  "give one number, or one per column")  # fmt: skip
            self.noise_scale = scale
        self.frames = np.zeros((n, self.history, self.width)) if self.history > 1 else None

    def process(self, value: np.ndarray, runner: TermRunner) -> np.ndarray:
        v = np.asarray(value, dtype=np.float64).reshape(-1, self.width)
        if self.noise is not None:
            u = counter_uniform(runner.noise_key, runner.obs_step, self.width, self.salt)
            if self.noise.kind == "uniform":
                v = v + self.noise_scale * (2.0 * u - 1.0)
            else:  # Box-Muller from a second stream of the same counter
                u2 = counter_uniform(runner.noise_key, runner.obs_step, self.width, self.salt ^ 0x5BD1E995)
                v = v + self.noise_scale * box_muller(u, u2)
        if self.clip is not None:
            v = np.clip(v, *self.clip)
        if self.scale is not None:
            v = v * self.scale
        if self.frames is None:
            return v
        frames = self.frames
        moved = runner.obs_step > runner.pushed_at  # a new step: the oldest frame leaves
        if moved.any():
            frames[moved, :-1] = frames[moved, 1:]
        frames[:, -1] = v
        fresh = runner.fresh
        if fresh.any():  # an env's first observation of an episode fills its whole history
            frames[fresh] = v[fresh, None, :]
        return frames.reshape(frames.shape[0], -1)


class TermRunner:
    """A task's observation, reward and termination terms, bound to ``task`` (every term called once on its state
    as built: a bad path, shape, parameter or value fails now, naming the term).

    ``observations`` are the terms in column order (the task chooses the groups); ``reward_scale`` multiplies
    every weight (the control period, for tasks that scale rewards by it). A reward of weight 0 is never computed
    (its info column stays 0).
    """

    def __init__(self, task: Any, num_envs: int, observations: Mapping[str, ObservationTermCfg],
                 rewards: Mapping[str, RewardTermCfg], terminations: Mapping[str, TerminationTermCfg],
                 reward_scale: float = 1.0) -> None:  # fmt: skip
        n = self.num_envs = int(num_envs)
        #: Each env's noise key (from its generator's state at its reset), control step within its episode, the
        #: step its history frames were last pushed at, and whether its next observation is its episode's first.
        self.noise_key = np.zeros(n, dtype=np.uint64)
        self.obs_step = np.zeros(n, dtype=np.int64)
        self.pushed_at = np.full(n, -1, dtype=np.int64)
        self.fresh = np.ones(n, dtype=bool)
        stateful: list[BoundTerm] = []
        self._obs: list[_ObsTerm] = []
        start, groups = 0, {}
        for term, value in bind(observations, "observations", task, n, "vector"):
            cfg = observations[term.name]
            obs_term = _ObsTerm(term, cfg, value, start, f"observations.{term.name}")
            self._obs.append(obs_term)
            groups[term.name], start = cfg.group, obs_term.slice.stop
            stateful.append(term)
        slices = {t.name: t.slice for t in self._obs}
        policy = [t.name for t in self._obs if groups[t.name] == "policy"]
        self.layout = ObservationLayout(slices, slices[policy[-1]].stop if policy else 0, start)
        self._noisy = any(t.noise is not None for t in self._obs)
        self._history = any(t.frames is not None for t in self._obs)
        self.termination_names = tuple(terminations)
        bound_terminations = [t for t, _ in bind(terminations, "terminations", task, n, "scalar")]
        self._terminations = [t.call for t in bound_terminations]
        self.reward_names = tuple(rewards)
        nonzero = {k: t for k, t in rewards.items() if t.weight != 0.0}  # weight 0: never computed, 0 in info
        bound_rewards = {t.name: t for t, _ in bind(nonzero, "rewards", task, n, "scalar")}
        self.reward_coef = np.array([float(t.weight) * reward_scale for t in rewards.values()])
        self._rewards = [(k, bound_rewards[name].call) for k, name in enumerate(rewards) if name in bound_rewards]
        stateful += [*bound_terminations, *bound_rewards.values()]
        #: The stateful terms' instances (classes with ``reset(env_ids)``), told of every reset.
        self._stateful = [t.call for t in stateful if t.reset is not None]
        self.task = task

    # -- per step ------------------------------------------------------------------------------------
    def terminations(self, flags: np.ndarray) -> None:
        """Each termination term's flags into its column of ``flags`` ``(N, T)``."""
        task = self.task
        for j, term in enumerate(self._terminations):
            flags[:, j] = term(task)

    def rewards(self, values: np.ndarray) -> None:
        """Each computed reward term's value (unweighted) into its column of ``values`` (table order)."""
        task = self.task
        for k, term in self._rewards:
            values[:, k] = term(task)

    def advance(self) -> None:
        """A control step passed: the next observation is a new frame (fresh noise, its history moves on)."""
        self.obs_step += 1

    def compute_obs(self, out: np.ndarray) -> np.ndarray:
        """Every observation term, processed, into its columns of ``out`` ``(N, dim)``, every env."""
        task = self.task
        for term in self._obs:
            value = term.call(task)
            if term.plain:
                out[:, term.cols] = value if term.scale is None else value * term.scale
            else:
                out[:, term.cols] = term.process(value, self)
        if self._history:
            self.pushed_at[:] = self.obs_step
            self.fresh[:] = False
        return out

    # -- resets --------------------------------------------------------------------------------------
    def reset(self, env_ids: int | Iterable[int], rngs: Iterable[np.random.Generator | None] = ()) -> None:
        """Envs ``env_ids`` start an episode: stateful terms forget them, their step count restarts, their next
        observation fills their history, and (with noisy terms) their noise keys come from their generators
        ``rngs`` (one per env, read, not advanced)."""
        ids = np.atleast_1d(np.asarray(env_ids, dtype=np.intp))
        self.obs_step[ids] = 0
        self.pushed_at[ids] = -1
        self.fresh[ids] = True
        if self._noisy:
            for i, rng in zip(ids.tolist(), rngs, strict=True):
                self.noise_key[i] = state_key(rng) if rng is not None else 0
        for term in self._stateful:
            term.reset(ids)

    # -- copies (dexwheel.sim.snapshot) --------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """What a copy of the task continues from, by reference: the per-env counters and keys, the history
        frames, and each stateful term's numpy-array attributes (where such a term keeps its state)."""
        stateful = [vars(t) for t in self._stateful]
        return {"noise_key": self.noise_key, "obs_step": self.obs_step, "pushed_at": self.pushed_at,
                "fresh": self.fresh, "frames": [t.frames for t in self._obs if t.frames is not None],
                "stateful": [{k: v for k, v in d.items() if isinstance(v, np.ndarray)} for d in stateful]}  # fmt: skip

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Continue from another runner's :meth:`state` (same tables), written into this runner's own arrays."""
        for name in ("noise_key", "obs_step", "pushed_at", "fresh"):
            getattr(self, name)[...] = state[name]
        for dst, src in zip([t.frames for t in self._obs if t.frames is not None], state["frames"], strict=True):
            dst[...] = src
        mine = self.state()["stateful"]
        for dst, src in zip(mine, state["stateful"], strict=True):
            for k, v in src.items():
                dst[k][...] = v

    # -- a step's values that are not finite ------------------------------------------------------------
    def check_finite(self, envs: np.ndarray, values: np.ndarray, obs: np.ndarray, step: int) -> None:
        """Raise :class:`TermValueError` naming the first reward or observation term whose value is not finite in
        one of ``envs`` (a mask; envs whose physics is finite), the env and ``step``; nothing when all are."""
        for k, name in enumerate(self.reward_names):
            bad = envs & ~np.isfinite(values[:, k])
            if bad.any():
                self._raise(f"rewards.{name}", bad, values[:, k], step)
        for term in self._obs:
            bad = envs & ~np.isfinite(obs[:, term.slice]).all(axis=1)
            if bad.any():
                self._raise(f"observations.{term.name}", bad, obs[:, term.slice], step)

    def _raise(self, where: str, bad: np.ndarray, value: np.ndarray, step: int) -> None:
        i = int(np.flatnonzero(bad)[0])
        shown = value[i] if value.ndim == 1 else value[i][~np.isfinite(value[i])][0]
        env = f"env {i}, " if self.num_envs > 1 else ""
        raise TermValueError(f"{where} returned {shown} at step {step} ({env}the physics state finite): a term must "
                             "return finite numbers; fix the term or its parameters")  # fmt: skip
