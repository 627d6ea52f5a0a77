"""Native vector env of G20Hand-v0: all envs stepped by one batched :class:`G20HandTask`.

``gymnasium.make_vec("G20Hand-v0", num_envs=N, vectorization_mode="vector_entry_point", **kwargs)``.
The task logic (action mapping, slew, rewards, observations) runs over the env axis in compiled
kernels. PD: the physics of all envs is one ``mujoco.batch.Batch`` call; hard-write: the whole step of
all envs is one compiled call spreading them over numba's worker threads (``num_threads``, default
one per core). Never one Python ``env.step`` per env. Each env computes exactly what a single
:class:`~dexwheel.envs.g20_hand.G20HandEnv` computes, so ``reset(seed=s)`` (env ``i`` seeded with
``s + i``) reproduces ``N`` single envs created with seeds ``s + i`` bit for bit.

With ``action="nominal"``, ``step`` also takes a list of ``N`` ``{joint: radians}`` dicts (joints not
named keep their command). Seeding, reset masks and ``SAME_STEP`` autoreset (``final_obs``,
``final_info``) are :class:`~dexwheel.envs.vector_env.TaskVectorEnv`'s, every task's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dexwheel.control import ActionError
from dexwheel.envs.g20_hand import nominal_row
from dexwheel.envs.vector_env import TaskVectorEnv
from dexwheel.tasks.hand_pose.config import make_cfg
from dexwheel.tasks.hand_pose.task import G20HandTask


class G20HandVectorEnv(TaskVectorEnv):
    """``num_envs`` G20 hands in one process; keyword arguments as :class:`~dexwheel.envs.g20_hand.G20HandEnv`'s,
    ``max_episode_steps`` and ``num_threads`` (hard-write: numba's worker threads).

    ``copy.deepcopy`` and pickling give an independent vector env that continues the same trajectories.
    """

    task_class = G20HandTask
    make_config = staticmethod(make_cfg)

    def _step_actions(self, actions: Any) -> Any:
        if isinstance(actions, (list, tuple)) and actions and all(isinstance(a, Mapping) for a in actions):
            if len(actions) != self.num_envs:
                raise ActionError(f"{len(actions)} {{joint: radians}} actions for {self.num_envs} envs")
            return np.stack([nominal_row(self.task, a, i) for i, a in enumerate(actions)])
        return actions


__all__ = ["G20HandVectorEnv"]
