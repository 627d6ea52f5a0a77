"""Event terms of the velocity task: what changes an env at its resets and at intervals in its episodes.

Each is ``func(task, env_id, rng, **params)``, as Isaac Lab's and mjlab's event terms, but for one env with
that env's own generator ``rng`` (``task.rngs[env_id]``): a vector env's env ``i`` then draws exactly what a
single env with the same seed draws, in the same order and count. The task runs its ``events`` table
(:data:`~dexwheel.tasks.velocity.config.EVENTS`): the "reset" events in table order at each reset of an
env, then it resamples the command, then it schedules the "interval" events (one draw each); an interval
event that comes due runs, then draws its next interval.

A reset event writes the start state into ``task.reset_qpos[env_id]`` and ``task.reset_qvel[env_id]``
(each reset begins them at the settled stance at rest, :meth:`WheelLegTask.start_qpos`); the task writes
them into the physics after the last reset event, so an event that changes the model (the masses) may
come before or after the ones that choose the pose. An interval event writes the physics state itself
(``task.physics.qvel[env_id]``, then ``task.physics.set_qvel(env_id)``).

The built-in events read their numbers from the config sections users already set, so each number has
one home: the domain-randomisation ranges, push interval and push speed from ``domain_rand``, the start
noise from ``reset_noise_scale``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dexwheel.robots.wheel_leg import KNEE_JOINTS

if TYPE_CHECKING:
    from dexwheel.tasks.velocity.task import WheelLegTask

__all__ = ["push_by_setting_velocity", "randomize_model", "reset_joints_and_base"]


def randomize_model(task: WheelLegTask, env_id: int, rng: np.random.Generator) -> None:
    """Draw this episode's physical parameters for env ``env_id`` and write them into its model.

    Friction of every collision geom, base mass and CoM, knee/wheel link masses and inertias, and the PD
    gain factors of the drive, within the ``domain_rand`` ranges (Isaac Lab's ``randomize_rigid_body_material``,
    ``randomize_rigid_body_mass`` and ``randomize_actuator_gains`` in one draw of a fixed count). Why: a
    policy trained on one nominal model overfits it; varying the physics each episode makes it robust to
    the real robot's differences. Runs first at a reset, so the start pose is written into the new model.
    The draw is kept per env (``task.episode_params``, the critic's ``model_params`` columns), and a copy of
    the task rebuilds its models from it.
    """
    rz = task.randomizer
    p = rz.draw(rng)
    rz.apply(task.models[env_id], task._scratch, p)
    task.drive.set_gain_scales(env_id, p.kp_scale, p.kd_scale)
    task.episode_params[env_id] = p
    task.model_params[env_id] = [p.friction - rz.nominal_friction, p.base_mass_add, *p.base_com_offset,
                                 *(p.link_mass_scale - 1.0)]  # fmt: skip


def reset_joints_and_base(task: WheelLegTask, env_id: int, rng: np.random.Generator) -> None:
    """Perturb env ``env_id``'s start state: knee angles and the base's 6-D velocity, uniform in
    +-``reset_noise_scale`` (rad; m/s and rad/s).

    The base height follows the new knee angles, so the wheels start on the ground (a short drop, never a
    penetration). Why: episodes that all start in the same state teach a policy one start; small varied
    starts make it recover from the states it meets later (Isaac Lab's ``reset_joints_by_offset`` plus
    ``reset_root_state_uniform`` velocities).
    """
    noise = task.cfg.reset_noise_scale * (2.0 * rng.random(len(KNEE_JOINTS) + 6) - 1.0)
    knees = task.reset_qpos[env_id, task.knee_qadr] + noise[: len(KNEE_JOINTS)]
    task.reset_qpos[env_id] = task.start_qpos(knees)
    task.reset_qvel[env_id, :6] = noise[len(KNEE_JOINTS) :]


def push_by_setting_velocity(task: WheelLegTask, env_id: int, rng: np.random.Generator) -> None:
    """Push env ``env_id``'s base: add a uniform +-``domain_rand.push_velocity`` m/s to its x and y velocity.

    Why: a policy that has never been knocked does not learn to catch itself; sudden velocity changes at
    random times (``domain_rand.push_interval_s``) stand in for bumps and uneven ground (Isaac Lab's
    ``push_by_setting_velocity``).
    """
    task.physics.qvel[env_id, :2] += task.randomizer.push(rng)
    task.physics.set_qvel(env_id)


#: The built-in events that never write a model. A vector env whose active events are all among these (domain
#: randomisation off, with the default table) runs every env on one shared ``MjModel``; any other event, a
#: user's own included, gets each env its own copy (it may write ``task.models[env_id]``).
MODEL_FREE = frozenset({reset_joints_and_base, push_by_setting_velocity})
