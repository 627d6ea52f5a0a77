"""The rough-terrain velocity task (``Solenopsis-Rough-v0``, ``M20Legacy-Rough-v0``, Hydra ``task=velocity_rough``).

The flat task's config (:mod:`~dexwheel.tasks.velocity.config`) on the generated terrain grid
(:data:`~dexwheel.terrain.config.ROUGH_SUB_TERRAINS`, ``terrain``) with the tables changed where terrain asks
for it (each change says why): the height scan in the policy group, the curriculum and the spawn on the
env's tile among the reset events, an out-of-bounds termination, the base alone ending an episode by contact,
and a softer level-base penalty. Everything else (commands, actions, the other terms) is the flat task's.
"""

from __future__ import annotations

import dataclasses

from dexwheel.robots.wheel_leg import BASE_BODY
from dexwheel.tasks.terms import EventTermCfg, ObservationTermCfg, TerminationTermCfg
from dexwheel.tasks.velocity.config import _E, _O, _T, EVENTS, OBSERVATIONS, REWARDS, TERMINATIONS, WheelLegEnvCfg
from dexwheel.terrain.config import TerrainCfg

#: The flat task's observations plus ``height_scan`` (policy group: the actor sees the ground ahead; a blind
#: policy: ``observations={"height_scan": None}``, a critic-only scan: ``{"height_scan": {"group": "critic"}}``).
ROUGH_OBSERVATIONS: dict[str, ObservationTermCfg] = {
    **OBSERVATIONS,
    "height_scan": ObservationTermCfg(_O + "height_scan", {"size": (1.0, 0.6), "resolution": 0.1, "offset": 0.28},
                                      clip=(-1.0, 1.0)),
}  # fmt: skip

#: The flat task's rewards, but ``flat_orientation_l2`` at -10, not -50: on a 25 deg slope a level base is
#: not always reachable (sin^2(25 deg) = 0.18: -9 per second at -50, as much as the tracking rewards give),
#: and Isaac Lab's rough tasks drop the term altogether. The arms' contacts stay penalised (``undesired_contacts``).
ROUGH_REWARDS = {**REWARDS, "flat_orientation_l2": dataclasses.replace(REWARDS["flat_orientation_l2"], weight=-10.0)}

#: ``contact`` ends an episode on the base's contact only: an arm brushing a stair nose is no fall (it is
#: penalised by ``undesired_contacts``), as Isaac Lab's rough tasks end on ``base_contact``. ``out_of_bounds``:
#: the robot left the terrain (:func:`~dexwheel.tasks.velocity.terminations.terrain_out_of_bounds`).
ROUGH_TERMINATIONS: dict[str, TerminationTermCfg] = {
    **TERMINATIONS,
    "contact": TerminationTermCfg(_T + "illegal_contact", {"bodies": (BASE_BODY,)}),
    "out_of_bounds": TerminationTermCfg(_T + "terrain_out_of_bounds", {"distance_buffer": 1.0}),
}

#: The flat task's events with the curriculum (``terrain_levels``) and the spawn on the env's tile
#: (``reset_base_on_terrain``) after the start-pose noise, which sets the pose on flat ground at the origin.
ROUGH_EVENTS: dict[str, EventTermCfg] = {
    "randomize_model": EVENTS["randomize_model"],
    "reset_joints_and_base": EVENTS["reset_joints_and_base"],
    "terrain_levels": EventTermCfg(_E + "terrain_levels", "reset"),
    "reset_base_on_terrain": EventTermCfg(_E + "reset_base_on_terrain", "reset"),
    "push": EVENTS["push"],
}


def rough_cfg(robot: str = "solenopsis") -> WheelLegEnvCfg:
    """The rough task's config for ``robot``."""
    return WheelLegEnvCfg(robot=robot, terrain=TerrainCfg(), observations=dict(ROUGH_OBSERVATIONS),
                          rewards=dict(ROUGH_REWARDS), terminations=dict(ROUGH_TERMINATIONS), events=dict(ROUGH_EVENTS))  # fmt: skip
