"""The in-hand tasks' reset events: a grasp of the cache (the MuJoCo task's ``reset_from_grasps``) and the friction
randomisation (its ``randomize_friction``); the mass and PD-gain randomisations are Isaac Lab's own terms
(:data:`dexwheel.isaaclab.tasks.in_hand.config.EVENT_MAP`)."""

from __future__ import annotations

import torch
import warp as wp
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import EventTermCfg, ManagerTermBase
from newton import ModelFlags

from dexwheel.isaaclab.tasks.hand_pose.action import HandPoseAction
from dexwheel.isaaclab.tasks.in_hand.commands import InHandCommand
from dexwheel.isaaclab.tasks.terms import env_index
from dexwheel.tasks.in_hand import grasp_cache
from dexwheel.tasks.in_hand.objects import ObjectSpec


class reset_from_grasps(ManagerTermBase):
    """A grasp of the cache, uniformly (HORA's and the LEAP hand's reset): the hand at rest at its joints (mimic joints
    completed), its PD targets there, the object at its pose, at rest; the command keeps where the object starts.
    Params: ``hand``, ``object`` (an :class:`~dexwheel.tasks.in_hand.objects.ObjectSpec` as a dict), ``path`` (the
    config's ``grasps``), the action and command terms' names. The cache is the MuJoCo task's, read and checked
    once (:func:`dexwheel.tasks.in_hand.grasp_cache.load_for`); a grasp is drawn from torch's generator (the same
    distribution as MuJoCo's, not the same draws)."""

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        p = cfg.params
        cache = grasp_cache.load_for(p["hand"], ObjectSpec(**p["object"]), p["path"])
        self.joints = torch.as_tensor(cache.joints, device=env.device, dtype=torch.float64)
        pose = torch.as_tensor(cache.object_pose, device=env.device, dtype=torch.float32)
        self.object_pos, self.object_quat = pose[:, :3], pose[:, [4, 5, 6, 3]]  # w x y z -> x y z w

    def __call__(self, env: ManagerBasedRLEnv, env_ids, hand: str, object: dict, path: str | None, action_name: str,
                 command_name: str) -> None:  # fmt: skip
        ids = env_index(env_ids, env.num_envs, env.device)
        k = torch.randint(len(self.joints), (len(ids),), device=env.device)
        term: HandPoseAction = env.action_manager.get_term(action_name)
        robot, obj = env.scene["robot"], env.scene["object"]
        full = term.completion.clip_and_complete(self.joints[k]).float()
        joints, envs = term._joint_ids, ids.to(torch.int32)
        robot.write_joint_position_to_sim_index(position=full, joint_ids=joints, env_ids=envs)
        robot.write_joint_velocity_to_sim_index(velocity=torch.zeros_like(full), joint_ids=joints, env_ids=envs)
        robot.actuators.target_command.set_position_index(value=full, joint_ids=joints, env_ids=envs)
        pos = self.object_pos[k]
        root = torch.cat([pos + env.scene.env_origins[ids], self.object_quat[k]], dim=1)
        obj.write_root_pose_to_sim_index(root_pose=root, env_ids=envs)
        obj.write_root_velocity_to_sim_index(root_velocity=torch.zeros(len(ids), 6, device=env.device), env_ids=envs)
        command: InHandCommand = env.command_manager.get_term(command_name)
        command.object_start[ids] = pos


class randomize_friction(ManagerTermBase):
    """The sliding friction of the object and of every hand shape, one value per env uniform in ``friction_range``
    (the MuJoCo task's ``randomize_friction``: both sides, since both backends take the larger of two touching
    shapes' values; Isaac Lab's ``randomize_rigid_body_material`` draws each shape its own)."""

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self._manager = env.sim.physics_manager
        model = self._manager.get_model()
        self._views = [env.scene[name]._root_view.get_attribute("shape_material_mu", model)[:, 0]
                       for name in ("robot", "object")]  # fmt: skip

    def __call__(self, env: ManagerBasedRLEnv, env_ids, friction_range: tuple[float, float]) -> None:
        ids = env_index(env_ids, env.num_envs, env.device)
        low, high = friction_range
        mu = low + (high - low) * torch.rand(len(ids), 1, device=env.device)
        for view in self._views:
            friction = wp.to_torch(view)
            friction[ids.to(friction.device)] = mu.to(friction.device).expand(-1, friction.shape[1])
        self._manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
