"""The per-term observation processing (noise, clip, scale, history) on Isaac Lab, from the MuJoCo task's table
(its own module: an Isaac Lab process holds one simulation at a time, and the other G20 tests keep theirs open)."""

import torch

from dexwheel.isaaclab.episodes import open_task
from dexwheel.isaaclab.tasks.hand_pose.config import COMMAND
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS

NUM_ENVS = 4


def test_observation_noise_clip_scale_and_history_are_the_mujoco_entrys(isaac_device):
    """Issue 56: the per-term processing runs on Isaac Lab from the same table (the noise from torch's generator)."""
    overrides = {"observations": {"qvel": {"noise": 0.5, "clip": (-0.2, 0.2)},
                                  "goal": {"history_length": 3, "scale": 2.0}}}  # fmt: skip
    env = open_task("Dexwheel-HandPose-G20Left-v0", NUM_ENVS, isaac_device, 0, overrides)
    try:
        u = env.unwrapped
        policy = u.cfg.observations.policy
        assert policy.enable_corruption and policy.qvel.clip == (-0.2, 0.2) and policy.qvel.noise.n_max == 0.5
        assert policy.goal.history_length == 3 and policy.goal.scale == 2.0 and policy.qpos.noise is None
        dims = [d[0] for d in u.observation_manager.group_obs_term_dim["policy"]]
        assert dims == [len(ALL_JOINTS), len(ALL_JOINTS), 3 * len(ACTIVE_JOINTS), len(ACTIVE_JOINTS)]
        obs, _ = env.reset(seed=0)
        qvel = obs["policy"][:, len(ALL_JOINTS) : 2 * len(ALL_JOINTS)]
        assert qvel.abs().max() <= 0.2 + 1e-6 and qvel.abs().max() > 0.05  # at rest: only the clipped noise
        goal = obs["policy"][:, 2 * len(ALL_JOINTS) : 2 * len(ALL_JOINTS) + 3 * len(ACTIVE_JOINTS)].reshape(
            NUM_ENVS, 3, -1
        )
        assert torch.equal(goal[:, 0], goal[:, 2])  # a reset fills the history with its first frame
        target = u.command_manager.get_command(COMMAND)
        assert torch.allclose(goal[:, 2], 2.0 * target[:, : len(ACTIVE_JOINTS)].to(goal.dtype), atol=1e-6)
    finally:
        env.close()
