"""The in-hand tasks' reset events on Isaac Lab: a grasp of the cache (the MuJoCo task's ``reset_from_grasps``) and the
domain randomisations of the object's size and mass and of the friction (its ``randomize_object_size``,
``randomize_object_mass``, ``randomize_friction``); the PD gains' is Isaac Lab's own ``randomize_actuator_gains``
(:data:`dexwheel.isaaclab.tasks.in_hand.config.EVENT_MAP`).

The object's physics per env lives in the command (:class:`.InHandCommand`: ``object_size``, ``object_mass``) and is
written by one function (:func:`apply_object_physics`), as the MuJoCo task's ``apply_physics``: its collision shape
scaled with its size, its mass, and its inertia scaled with its mass and the square of its size, whichever event
drew them and in whichever order.
"""

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
from dexwheel.tasks.in_hand.physics import InHandPhysicsCfg


class _ObjectPhysics:
    """The object as spawned (its shape's scale, mass and inertia: the scene's ``spawn_size``), to scale from."""

    def __init__(self, env: ManagerBasedRLEnv) -> None:
        obj = env.scene["object"]
        self.manager = env.sim.physics_manager
        self.scale = wp.to_torch(obj._root_view.get_attribute("shape_scale", self.manager.get_model()))
        self.scale0 = self.scale.clone()
        self.mass0 = obj.data.body_mass.torch.clone()
        self.inertia0 = obj.data.body_inertia.torch.clone()


def apply_object_physics(env: ManagerBasedRLEnv, ids: torch.Tensor, command_name: str) -> None:
    """Write envs ``ids``' object size and mass (the command's) into the simulation, from the spawned object's."""
    command: InHandCommand = env.command_manager.get_term(command_name)
    if getattr(env, "_dexwheel_object_physics", None) is None:
        env._dexwheel_object_physics = _ObjectPhysics(env)
    p: _ObjectPhysics = env._dexwheel_object_physics
    obj, envs = env.scene["object"], ids.to(torch.int32)
    ratio = (command.object_size[ids] / command.cfg.spawn_size).to(p.scale.device)
    p.scale[ids.to(p.scale.device)] = p.scale0[ids.to(p.scale.device)] * ratio.view(-1, *([1] * (p.scale.dim() - 1)))
    p.manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
    mass = command.object_mass[ids].view(-1, 1)
    obj.set_masses_index(masses=mass.float(), env_ids=envs)
    factor = (mass / p.mass0[ids]) * (command.object_size[ids].view(-1, 1) / command.cfg.spawn_size) ** 2
    obj.set_inertias_index(inertias=(p.inertia0[ids] * factor[..., None]).float(), env_ids=envs)


class reset_from_grasps(ManagerTermBase):
    """A grasp of the cache, uniformly (HORA's and the LEAP hand's reset): the hand at rest at its joints (mimic joints
    completed), its PD targets there, the object at its pose, at rest; the command keeps where the object starts.
    The cache is the env's object size's (the command's ``object_size``). Params: ``hand``, ``object`` (an
    :class:`~dexwheel.tasks.in_hand.objects.ObjectSpec` as a dict), ``path`` (the config's ``grasps``), ``sizes``
    (every size an event may draw, each its own cache), the action and command terms' names. The caches are the
    MuJoCo task's, read and checked once (:func:`dexwheel.tasks.in_hand.grasp_cache.load_for`); a grasp is drawn from
    torch's generator (the same distribution as MuJoCo's, not the same draws)."""

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        p = cfg.params
        obj, physics = ObjectSpec(**p["object"]), InHandPhysicsCfg(**p["physics"])
        caches = {float(obj.size): grasp_cache.load_for(p["hand"], obj, p["path"], physics)}
        for size in p["sizes"]:
            other = ObjectSpec(**{**p["object"], "size": size})
            caches.setdefault(float(size), grasp_cache.load_for(p["hand"], other, physics=physics))
        self.caches = {}
        for size, cache in caches.items():
            pose = torch.as_tensor(cache.object_pose, device=env.device, dtype=torch.float32)
            joints = torch.as_tensor(cache.joints, device=env.device, dtype=torch.float64)
            self.caches[size] = (joints, pose[:, :3], pose[:, [4, 5, 6, 3]])  # w x y z -> x y z w

    def __call__(self, env: ManagerBasedRLEnv, env_ids, hand: str, object: dict, path: str | None, sizes: list,
                 physics: dict, action_name: str, command_name: str) -> None:  # fmt: skip
        ids = env_index(env_ids, env.num_envs, env.device)
        command: InHandCommand = env.command_manager.get_term(command_name)
        n, dev = len(ids), env.device
        q0 = torch.zeros(n, 16, device=dev, dtype=torch.float64)
        pos, quat = torch.zeros(n, 3, device=dev), torch.zeros(n, 4, device=dev)
        for size, (joints, positions, orientations) in self.caches.items():
            rows = torch.isclose(command.object_size[ids], torch.tensor(size, device=dev)).nonzero().flatten()
            k = torch.randint(len(joints), (len(rows),), device=dev)
            q0[rows], pos[rows], quat[rows] = joints[k], positions[k], orientations[k]
        write_start(env, ids, q0, pos, quat, action_name, command_name)


def write_start(env: ManagerBasedRLEnv, ids: torch.Tensor, joints: torch.Tensor, pos: torch.Tensor,
                quat_xyzw: torch.Tensor, action_name: str, command_name: str) -> None:  # fmt: skip
    """Envs ``ids`` start from a grasp: the hand at rest at ``joints`` (16 active joints; mimic joints completed), its
    PD targets there, the object at ``pos`` (env frame) and ``quat_xyzw``, at rest; the command keeps where the object
    starts. The reset event's write (:class:`reset_from_grasps`), and a case's chosen grasp after a reset (then the
    action term is reset to the written joints too: its command is the grasp)."""
    command: InHandCommand = env.command_manager.get_term(command_name)
    term: HandPoseAction = env.action_manager.get_term(action_name)
    robot, obj = env.scene["robot"], env.scene["object"]
    n, dev = len(ids), env.device
    full = term.completion.clip_and_complete(joints.to(dev, torch.float64)).float()
    joints_, envs = term._joint_ids, ids.to(torch.int32)
    robot.write_joint_position_to_sim_index(position=full, joint_ids=joints_, env_ids=envs)
    robot.write_joint_velocity_to_sim_index(velocity=torch.zeros_like(full), joint_ids=joints_, env_ids=envs)
    robot.actuators.target_command.set_position_index(value=full, joint_ids=joints_, env_ids=envs)
    root = torch.cat([pos.to(dev) + env.scene.env_origins[ids], quat_xyzw.to(dev)], dim=1).float()
    obj.write_root_pose_to_sim_index(root_pose=root, env_ids=envs)
    obj.write_root_velocity_to_sim_index(root_velocity=torch.zeros(n, 6, device=dev), env_ids=envs)
    command.object_start[ids] = pos.to(dev).float()


def _grasp_term(env: ManagerBasedRLEnv) -> reset_from_grasps:
    """The task's grasp event (a class term: the event manager holds its instance as the config's ``func``)."""
    for cfg in env.event_manager._mode_term_cfgs.get("reset", []):
        if isinstance(cfg.func, reset_from_grasps):
            return cfg.func
    raise RuntimeError("the in-hand task has no reset_from_grasps event")


def randomize_object_size(env: ManagerBasedRLEnv, env_ids, sizes: list, command_name: str) -> None:
    """The object's size (m), one of ``sizes`` uniformly per env, its shape and inertia scaled with it (the mass
    stays), and the episode's start drawn again from that size's cache."""
    ids = env_index(env_ids, env.num_envs, env.device)
    command: InHandCommand = env.command_manager.get_term(command_name)
    choice = torch.as_tensor(sizes, device=env.device, dtype=command.object_size.dtype)
    command.object_size[ids] = choice[torch.randint(len(sizes), (len(ids),), device=env.device)]
    apply_object_physics(env, ids, command_name)
    grasp = _grasp_term(env)
    grasp(env, ids, **grasp.cfg.params)


def randomize_object_mass(env: ManagerBasedRLEnv, env_ids, mass_range: tuple[float, float], command_name: str) -> None:
    """The object's mass (kg), uniform in ``mass_range`` per env (its inertia with it: the same density)."""
    ids = env_index(env_ids, env.num_envs, env.device)
    command: InHandCommand = env.command_manager.get_term(command_name)
    low, high = mass_range
    command.object_mass[ids] = low + (high - low) * torch.rand(len(ids), device=env.device)
    apply_object_physics(env, ids, command_name)


class randomize_friction(ManagerTermBase):
    """The sliding friction of the object and of every hand shape, one value per env uniform in ``friction_range``:
    the object's, every hand shape's scaled by it over the object's nominal friction (the MuJoCo task's
    ``randomize_friction``: the ``pads`` model's pads take the value, its palm and capsules ``palm_friction`` times
    it over the nominal; the ``spec`` model's every shape the value; Isaac Lab's ``randomize_rigid_body_material``
    draws each shape its own)."""

    def __init__(self, cfg: EventTermCfg, env: ManagerBasedRLEnv) -> None:
        super().__init__(cfg, env)
        self._manager = env.sim.physics_manager
        model = self._manager.get_model()
        self._views = [wp.to_torch(env.scene[name]._root_view.get_attribute("shape_material_mu", model)[:, 0])
                       for name in ("robot", "object")]  # fmt: skip
        self._nominal = [view.clone() for view in self._views]  # (envs, shapes) each, as spawned

    def __call__(self, env: ManagerBasedRLEnv, env_ids, friction_range: tuple[float, float]) -> None:
        ids = env_index(env_ids, env.num_envs, env.device)
        low, high = friction_range
        mu = low + (high - low) * torch.rand(len(ids), 1, device=env.device)
        obj_view = self._nominal[1]
        rows = ids.to(obj_view.device)
        scale = mu.to(obj_view.device) / obj_view[rows, :1]  # the object's nominal friction: its one shape's
        for view, nominal in zip(self._views, self._nominal, strict=True):
            view[rows] = nominal[rows] * scale.to(view.device)
        self._manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
