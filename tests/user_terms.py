"""Terms as a user writes them in their own module (the tests name them by path: ``user_terms:<name>``)."""

import numpy as np


def lateral_vel_l2(task, scale: float = 1.0) -> np.ndarray:
    """Sideways base velocity squared: a wheel-leg base should not slide."""
    return scale * task.base_lin_vel[:, 1] ** 2


def base_height(task) -> np.ndarray:
    """An observation of one column per env."""
    return task.physics.qpos[:, 2].copy()


def too_slow(task, min_speed: float) -> np.ndarray:
    """A termination: forward speed under ``min_speed``."""
    return np.abs(task.base_lin_vel[:, 0]) < min_speed


def wrong_shape(task) -> np.ndarray:
    return np.zeros((task.num_envs, 2))


def raises(task) -> np.ndarray:
    raise RuntimeError("a bug in the user's term")


NOT_CALLABLE = 3


def thumb_spread(task, joint: int = 0) -> np.ndarray:
    """A hand reward: how far one active joint (the thumb's first) is from its lower limit (rad)."""
    return task.qpos[:, task.active_idx[joint]] - task.coupling.active_lower[joint]


def fingertip_speed(task) -> np.ndarray:
    """A hand observation of one column per env: the largest joint speed (rad/s)."""
    return np.abs(task.qvel).max(axis=1)


def goal_reached(task, tol: float) -> np.ndarray:
    """A hand termination: every active joint within ``tol`` of its goal."""
    return np.abs(task.qpos[:, task.active_idx] - task.goal).max(axis=1) <= tol


def start_closed(task, env: int, rng: np.random.Generator, amount: float) -> None:
    """A hand reset event: start ``amount`` of the way from the open hand to the full fist."""
    task.start_pose[env] += amount * (task.presets["full_fist"] - task.start_pose[env])


def random_yaw(task, env_id, rng, max_yaw: float = np.pi) -> None:
    """A reset event: start facing a heading uniform in +-``max_yaw`` rad (one draw from the env's generator)."""
    yaw = max_yaw * (2.0 * rng.random() - 1.0)
    task.reset_qpos[env_id, 3:7] = (np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2))


def spin(task, env_id, rng, rate: float = 1.0) -> None:
    """An interval event: add ``rate`` rad/s to the base's yaw rate (no draw)."""
    task.physics.qvel[env_id, 5] += rate
    task.physics.set_qvel(env_id)


def nan_after(task, steps: int = 3) -> np.ndarray:
    """A term with a bug: NaN once an episode is ``steps`` control steps old (finite before)."""
    age = task.elapsed if hasattr(task, "elapsed") else task.episode_length
    return np.where(np.asarray(age) >= steps, np.nan, 0.0)


def nan_always(task) -> np.ndarray:
    return np.full(task.num_envs, np.nan)


class steps_since_reset:  # noqa: N801  (a term is named like a function, as mjlab's class terms)
    """A stateful observation term: how many times it was called since its env's last reset."""

    def __init__(self, task, start: float = 0.0) -> None:
        self.start = start
        self.count = np.full(task.num_envs, start)

    def __call__(self, task) -> np.ndarray:
        self.count += 1.0
        return self.count.copy()

    def reset(self, env_ids: np.ndarray) -> None:
        self.count[env_ids] = self.start


class forgetful:  # noqa: N801
    """A class term without ``reset``: refused."""

    def __init__(self, task) -> None:
        self.n = task.num_envs

    def __call__(self, task) -> np.ndarray:
        return np.zeros(self.n)
