"""The in-hand tasks' event terms, each ``func(task, env, rng, **params)`` for one env at its reset.

They run in table order before the env's physics is set: :func:`reset_from_grasps` draws the episode's start (the
hand's joints and the object's pose) from the grasp cache; later events may change ``task.start_joints[env]`` and
``task.start_object[env]``, each with the env's own generator (a vector env's env ``i`` draws what a single env
with that seed draws). The domain-randomisation events below write the env's model instead.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.in_hand.objects import FRICTION_RANGE, MASS_RANGE, SIZE_RANGE
from dexwheel.tasks.terms import Check


def reset_from_grasps(task, env: int, rng: np.random.Generator) -> None:
    """A grasp of the cache, uniformly (HORA's and the LEAP hand's reset): its joints and its object pose (the cache
    of the env's object size: the config's, or :func:`randomize_object_size`'s draw)."""
    cache = task.grasps_for(float(task.object_size[env]))
    k = int(rng.integers(len(cache)))
    task.start_joints[env] = cache.joints[k]
    task.start_object[env] = cache.object_pose[k]


# -- domain randomisation: per env and episode, each a named term (Isaac Lab's randomize_rigid_body_mass,
# randomize_rigid_body_material and randomize_actuator_gains), off unless its entry is in the events table. Each
# draws from the env's generator and writes into the env's own model (:meth:`InHandTask.apply_physics`), from the
# scene's nominal values. Why: a policy trained on one object and one set of servo gains overfits them; the real
# object's mass and skin, and the real servos, differ.
MassRange = Annotated[tuple[float, float], Check(ge=MASS_RANGE[0], le=MASS_RANGE[1], unit="kg")]
FrictionRange = Annotated[tuple[float, float], Check(ge=FRICTION_RANGE[0], le=FRICTION_RANGE[1])]
Scale = Annotated[tuple[float, float], Check(gt=0.0)]
Sizes = Annotated[tuple[float, ...], Check(ge=SIZE_RANGE[0], le=SIZE_RANGE[1], unit="m")]


def _ranges(*names: str):
    """A ``check_params`` for the range parameters ``names``: two numbers, low <= high."""

    def check(params: dict, where: str) -> None:
        for name in names:
            r = params.get(name)
            if r is not None and not (isinstance(r, (tuple, list)) and len(r) == 2 and r[0] <= r[1]):
                raise ConfigFieldError(f"{where}.params.{name}", f"{where}.params.{name}: expected (low, high) with "
                                                                 f"low <= high, got {r!r}")  # fmt: skip

    return check


def randomize_object_mass(task, env: int, rng: np.random.Generator, mass_range: MassRange = (0.05, 0.2)) -> None:
    """The object's mass (kg), uniform in ``mass_range`` (its inertia scaled with it: the same density)."""
    task.object_mass[env] = rng.uniform(*mass_range)
    task.apply_physics(env)


def randomize_friction(task, env: int, rng: np.random.Generator, friction_range: FrictionRange = (0.5, 1.5)) -> None:
    """The sliding friction of the object and of the hand's collision shapes, one value uniform in
    ``friction_range``: the object's, every hand geom's scaled by it over the object's nominal friction (the pads
    model's pads take the value, its palm and capsules 0.3 of it; the spec's model, every geom the value: MuJoCo takes
    the larger of two geoms' values there). Isaac Lab's ``randomize_rigid_body_material`` on both assets."""
    task.friction[env] = rng.uniform(*friction_range)
    task.apply_physics(env)


def randomize_pd_gains(task, env: int, rng: np.random.Generator, kp_scale: Scale = (0.85, 1.15),
                       kd_scale: Scale = (0.85, 1.15)) -> None:  # fmt: skip
    """Each actuator's stiffness and damping times a factor, uniform in ``kp_scale`` and ``kd_scale`` (one draw per
    actuator and gain, stiffness first)."""
    nu = task.kp_scale.shape[1]
    task.kp_scale[env] = rng.uniform(*kp_scale, nu)
    task.kd_scale[env] = rng.uniform(*kd_scale, nu)
    task.apply_physics(env)


def randomize_object_size(task, env: int, rng: np.random.Generator, sizes: Sizes = (0.05, 0.06, 0.07)) -> None:
    """The object's size (m), one of ``sizes`` uniformly (each needs a grasp cache of the hand and shape: checked at
    construction), its collision shape and inertia scaled with it (the mass stays: it is its own term's), and the
    episode's start drawn again from that size's cache. A curriculum over sizes, as HORA trains on several objects."""
    task.object_size[env] = sizes[int(rng.integers(len(sizes)))]
    task.apply_physics(env)
    reset_from_grasps(task, env, rng)


randomize_object_mass.check_params = _ranges("mass_range")  # type: ignore[attr-defined]
randomize_friction.check_params = _ranges("friction_range")  # type: ignore[attr-defined]
randomize_pd_gains.check_params = _ranges("kp_scale", "kd_scale")  # type: ignore[attr-defined]
#: The events that write an env's model: with any of them, each env runs on a model of its own.
MODEL_EVENTS = (randomize_object_mass, randomize_friction, randomize_pd_gains, randomize_object_size)
