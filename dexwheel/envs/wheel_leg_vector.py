"""Native vector env of ``Solenopsis-v0`` / ``M20Legacy-v0``: N envs in one batched task.

``gymnasium.make_vec("Solenopsis-v0", num_envs=N, vectorization_mode="vector_entry_point")``. Physics
runs in ``mujoco.batch.Batch``'s C++ thread pool (no Python loop per env); observations, rewards and
terminations are compiled kernels over the env axis (the single env's). ``reset(seed=s)`` seeds env
``i`` with ``s + i``, and the result is bit-identical to N single envs made with those seeds and driven
with the same actions.

Seeding, reset masks and ``SAME_STEP`` autoreset (``final_obs``, ``final_info``, reset infos for the
envs just reset) are :class:`~dexwheel.envs.vector_env.TaskVectorEnv`'s, every task's.
"""

from __future__ import annotations

from dexwheel.envs.vector_env import TaskVectorEnv
from dexwheel.tasks.velocity.config import make_cfg
from dexwheel.tasks.velocity.task import TaskViews, WheelLegTask


class WheelLegVectorEnv(TaskViews, TaskVectorEnv):
    """``num_envs`` wheel-leg envs; keyword arguments as for the single env plus ``num_threads`` and
    ``max_episode_steps`` (:class:`~dexwheel.envs.vector_env.TaskVectorEnv`).

    ``copy.deepcopy`` and pickling give an independent vector env that continues the same trajectories.
    """

    task_class = WheelLegTask
    make_config = staticmethod(make_cfg)
    RENDER_SIZE = (640, 480)

    def set_command(self, lin_vel_x: float, ang_vel_z: float, env: int | None = None, hold: bool = True) -> None:
        self.task.set_command(lin_vel_x, ang_vel_z, env=env, hold=hold)

    def set_override(self, active: bool) -> None:
        self.task.set_override(active)
