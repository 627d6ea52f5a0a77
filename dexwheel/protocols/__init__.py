"""Evaluation protocols: how a policy is scored, defined once and backend-neutral (``scripts/evaluate.py
benchmark=<protocol>``; each task's record names the protocol that scores it, :mod:`dexwheel.tasks.registry`).

* ``steps`` (:mod:`.steps`): the wheel-leg robots over single steps and flights of stairs, up and down;
* ``rotation`` and ``reorient`` (:mod:`.in_hand`): the G20's object tasks on the training object and held-out ones.

The MuJoCo runners are :mod:`dexwheel.rl.step_benchmark` and :mod:`dexwheel.rl.eval_job`, the Isaac Lab ones
:mod:`dexwheel.isaaclab.step_benchmark` and :mod:`dexwheel.isaaclab.evaluate`. ``benchmarks/`` at the repository root
holds the speed benchmarks, a different thing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Protocol:
    """A protocol by its ``benchmark=`` name: its module, the ``evaluate.yaml`` section holding its settings, what a
    trial records on video."""

    name: str
    module: str
    section: str
    video: str


#: Every protocol by its ``benchmark=`` name.
PROTOCOLS = {
    "steps": Protocol("steps", "dexwheel.protocols.steps", "steps", "one climb and one descent per height"),
    "rotation": Protocol("rotation", "dexwheel.protocols.in_hand", "in_hand", "one trial of the first object"),
    "reorient": Protocol("reorient", "dexwheel.protocols.in_hand", "in_hand", "one trial of the first object"),
}
