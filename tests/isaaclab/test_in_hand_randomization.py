"""The in-hand tasks' domain randomisation on Isaac Lab (issue 58): the MuJoCo task's event terms, each env its own
draw per episode (an env of its own: the task's module-scoped envs stay open in tests/isaaclab/test_in_hand_task.py)."""

import torch

from dexwheel.isaaclab.episodes import open_task
from dexwheel.robots.g20 import ACTIVE_JOINTS, ACTUATOR_KP, ACTUATOR_KV

NUM_ENVS = 4


def test_the_randomisation_terms_draw_each_env_its_own_physics(isaac_device):
    """The MuJoCo task's three event terms on Isaac Lab: the object's mass (its inertia with it), one friction for the
    object and every hand shape, each joint's PD gains times a factor; in the solver's model after the reset."""
    import warp as wp
    from isaaclab_newton.physics import NewtonManager

    E = "dexwheel.tasks.in_hand.events:"
    events = {"mass": {"func": E + "randomize_object_mass", "params": {"mass_range": [0.05, 0.3]}},
              "friction": {"func": E + "randomize_friction"},  # its default range: 0.5-1.5
              "gains": {"func": E + "randomize_pd_gains", "params": {"kp_scale": [0.5, 0.6], "kd_scale": [1.5, 1.6]}}}  # fmt: skip
    env = open_task("Dexwheel-InHand-Rotate-G20Left-v0", NUM_ENVS, isaac_device, 0, {"events": events})
    try:
        env.reset(seed=0)
        env.step(torch.zeros(NUM_ENVS, len(ACTIVE_JOINTS)))  # the model changes reach the solver at a step
        m = NewtonManager._solver.mjw_model
        mass = wp.to_torch(m.body_mass)[:, -1].cpu()  # the object: the last body
        inertia = wp.to_torch(m.body_inertia)[:, -1, 0].cpu()
        assert ((mass >= 0.05) & (mass <= 0.3)).all() and len(set(mass.tolist())) == NUM_ENVS
        assert torch.allclose(inertia, mass * 0.06**2 / 6, rtol=1e-4)  # a uniform 6 cm cube of that mass
        mu = wp.to_torch(m.geom_friction)[:, :, 0].cpu()  # every shape of each world: one value
        assert torch.equal(mu, mu[:, :1].expand_as(mu)) and ((mu >= 0.5) & (mu <= 1.5)).all()
        gain, bias = wp.to_torch(m.actuator_gainprm)[:, :, 0].cpu(), wp.to_torch(m.actuator_biasprm)[:, :, :3].cpu()
        kp, kd = ACTUATOR_KP, ACTUATOR_KV
        assert ((gain >= kp * 0.5 - 1e-3) & (gain <= kp * 0.6 + 1e-3)).all()
        assert torch.allclose(bias[:, :, 1], -gain)
        assert ((-bias[:, :, 2] >= kd * 1.5 - 1e-4) & (-bias[:, :, 2] <= kd * 1.6 + 1e-4)).all()
        assert len(set(gain.flatten().tolist())) == gain.numel()  # per env and joint
    finally:
        env.close()
