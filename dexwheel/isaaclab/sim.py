"""Simulation settings that match the MuJoCo models: Newton + MuJoCo-Warp, implicitfast, kit-less."""

from __future__ import annotations

import isaaclab.sim as sim_utils
from isaaclab.sim.spawners.materials import RigidBodyMaterialBaseCfg
from isaaclab_newton.physics import MJWarpSolverCfg, NewtonCfg

from dexwheel import warp_cache
from dexwheel.isaaclab.usd import GROUND_USD
from dexwheel.robots.description import RobotDescription

#: Ground friction as the MuJoCo floor's (MuJoCo takes the larger of the two geoms' values: 1.0).
GROUND_FRICTION = 1.0


def physics_cfg(device: str) -> NewtonCfg:
    """Newton with the MuJoCo-Warp solver and MuJoCo's integrator of the project's models.

    Isaac's default integrator is Euler, which moves a skid turn's yaw by 1.6 % against MuJoCo's
    implicitfast. CUDA graphs exist only on a GPU. The manager is MuJoCo-Warp's, which also builds the
    terrain's height fields from their samples (:class:`~dexwheel.isaaclab.terrain.NewtonTerrainMJWarpManager`).
    On a GPU, warp then loads each module's CUBIN rather than PTX for the driver to compile first
    (:func:`dexwheel.warp_cache.prefer_cubin`): every env and replay builds its physics here, before warp loads
    the modules it runs.
    """
    from dexwheel.isaaclab.terrain import NewtonTerrainMJWarpManager  # MuJoCo-Warp's, plus the terrain's height fields

    warp_cache.prefer_cubin()

    return NewtonCfg(
        solver_cfg=MJWarpSolverCfg(integrator="implicitfast", class_type=NewtonTerrainMJWarpManager),
        use_cuda_graph=device.startswith("cuda"),
    )


def simulation_cfg(desc: RobotDescription, device: str = "cpu", dt: float | None = None) -> sim_utils.SimulationCfg:
    """The robot's physics step (``desc.timestep`` unless ``dt``) and gravity on ``device``."""
    return sim_utils.SimulationCfg(
        device=device,
        dt=desc.timestep if dt is None else dt,
        gravity=desc.gravity,
        physics=physics_cfg(device),
    )


def ground_cfg(friction: float = GROUND_FRICTION) -> sim_utils.GroundPlaneCfg:
    """The committed local plane (``assets/ground_plane.usda``) with the MuJoCo floor's friction (or ``friction``)."""
    material = RigidBodyMaterialBaseCfg(static_friction=friction, dynamic_friction=friction)
    return sim_utils.GroundPlaneCfg(usd_path=str(GROUND_USD), physics_material=material)
