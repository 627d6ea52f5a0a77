"""The hand-pose task's termination terms, each ``func(task, **params) -> (N,) bool``.

Pose tracking has none by default (an episode ends by time only); these are for tables that want one
(``terminations={"deep_contact": {"func": ".../terminations:deep_contact", "params": {"limit": 0.005}}}``).
``info["terminated_<term>"]`` says which one ended an episode.
"""

from __future__ import annotations

import numpy as np


def deep_contact(task, limit: float) -> np.ndarray:
    """The hand's bodies interpenetrate deeper than ``limit`` (m): with the PD drive, a pose the policy
    pressed fingers into each other to reach (hard-write projection keeps contacts within its tolerance)."""
    return task.depth > limit
