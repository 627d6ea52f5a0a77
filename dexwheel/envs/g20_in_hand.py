"""G20Rotate-v0 and G20Reorient-v0, the Gymnasium faces of the in-hand tasks (:mod:`dexwheel.tasks.in_hand`).

:class:`G20InHandEnv` is the task's ``N = 1`` case (:class:`~dexwheel.tasks.in_hand.task.InHandTask`);
:class:`G20InHandVectorEnv` its ``N``-env case (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``),
bit-identical for the same seeds and actions. The task's step, terms and observation are documented there and in
``docs/reference/tasks.md``.

Observation (float32, one slice per term, ``obs_slices``): the actor's proprioception first (``policy_obs_dim``
columns: the hand's 21 joint positions over the last 3 steps, the last action), then, with ``privileged_obs`` (the
default), the critic's columns (the object's position from its start, orientation, velocities, the fingertips'
contacts, the command). ``info``: ``reward_<term>``, ``rotation_rate`` (rad/s about the axis), ``rotation_angle``
(rad turned this episode), ``object_drift`` (m), ``orientation_error`` (rad to the goal), ``successes`` (goals reached
this episode), ``action_clipped``, ``diverged``, ``terminated_<term>``.
"""

from __future__ import annotations

from dexwheel.envs.base import TaskEnv
from dexwheel.envs.vector_env import TaskVectorEnv
from dexwheel.tasks.in_hand.config import make_cfg
from dexwheel.tasks.in_hand.task import InHandTask


class G20InHandEnv(TaskEnv):
    """The G20 turning an object in its palm; keyword arguments: ``cfg`` (an :class:`InHandCfg` to start from) and
    the changes :func:`~dexwheel.tasks.in_hand.config.make_cfg` takes (``task="rotate"`` or ``"reorient"``, sections
    as dicts, term tables by term name). ``copy.deepcopy`` and pickling give an independent env that continues the
    same trajectory."""

    task_class = InHandTask
    make_config = staticmethod(make_cfg)


class G20InHandVectorEnv(TaskVectorEnv):
    """``num_envs`` in-hand envs in one process (one batched :class:`InHandTask`); keyword arguments as
    :class:`G20InHandEnv`'s. ``reset(seed=s)`` seeds env ``i`` with ``s + i``: ``N`` single envs, bit for bit."""

    task_class = InHandTask
    make_config = staticmethod(make_cfg)


__all__ = ["G20InHandEnv", "G20InHandVectorEnv"]
