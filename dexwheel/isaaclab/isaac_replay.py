"""The Isaac Lab half of the cross-backend comparison: replays the MuJoCo half's programs on Newton + MJWarp.

python -m dexwheel.isaaclab.isaac_replay PROGRAMS.npz OUT.npz --group wheel_leg [--device cpu]

One scene per group (one physics step): every robot of the group sits in each env, ``ROBOT_SPACING`` apart,
and env ``i`` runs each robot's ``i``-th case, so one build and one loop cover the group.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

import numpy as np

from dexwheel.isaaclab import scenarios

if TYPE_CHECKING:  # Isaac Lab is imported when a replay runs, not when this module is
    from isaaclab.scene import InteractiveScene
    from isaaclab.sim import SimulationContext

ROBOT_SPACING = 2.0  # m between the robots of one env
ENV_SPACING = 4.0


def write_default_state(art, env_origins) -> None:
    """Put an articulation at its configured initial state (``sim.reset()`` leaves the joints at 0)."""
    if not art.is_fixed_base:
        pose = art.data.default_root_pose.torch.clone()
        pose[:, :3] += env_origins
        art.write_root_pose_to_sim_index(root_pose=pose)
        art.write_root_velocity_to_sim_index(root_velocity=art.data.default_root_vel.torch)
    art.write_joint_position_to_sim_index(position=art.data.default_joint_pos.torch)
    art.write_joint_velocity_to_sim_index(velocity=art.data.default_joint_vel.torch)


def _joint_facts(art, order: list[int]) -> dict[str, list[float]]:
    """What the simulation holds per joint (env 0, description order): gains, armature, limits."""
    fields = {"stiffness": "joint_stiffness", "damping": "joint_damping", "armature": "joint_armature",
              "passive_damping": "joint_viscous_friction_coeff", "effort_limit": "joint_effort_limits"}  # fmt: skip
    return {k: getattr(art.data, v).torch[0, order].tolist() for k, v in fields.items()}


def _solver_facts() -> dict[str, object]:
    """The MuJoCo model Newton built: actuator count, force-limited actuators, integrator."""
    from isaaclab_newton.physics import NewtonManager

    m = NewtonManager._solver.mj_model
    return {"nu": int(m.nu), "forcelimited": int(m.actuator_forcelimited.sum()), "integrator": int(m.opt.integrator)}


def _by_robot(progs: list[scenarios.Program]) -> tuple[dict[str, list[scenarios.Program]], float, int, int]:
    """Programs per robot, and the scene's physics step, length and env count (one env per case)."""
    robots: dict[str, list[scenarios.Program]] = {}
    for p in progs:
        robots.setdefault(p.robot, []).append(p)
    dts, steps = {p.dt for p in progs}, {p.steps for p in progs}
    if len(dts) != 1 or len(steps) != 1:
        raise ValueError(f"one scene needs one physics step and one length; got dt {dts}, steps {steps}")
    for robot, ps in robots.items():
        if any(not np.array_equal(p.q0, ps[0].q0) or not np.array_equal(p.base_pos, ps[0].base_pos) for p in ps):
            raise ValueError(f"{robot}: the cases of one robot must share their initial state")
    return robots, dts.pop(), steps.pop(), max(len(ps) for ps in robots.values())


def _build(robots: dict[str, list[scenarios.Program]], dt: float, num_envs: int, device: str,
           motor_pd: bool) -> tuple[SimulationContext, InteractiveScene]:  # fmt: skip
    """The simulation and the scene: the ground and each robot at its programs' initial state."""
    import isaaclab.sim as sim_utils
    from isaaclab.assets import AssetBaseCfg
    from isaaclab.scene import InteractiveScene, InteractiveSceneCfg

    from dexwheel.isaaclab.robots import articulation_cfg
    from dexwheel.isaaclab.sim import ground_cfg, simulation_cfg
    from dexwheel.robots import get_robot

    sim = sim_utils.SimulationContext(simulation_cfg(get_robot(next(iter(robots))), device, dt=dt))
    scene_cfg = InteractiveSceneCfg(num_envs=num_envs, env_spacing=ENV_SPACING)
    terrains = {id(t): t for t in (scenarios.terrain_of(p) for ps in robots.values() for p in ps)}
    if len(terrains) != 1:
        raise ValueError("one scene needs one ground: the plane or one terrain")
    terrain = next(iter(terrains.values()))
    if terrain is None:
        scene_cfg.ground = AssetBaseCfg(prim_path="/World/ground", spawn=ground_cfg())
    else:  # the same description's boxes and height fields; the envs on the grid, in the MuJoCo half's frame
        from dexwheel.isaaclab.terrain import DescriptionTerrainImporterCfg, TerrainSource

        scene_cfg.terrain = DescriptionTerrainImporterCfg(prim_path="/World/ground", terrain=TerrainSource(terrain),
                                                          use_terrain_origins=False, env_spacing=ENV_SPACING)  # fmt: skip
    for r, (robot, ps) in enumerate(robots.items()):
        q0 = dict(zip(get_robot(robot).joint_names, ps[0].q0.tolist(), strict=True))
        base = tuple(ps[0].base_pos + np.array([0.0, ROBOT_SPACING * r, 0.0]))
        setattr(scene_cfg, robot, articulation_cfg(robot, f"{{ENV_REGEX_NS}}/{robot}", q0, base, motor_pd=motor_pd))
    scene = InteractiveScene(scene_cfg)
    sim.reset()
    for robot in robots:
        write_default_state(scene[robot], scene.env_origins)
    scene.reset()
    return sim, scene


def replay(
    progs: list[scenarios.Program], device: str = "cpu", motor_pd: bool = True
) -> tuple[dict[str, dict[str, np.ndarray]], dict]:
    """Trajectories keyed like the programs, plus run details: the model's per-joint facts, build and
    stepping wall seconds.

    ``motor_pd`` False keeps Isaac Lab's own PD split (:mod:`dexwheel.isaaclab.motor_pd` says why not).
    """
    import isaaclab.sim as sim_utils
    import torch

    from dexwheel.robots import get_robot

    t0 = time.perf_counter()
    robots, dt, n, num_envs = _by_robot(progs)
    sim, scene = _build(robots, dt, num_envs, device, motor_pd)
    t_build = time.perf_counter() - t0

    out = {p.key: {name: np.zeros((n, *shape)) for name, shape in
                   (("base_pos", (3,)), ("base_quat", (4,)), ("q", (len(p.q0),)), ("qd", (len(p.q0),)))}
           for p in progs}  # fmt: skip
    handles = []
    for r, (robot, ps) in enumerate(robots.items()):
        art = scene[robot]
        order = [art.joint_names.index(j) for j in get_robot(robot).joint_names]  # description -> Isaac columns
        # envs past a robot's last case repeat that case (their results are not read)
        pos = np.stack([p.pos_target for p in ps] + [ps[-1].pos_target] * (num_envs - len(ps)), axis=1)
        vel = np.stack([p.vel_target for p in ps] + [ps[-1].vel_target] * (num_envs - len(ps)), axis=1)
        origin = scene.env_origins + torch.tensor([0.0, ROBOT_SPACING * r, 0.0], device=sim.device)
        handles.append((art, ps, order, torch.tensor(pos, dtype=torch.float32, device=sim.device),
                        torch.tensor(vel, dtype=torch.float32, device=sim.device), origin))  # fmt: skip
    t1 = time.perf_counter()
    for k in range(n):
        for art, _, order, pos, vel, _ in handles:
            q_target, qd_target = torch.empty_like(pos[k]), torch.empty_like(vel[k])
            q_target[:, order], qd_target[:, order] = pos[k], vel[k]
            art.actuators.target_command.set_position_index(value=q_target)
            art.actuators.target_command.set_velocity_index(value=qd_target)
        scene.write_data_to_sim()
        sim.step(render=False)
        scene.update(sim.get_physics_dt())
        for art, ps, order, _, _, origin in handles:
            base_pos = (art.data.root_link_pos_w.torch - origin).cpu().numpy()
            base_quat = art.data.root_link_quat_w.torch.cpu().numpy()[:, [3, 0, 1, 2]]  # xyzw -> wxyz
            q = art.data.joint_pos.torch.cpu().numpy()[:, order]
            qd = art.data.joint_vel.torch.cpu().numpy()[:, order]
            for i, p in enumerate(ps):
                o = out[p.key]
                o["base_pos"][k], o["base_quat"][k], o["q"][k], o["qd"][k] = base_pos[i], base_quat[i], q[i], qd[i]
    facts = {robot: _joint_facts(art, order) for robot, (art, _, order, *_) in zip(robots, handles, strict=True)}
    facts["solver"] = _solver_facts()
    info = {"model": facts, "build_s": t_build, "step_s": time.perf_counter() - t1, "steps": n, "num_envs": num_envs}
    sim_utils.SimulationContext.clear_instance()
    return out, info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("programs", help="the MuJoCo half's .npz (dexwheel.isaaclab.mujoco_reference)")
    parser.add_argument("out", help="the .npz to write")
    parser.add_argument("--group", required=True, choices=list(scenarios.GROUPS))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--isaac-pd-split", action="store_true", help="Isaac Lab's own kp/kd split, not one motor")
    args = parser.parse_args()
    progs, _, _ = scenarios.load(args.programs)
    progs = [p for p in progs if scenarios.group_of(p) == args.group]
    trajectories, info = replay(progs, args.device, motor_pd=not args.isaac_pd_split)
    meta = {"backend": "isaaclab", "device": args.device, "motor_pd": not args.isaac_pd_split, **info}
    scenarios.save(args.out, progs, trajectories, meta)


if __name__ == "__main__":
    main()
