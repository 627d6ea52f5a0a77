"""Event terms of the velocity task: what changes an env at its resets and at intervals in its episodes.

Each is ``func(task, env_id, rng, **params)`` (``task`` the batched
:class:`~dexwheel.tasks.velocity.task.WheelLegTask`), as Isaac Lab's and mjlab's event terms, but for one env with
that env's own generator ``rng`` (``task.rngs[env_id]``): a vector env's env ``i`` then draws exactly what a
single env with the same seed draws, in the same order and count. The task runs its ``events`` table
(:data:`~dexwheel.tasks.velocity.config.EVENTS`): the "reset" events in table order at each reset of an
env, then it resamples the command, then it schedules the "interval" events (one draw each); an interval
event that comes due runs, then draws its next interval.

A reset event writes the start state into ``task.reset_qpos[env_id]`` and ``task.reset_qvel[env_id]`` (each
reset begins them at the settled stance at rest, :meth:`~dexwheel.tasks.velocity.task.WheelLegTask.start_qpos`);
the task writes them into the physics after the last reset event, so an event that changes the model (the masses) may
come before or after the ones that choose the pose. An interval event writes the physics state itself
(``task.physics.qvel[env_id]``, then ``task.physics.set_qvel(env_id)``).

The built-in events read their numbers from the config sections users already set, so each number has
one home: the domain-randomisation ranges, push interval and push speed from ``domain_rand``, the start
noise from ``reset_noise_scale``.
"""

from __future__ import annotations

import numpy as np

from dexwheel.robots.wheel_leg import KNEE_JOINTS

__all__ = ["push_by_setting_velocity", "randomize_model", "reset_base_on_terrain", "reset_joints_and_base",
           "terrain_levels"]  # fmt: skip


def randomize_model(task, env_id: int, rng: np.random.Generator) -> None:
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


def reset_joints_and_base(task, env_id: int, rng: np.random.Generator) -> None:
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


def push_by_setting_velocity(task, env_id: int, rng: np.random.Generator) -> None:
    """Push env ``env_id``'s base: add a uniform +-``domain_rand.push_velocity`` m/s to its x and y velocity.

    Why: a policy that has never been knocked does not learn to catch itself; sudden velocity changes at
    random times (``domain_rand.push_interval_s``) stand in for bumps and uneven ground (Isaac Lab's
    ``push_by_setting_velocity``).
    """
    task.physics.qvel[env_id, :2] += task.randomizer.push(rng)
    task.physics.set_qvel(env_id)


def _terrain(task, event: str):
    if getattr(task, "terrain", None) is None:
        raise ValueError(f"events.{event} moves envs on the terrain, and this task has none; give it one "
                         "(terrain=...) or remove the event")  # fmt: skip
    return task.terrain


def terrain_levels(task, env_id: int, rng: np.random.Generator) -> None:
    """The terrain curriculum (Isaac Lab's ``terrain_levels_vel``, mjlab's ``terrain_levels_vel``): at each
    reset, move env ``env_id`` up or down a level by how far its ending episode took it.

    The rule, on the episode that just ended (the state before this reset): ``distance`` is the base's
    horizontal distance from its tile origin. Promote (level + 1) when ``distance > tile size x / 2`` (it
    walked off its tile); else demote (level - 1) when ``distance < |commanded forward speed| *
    episode_length_s / 2`` (it covered less than half of what its last command asked for a whole episode;
    a fall early in the episode covers little). A standing command never demotes. Level 0 stays 0; an env
    promoted past the top row goes to a level drawn uniformly among all rows (Isaac Lab's rule, so solved
    envs keep revisiting every level rather than piling up on the top one). Why: a policy learns nothing
    on terrain it cannot yet cross, or on terrain it has already mastered; each env finds its own level.

    An env's first reset draws its tile instead (:meth:`~dexwheel.tasks.velocity.terrain.TaskTerrain.assign`:
    a level in ``[0, max_init_terrain_level]``, a column). With ``terrain.curriculum`` off the levels stay
    as drawn (all levels). Draws: two at the first reset, one when an env passes the top, none otherwise.
    """
    t = _terrain(task, "terrain_levels")
    if t.level[env_id] < 0:
        t.assign(env_id, rng)
        return
    if not t.cfg.curriculum:
        return
    q = task.physics.qpos[env_id]
    distance = float(np.hypot(q[0] - t.origin[env_id, 0], q[1] - t.origin[env_id, 1]))
    up = distance > t.desc.tile_size[0] / 2
    down = not up and distance < abs(float(task.commands[env_id, 0])) * task.cfg.episode_length_s * 0.5
    level = int(t.level[env_id]) + int(up) - int(down)
    if level >= t.desc.num_rows:
        level = int(rng.integers(t.desc.num_rows))
    t.move(env_id, max(level, 0))


def reset_base_on_terrain(task, env_id: int, rng: np.random.Generator) -> None:
    """Start env ``env_id`` at its tile's origin, facing a uniform random heading (Isaac Lab's rough-terrain
    ``reset_base`` with yaw in (-pi, pi)): the start pose the earlier events chose, shifted by the origin
    (x, y and the ground height there) and turned about z.

    Why: each env must start on the tile of its level (the curriculum's point), standing on that tile's
    ground; a random heading makes every direction across a tile's stairs and slopes a start. Runs after
    ``reset_joints_and_base`` (which sets the pose relative to flat ground at the world origin) and after
    ``terrain_levels`` (which picks the tile; an env without one gets its first tile here). Two draws.
    """
    t = _terrain(task, "reset_base_on_terrain")
    if t.level[env_id] < 0:
        t.assign(env_id, rng)
    yaw = (2.0 * rng.random() - 1.0) * np.pi
    # the second draw was the height scan's noise key before observation noise was keyed by the term runner
    # (dexwheel.tasks.manager, which draws nothing): still drawn, so every rough trajectory stays as it was
    rng.integers(2**63, dtype=np.uint64)
    q = task.reset_qpos[env_id]
    q[:3] += t.origin[env_id]
    w0, x0, y0, z0 = q[3:7]
    cw, sz = np.cos(yaw / 2), np.sin(yaw / 2)  # (cw, 0, 0, sz) times the start orientation
    q[3:7] = (cw * w0 - sz * z0, cw * x0 - sz * y0, cw * y0 + sz * x0, cw * z0 + sz * w0)


#: The built-in events that never write a model. A vector env whose active events are all among these (domain
#: randomisation off, with the default table) runs every env on one shared ``MjModel``; any other event, a
#: user's own included, gets each env its own copy (it may write ``task.models[env_id]``).
MODEL_FREE = frozenset({reset_joints_and_base, push_by_setting_velocity, terrain_levels, reset_base_on_terrain})
for _event in (randomize_model, reset_joints_and_base, push_by_setting_velocity, terrain_levels, reset_base_on_terrain):
    # they take no parameters (read by dexwheel.tasks.terms.check_params when one is given)
    _event.params_elsewhere = "their numbers are the domain_rand.* fields and reset_noise_scale (one place each)"
