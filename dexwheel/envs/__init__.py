"""Gymnasium environments of dexwheel and their registration: every registered task's ids (single and native vector
envs), from the task registry (:mod:`dexwheel.tasks.registry`)."""

from __future__ import annotations

from dexwheel.tasks import registry


def register_envs() -> None:
    """Register the Gymnasium ids of every registered task, and of each task registered later (idempotent): a user's
    task registers its ids when its module registers it (imported by the user, or by the scripts from
    ``DEXWHEEL_TASKS``)."""
    registry.derive_from_each(registry.register_gym_ids)
