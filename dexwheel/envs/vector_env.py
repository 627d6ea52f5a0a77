"""What the native vector envs share: seeding, reset masks, SAME_STEP autoreset, the info layout.

Both vector envs (:mod:`dexwheel.envs.g20_vector`, :mod:`dexwheel.envs.wheel_leg_vector`) step one
batched task and follow gymnasium's ``SyncVectorEnv`` conventions, written here once:

* ``reset(seed=s)`` seeds env ``i`` with ``s + i`` (a list gives one seed per env), so the vector env
  reproduces single envs made with those seeds; ``options["reset_mask"]`` resets only the masked envs.
  Reset infos hold every step key (reward terms 0), each with its env mask ``_key``.
* Autoreset is ``SAME_STEP``: an env whose episode ended is reset inside ``step``; the returned
  observation is the new episode's first, the last one is in ``infos["final_obs"]``, the last step's
  info in ``infos["final_info"]`` (both masked by ``_final_obs`` / ``_final_info``), and the top-level
  info entries of that env are its reset info.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dexwheel.envs.gym_api import closed_error, not_ready
from dexwheel.sim.snapshot import Reconstructible
from dexwheel.tasks.spaces import reset_options

Info = dict[str, np.ndarray]


class NativeVectorEnv(Reconstructible, VectorEnv):
    """Base of the native vector envs. A subclass sets :attr:`name` and calls :meth:`_setup_spaces`, and
    implements the task hooks :meth:`_reset_env`, :meth:`_step_envs`, :meth:`_reset_info` and
    :meth:`_observation` (and :meth:`_checked_options` when ``reset`` takes options of its own)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["rgb_array"]}
    #: ``reset`` options besides ``reset_mask``.
    reset_option_names: tuple[str, ...] = ()
    name = "NativeVectorEnv"

    def _setup_spaces(self, num_envs: int, observation_space: Any, action_space: Any) -> None:
        self.num_envs = int(num_envs)
        self.single_observation_space = observation_space
        self.single_action_space = action_space
        self.observation_space = batch_space(observation_space, self.num_envs)
        self.action_space = batch_space(action_space, self.num_envs)
        self._generators: list[np.random.Generator | None] = [None] * self.num_envs
        self._needs_reset = True

    # -- the task's part ------------------------------------------------------------------------------
    def _reset_env(self, i: int, rng: np.random.Generator, options: dict[str, Any], fresh: bool) -> None:
        """Start env ``i``'s next episode with ``rng``; ``fresh``: a seeded reset, which also forgets what the
        env carried between episodes (a seed repeats its trajectory)."""
        raise NotImplementedError

    def _step_envs(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Info]:
        """One step of every env: fresh ``(obs, reward, terminated, truncated, info)`` arrays; no reset."""
        raise NotImplementedError

    def _reset_info(self, idx: np.ndarray) -> Info:
        """The info of freshly reset envs ``idx``: every step key."""
        raise NotImplementedError

    def _observation(self, idx: np.ndarray) -> np.ndarray:
        """Fresh observations of envs ``idx``."""
        raise NotImplementedError

    def _checked_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """``reset`` options checked (raising before anything changes) and converted."""
        return options

    # -- gymnasium VectorEnv API ------------------------------------------------------------------------
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if self.closed:
            raise closed_error(self.name)
        options = reset_options(self.name, options, ("reset_mask", *self.reset_option_names))
        mask = options.pop("reset_mask", None)
        options = self._checked_options(options)
        n = self.num_envs
        # everything is checked before any env changes: a refused reset leaves them all as they were
        seeds = self._checked_seeds(seed)
        todo = np.arange(n) if mask is None else np.flatnonzero(self._checked_mask(mask))
        if isinstance(seed, (int, np.integer)):
            self._np_random, self._np_random_seed = seeding.np_random(int(seed))
        for i in todo.tolist():
            self._reset_env(i, self._generator(i, seeds[i]), options, fresh=seeds[i] is not None)
        self._needs_reset = False
        every = np.arange(n)
        return self._observation(every), _with_masks(self._reset_info(every), np.isin(every, todo))

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._needs_reset:
            raise not_ready(self.name, self.closed)
        obs, reward, terminated, truncated, info = self._step_envs(actions)
        infos = _with_masks(info, self._every_env)
        done = terminated | truncated
        if done.any():
            idx = np.flatnonzero(done)
            final_obs = np.full(self.num_envs, None, dtype=object)
            final_info: dict[str, Any] = {}
            for key, value in info.items():
                arr = np.zeros_like(value)
                arr[idx] = value[idx]
                final_info[key], final_info[f"_{key}"] = arr, done
            for i in idx.tolist():
                final_obs[i] = obs[i].copy()
                self._reset_env(i, self._generator(i, None), {}, fresh=False)
            obs[idx] = self._observation(idx)
            for key, value in self._reset_info(idx).items():
                infos[key][idx] = value
            infos.update(final_obs=final_obs, _final_obs=done, final_info=final_info, _final_info=done)
        return obs, reward, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        self._needs_reset = True  # step() now raises (VectorEnv.close sets `closed` and runs this once)
        renderer = getattr(self, "_renderer", None)  # a subclass's frames (render()), made on first use
        if renderer is not None:
            renderer.close()
            self._renderer = None
        self.task.close()

    # -- helpers -----------------------------------------------------------------------------------------
    def _checked_seeds(self, seed: Any) -> list[int | None]:
        """One seed (or None) per env: ``seed + i`` for an int, a list as given; non-negative integers only."""
        n = self.num_envs
        if seed is None:
            return [None] * n
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds: list[Any] = [int(seed) + i for i in range(n)]
        elif isinstance(seed, (Sequence, np.ndarray)) and not isinstance(seed, str):
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"{self.name}.reset: seed: {len(seeds)} seeds for {n} envs; give one per env")
        else:
            raise TypeError(f"{self.name}.reset: seed: {seed!r}; give a non-negative int, one per env, or None")
        for i, s in enumerate(seeds):
            ok = s is None or (isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0)
            if not ok:
                raise ValueError(f"{self.name}.reset: seed of env {i}: {s!r}; give a non-negative int or None")
        return [None if s is None else int(s) for s in seeds]

    def _checked_mask(self, mask: Any) -> np.ndarray:
        """``options["reset_mask"]`` as gymnasium's vector envs take it: ``num_envs`` booleans."""
        arr = np.asarray(mask)
        if arr.dtype != np.bool_ or arr.shape != (self.num_envs,):
            raise ValueError(f"{self.name}.reset: options['reset_mask'] must be {self.num_envs} booleans (one per "
                             f"env), got dtype {arr.dtype} and shape {arr.shape}")  # fmt: skip
        return arr

    @property
    def _every_env(self) -> np.ndarray:
        mask = np.ones(self.num_envs, dtype=bool)
        mask.flags.writeable = False
        return mask

    def _generator(self, i: int, seed: int | None) -> np.random.Generator:
        """Env ``i``'s generator: re-seeded when a seed is given, else kept (created once, randomly)."""
        if seed is not None or self._generators[i] is None:
            self._generators[i], _ = seeding.np_random(seed)
        return self._generators[i]  # type: ignore[return-value]


def _with_masks(info: Info, mask: np.ndarray) -> dict[str, Any]:
    """Gymnasium's vector info layout: ``key`` and its env mask ``_key`` (one shared, read-only mask)."""
    if mask.flags.writeable:
        mask = mask.copy()
        mask.flags.writeable = False
    out: dict[str, Any] = dict(info)
    out.update(dict.fromkeys([f"_{key}" for key in info], mask))
    return out
