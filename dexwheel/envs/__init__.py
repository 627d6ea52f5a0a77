"""Gymnasium environments of dexwheel and their registration: every registered task's ids (single and native vector
envs), from the task registry (:mod:`dexwheel.tasks.registry`)."""

from __future__ import annotations

from dexwheel.tasks import registry


def register_envs() -> None:
    """Register the Gymnasium ids of every registered task (idempotent); a task registered later registers its own."""
    for record in registry.tasks().values():
        registry.register_gym_ids(record)
    registry._registered_envs[0] = True
