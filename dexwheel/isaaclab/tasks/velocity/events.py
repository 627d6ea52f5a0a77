"""Event terms of the wheel-leg task (the MuJoCo task's, :mod:`dexwheel.tasks.velocity.events`): the start pose,
the domain randomisation and the start heading on terrain."""

from __future__ import annotations

import torch
import warp as wp
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import ManagerTermBase, SceneEntityCfg

from dexwheel.isaaclab.tasks.terms import ROBOT, env_index
from dexwheel.isaaclab.tasks.velocity.action import WheelLegComposerAction
from dexwheel.isaaclab.tasks.velocity.observations import model_params
from dexwheel.isaaclab.tasks.velocity.terrain import scene_terrain


def reset_start_pose(env: ManagerBasedRLEnv, env_ids, knees: list[float], height_offset: float, noise: float,
                     robot: str, asset_cfg: SceneEntityCfg = ROBOT) -> None:  # fmt: skip
    """The MuJoCo task's start pose with its ``reset_joints_and_base`` noise: knees at ``knees`` (the settled
    stance) plus uniform +-``noise`` rad, the base level at the env origin at the height that puts the lowest
    wheel on the ground for those knees (``leg_heights(knees).max() + height_offset`` + the 0.5 mm drop), its
    6-D velocity uniform in +-``noise``; every other joint at 0, at rest (``asset_cfg.joint_ids``: the knees)."""
    from dexwheel.robots.wheel_leg import PARAMS, START_DROP_M

    asset = env.scene[asset_cfg.name]
    ids = env_index(env_ids, env.num_envs, env.device)
    u = 2.0 * torch.rand(len(ids), len(knees) + 6, device=env.device) - 1.0 if noise > 0 else None
    q = torch.tensor(knees, device=env.device, dtype=torch.float64).repeat(len(ids), 1)
    vel = torch.zeros(len(ids), 6, device=env.device)
    if u is not None:
        q = q + noise * u[:, : len(knees)].double()
        vel = noise * u[:, len(knees) :]
    z = PARAMS[robot].leg_heights(q).max(dim=1).values + height_offset + START_DROP_M
    pose = torch.zeros(len(ids), 7, device=env.device)
    pose[:, :3] = env.scene.env_origins[ids]
    pose[:, 2] += z.float()
    pose[:, 6] = 1.0  # x, y, z, w
    envs = ids.to(torch.int32)
    asset.write_root_link_pose_to_sim_index(root_pose=pose, env_ids=envs)
    asset.write_root_link_velocity_to_sim_index(root_velocity=vel, env_ids=envs)  # the base origin's, as MuJoCo's qvel
    joint_pos = asset.data.default_joint_pos.torch[ids].clone()
    joint_pos[:, asset_cfg.joint_ids] = q.float()
    asset.write_joint_position_to_sim_index(position=joint_pos, env_ids=envs)
    asset.write_joint_velocity_to_sim_index(velocity=torch.zeros_like(joint_pos), env_ids=envs)


class randomize_model(ManagerTermBase):
    """The MuJoCo task's ``randomize_model`` event: per env and reset, one draw of the MuJoCo randomiser's
    count and layout (:meth:`dexwheel.sim.randomization.ModelRandomizer.draw`: friction, base mass added, base
    CoM offset, link mass factors, kp and kd factors), uniform over the ``domain_rand`` ranges (nominal for a
    range set to None), applied from the nominal model:

    * friction: every collision shape of the robot (the ground plane is shared by all envs, so it is set to
      the range's low end: MuJoCo takes the larger of two geoms' friction, so the robot's value decides);
    * base mass + the draw, its inertia scaled with it; knee and wheel link masses and inertias times their
      factors; the base CoM shifted by the offset (Newton's body CoM);
    * kp and kd factors: the action term's :meth:`WheelLegComposerAction.set_gain_scales`.

    The draw is recorded (:func:`model_params`) for the privileged observations.
    """

    def __init__(self, cfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        from dexwheel.robots.wheel_leg import BASE_BODY, LINKS

        p = cfg.params
        self.asset = env.scene[p.get("asset_name", "robot")]
        base, _ = self.asset.find_bodies([BASE_BODY], preserve_order=True)
        links, _ = self.asset.find_bodies(list(LINKS), preserve_order=True)
        self.base, self.links = base[0], torch.tensor(links, device=env.device).long()
        self.bodies = torch.tensor([self.base, *links], device=env.device).long()
        model = env.sim.physics_manager.get_model()
        self._mu = self.asset._root_view.get_attribute("shape_material_mu", model)[:, 0]
        self._nominal = None  # masses, inertias, CoMs at the first call (the nominal model)

    def __call__(self, env: ManagerBasedRLEnv, env_ids, friction, base_mass_add, link_mass_scale, base_com_offset,
                 kp_scale, kd_scale, nominal_friction: float, action_name: str, asset_name: str = "robot") -> None:  # fmt: skip
        from newton import ModelFlags

        data = self.asset.data
        if self._nominal is None:
            self._nominal = (data.body_mass.torch.clone(), data.body_inertia.torch.clone(),
                             data.body_com_pos_b.torch.clone())  # fmt: skip
        mass0, inertia0, com0 = self._nominal
        ids = env_index(env_ids, env.num_envs, env.device)
        term: WheelLegComposerAction = env.action_manager.get_term(action_name)
        n, nl, nj = len(ids), len(self.links), term.kp_scale.shape[1]
        u = torch.rand(n, 5 + nl + 2 * nj, device=env.device, dtype=torch.float64)

        def lerp(x, r, nominal):
            return torch.full_like(x, nominal) if r is None else r[0] + (r[1] - r[0]) * x

        mu = lerp(u[:, 0], friction, nominal_friction)
        add = lerp(u[:, 1], base_mass_add, 0.0)
        com = (2.0 * u[:, 2:5] - 1.0) * (0.0 if base_com_offset is None else base_com_offset)
        scale = lerp(u[:, 5 : 5 + nl], link_mass_scale, 1.0)
        kp = lerp(u[:, 5 + nl : 5 + nl + nj], kp_scale, 1.0)
        kd = lerp(u[:, 5 + nl + nj :], kd_scale, 1.0)

        rows = ids[:, None]
        ratio = torch.ones(n, len(self.bodies), device=env.device, dtype=torch.float64)
        ratio[:, 0] = (mass0[ids, self.base].double() + add) / mass0[ids, self.base].double()
        ratio[:, 1:] = scale
        bodies = self.bodies
        masses = (mass0[rows, bodies].double() * ratio).float()
        inertias = (inertia0[rows, bodies].double() * ratio[..., None]).float()
        self.asset.set_masses_index(masses=masses, body_ids=bodies, env_ids=ids)
        self.asset.set_inertias_index(inertias=inertias, body_ids=bodies, env_ids=ids)
        coms = (com0[ids, self.base].double() + com)[:, None].float()  # (n, 1, 3)
        self.asset.set_coms_index(coms=coms, body_ids=[self.base], env_ids=ids)
        wp.to_torch(self._mu)[ids] = mu.float()[:, None]
        env.sim.physics_manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
        term.set_gain_scales(ids, kp.float(), kd.float())
        model_params(env)[ids] = torch.cat([(mu - nominal_friction)[:, None], add[:, None], com, scale - 1.0],
                                           dim=1).float()  # fmt: skip


def reset_base_on_terrain(env: ManagerBasedRLEnv, env_ids, asset_cfg: SceneEntityCfg = ROBOT) -> None:
    """The MuJoCo task's ``reset_base_on_terrain``: the start pose turned to a uniform random heading about
    world z (the base origin fixed). The tile's origin is the env origin here, where :func:`reset_start_pose`
    already put the base (x, y and the ground height), so the heading is what is left to do."""
    scene_terrain(env, "events.reset_base_on_terrain")
    asset = env.scene[asset_cfg.name]
    ids = env_index(env_ids, env.num_envs, env.device)
    pose = torch.cat([asset.data.root_link_pos_w.torch[ids], asset.data.root_link_quat_w.torch[ids]], dim=1)
    yaw = (2.0 * torch.rand(len(ids), device=env.device) - 1.0) * torch.pi
    cw, sz = torch.cos(yaw / 2), torch.sin(yaw / 2)  # (0, 0, sz, cw) (xyzw) times the start orientation
    x0, y0, z0, w0 = pose[:, 3].clone(), pose[:, 4].clone(), pose[:, 5].clone(), pose[:, 6].clone()
    pose[:, 3], pose[:, 4] = cw * x0 - sz * y0, cw * y0 + sz * x0
    pose[:, 5], pose[:, 6] = cw * z0 + sz * w0, cw * w0 - sz * z0
    asset.write_root_link_pose_to_sim_index(root_pose=pose, env_ids=ids.to(torch.int32))
