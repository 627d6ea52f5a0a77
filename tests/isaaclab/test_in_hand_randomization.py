"""The in-hand tasks' domain randomisation on Isaac Lab (issue 58): the MuJoCo task's event terms, each env its own
draw per episode (an env of its own: the task's module-scoped envs stay open in tests/isaaclab/test_in_hand_task.py)."""

import mujoco
import pytest
import torch

from dexwheel.isaaclab.episodes import open_task
from dexwheel.isaaclab.tasks import InHandRotateG20LeftEnvCfg
from dexwheel.robots.g20 import ACTIVE_JOINTS, ACTUATOR_KP, ACTUATOR_KV
from dexwheel.tasks.in_hand.objects import ObjectSpec
from dexwheel.tasks.in_hand.physics import PALM_FRICTION

NUM_ENVS = 4


def test_the_randomisation_terms_draw_each_env_its_own_physics(isaac_device):
    """The MuJoCo task's four event terms on Isaac Lab: the object's mass and size (its shape, inertia and grasp with
    them), the object's friction with every hand shape's scaled alike (the ``pads`` model's ratio kept: the pads at
    the object's, the rest at ``palm_friction`` times it), each joint's PD gains times a factor; in the solver's
    model after the reset. On ``G20RotateZ-v0``'s cube (the rolling capsule has a length of its own: a size event
    is refused for it, on both backends)."""
    import warp as wp
    from isaaclab_newton.physics import NewtonManager

    E = "dexwheel.tasks.in_hand.events:"
    events = {"mass": {"func": E + "randomize_object_mass", "params": {"mass_range": [0.05, 0.3]}},
              "size": {"func": E + "randomize_object_size", "params": {"sizes": [0.05, 0.07]}},
              "friction": {"func": E + "randomize_friction"},  # its default range: 0.5-1.5
              "gains": {"func": E + "randomize_pd_gains", "params": {"kp_scale": [0.5, 0.6], "kd_scale": [1.5, 1.6]}}}  # fmt: skip
    with pytest.raises(ValueError, match=r"events\.size: scales the whole object; the capsule's own length"):
        InHandRotateG20LeftEnvCfg(task_overrides={"events": events})
    env = open_task("Dexwheel-InHand-RotateZ-G20Left-v0", NUM_ENVS, isaac_device, 0, {"events": events})
    try:
        env.reset(seed=0)
        env.step(torch.zeros(NUM_ENVS, len(ACTIVE_JOINTS)))  # the model changes reach the solver at a step
        m = NewtonManager._solver.mjw_model
        mass = wp.to_torch(m.body_mass)[:, -1].cpu()  # the object: the last body
        inertia = wp.to_torch(m.body_inertia)[:, -1, 0].cpu()
        assert ((mass >= 0.05) & (mass <= 0.3)).all() and len(set(mass.tolist())) == NUM_ENVS
        command = env.unwrapped.command_manager.get_term("object_goal")
        size = command.object_size.cpu()
        assert all(min(abs(v - 0.05), abs(v - 0.07)) < 1e-6 for v in size.tolist())  # float32
        assert torch.allclose(mass, command.object_mass.cpu())
        assert torch.allclose(inertia, mass * size**2 / 6, rtol=1e-4)  # a uniform cube of that size and mass
        half = wp.to_torch(m.geom_size)[:, -1].cpu()  # the object's collision box, spawned at 7 cm
        assert torch.allclose(half, (size / 2)[:, None].expand(-1, 3), atol=1e-7)
        # each env's grasp is one of its size's cache
        from dexwheel.tasks.in_hand import grasp_cache

        for i, s in enumerate(size.tolist()):
            poses = grasp_cache.load_for("left", ObjectSpec(size=round(s, 3))).object_pose[:, :3]
            gap = (torch.as_tensor(poses) - command.object_start[i].cpu().double()).norm(dim=1).min()
            assert gap < 1e-5, (i, s)
        cpu = NewtonManager._solver.mj_model
        names = [mujoco.mj_id2name(cpu, mujoco.mjtObj.mjOBJ_GEOM, g) or "" for g in range(cpu.ngeom)]
        shapes = [g for g in range(cpu.ngeom) if cpu.geom_contype[g] or cpu.geom_conaffinity[g]]
        obj = [g for g in shapes if cpu.geom_bodyid[g] == cpu.nbody - 1]
        pads = [g for g in shapes if "_pad_col" in names[g]]
        rest = sorted(set(shapes) - set(obj) - set(pads))
        assert len(obj) == 1 and len(pads) == 5 and len(rest) > 40
        mu = wp.to_torch(m.geom_friction)[:, :, 0].cpu().double()
        drawn = mu[:, obj[0]]
        assert ((drawn >= 0.5) & (drawn <= 1.5)).all() and len(set(drawn.tolist())) == NUM_ENVS
        assert torch.allclose(mu[:, pads], drawn[:, None].expand(-1, 5), rtol=1e-6)  # the pads grip as the object
        palm = PALM_FRICTION / ObjectSpec().friction  # the rest slide: palm_friction over the nominal, scaled alike
        assert torch.allclose(mu[:, rest], (drawn * palm)[:, None].expand(-1, len(rest)), rtol=1e-5)
        gain, bias = wp.to_torch(m.actuator_gainprm)[:, :, 0].cpu(), wp.to_torch(m.actuator_biasprm)[:, :, :3].cpu()
        kp, kd = ACTUATOR_KP, ACTUATOR_KV
        assert ((gain >= kp * 0.5 - 1e-3) & (gain <= kp * 0.6 + 1e-3)).all()
        assert torch.allclose(bias[:, :, 1], -gain)
        assert ((-bias[:, :, 2] >= kd * 1.5 - 1e-4) & (-bias[:, :, 2] <= kd * 1.6 + 1e-4)).all()
        assert len(set(gain.flatten().tolist())) == gain.numel()  # per env and joint
    finally:
        env.close()
