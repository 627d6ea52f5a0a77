"""The velocity task's action term on numpy (the MuJoCo task): ``(N, A)`` actions checked, clipped and mapped into
the policy layer of the action path (:class:`~dexwheel.tasks.velocity.action_path.WheelLegActionPath`, which the
Isaac Lab task shares and maps on torch), with the optional latency (:mod:`dexwheel.tasks.action_delay`).

Knee position ``stance + knee_scale a`` and wheel velocity ``wheel_scale a`` are computed in float64 from the
float32 action and rounded once into the float32 buffer (:func:`~dexwheel.tasks.velocity.kernels.map_actions`).
"""

from __future__ import annotations

import numpy as np

from dexwheel.control import ActionError
from dexwheel.tasks.action_delay import ActionDelay, delay_range
from dexwheel.tasks.velocity import kernels
from dexwheel.tasks.velocity.action_path import WheelLegActionPath
from dexwheel.tasks.velocity.config import WheelLegEnvCfg

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # the action dtypes map_actions compiles for


class WheelLegActionTerm:
    """Actions of ``num_envs`` envs into ``path``'s policy layer; ``delay`` (None: none) holds the latency."""

    def __init__(self, cfg: WheelLegEnvCfg, path: WheelLegActionPath) -> None:
        self.path, self.clip = path, cfg.actions.clip
        self.shape = (path.num_envs, path.action_dim)
        delay = delay_range(cfg.actions.delay_steps, "actions.delay_steps")
        self._delayed = np.zeros(self.shape, dtype=np.float32)  # the delayed action, clipped (not read)
        #: Latency (:mod:`dexwheel.tasks.action_delay`; None: none): the policy layer gets a delayed action.
        self.delay = ActionDelay(delay, self._delayed) if delay != (0, 0) else None

    def apply(self, actions: np.ndarray, action: np.ndarray) -> None:
        """Map ``actions`` into the policy layer and the clipped policy action into ``action`` (float32, what the
        terms read); with a delay the layer takes the action of ``k`` steps ago. Any real dtype is taken (the
        kernel runs on native float32 and float64; others are converted to float64). A wrong shape or a
        NaN/inf entry raises :class:`ActionError` before anything changes."""
        p = self.path
        if actions.shape != self.shape or actions.dtype not in _KERNEL_DTYPES:
            actions = self._checked(actions)
        bad = kernels.map_actions(actions, self.clip, p.act_scale, p.act_offset, action, p.policy_block)
        if bad >= 0:
            i, j = divmod(bad, p.action_dim)
            env = f"env {i}: " if p.num_envs > 1 else ""
            raise ActionError(f"{env}action[{j}] ({p.policy_joints[j]}) = {float(actions[i, j])} is not finite; "
                              "actions are in [-1, 1]")  # fmt: skip
        if (
            self.delay is not None
        ):  # the policy layer takes the action of delay steps ago (``action`` stays the policy's)
            kernels.map_actions(self.delay(action), self.clip, p.act_scale, p.act_offset, self._delayed, p.policy_block)

    def reset(self, i: int, rng: np.random.Generator) -> None:
        """Env ``i`` starts an episode: its delay applies the stance with still wheels (action 0) until ``k``
        actions are given, and a delay range draws its ``k`` from ``rng``."""
        d = self.delay
        if d is not None:
            d.reset(i, 0.0, int(rng.integers(d.low, d.high + 1)) if d.random else None)

    def _checked(self, actions: np.ndarray) -> np.ndarray:
        n, shape, joints = self.path.num_envs, self.shape, self.path.policy_joints
        expected = f"({shape[1]},)" if n == 1 else str(shape)
        got = actions.shape[1:] if n == 1 else actions.shape
        if actions.shape != shape:
            raise ActionError(f"action must have shape {expected} ({', '.join(joints)}), got {got}")
        if actions.dtype.kind not in "biuf":
            raise ActionError(f"action must be numeric with shape {expected}, got dtype {actions.dtype}")
        return actions.astype(np.float64)
