"""Action latency on Isaac Lab (issue 57): the MuJoCo task's ``delay_steps`` in the action terms, the applied
target lagging the policy's action by exactly k control steps (dexwheel.tasks.action_delay on torch)."""

import torch

from dexwheel.isaaclab.episodes import open_task

NUM_ENVS = 2
K = 2


def test_the_wheel_leg_policy_layer_takes_the_action_of_k_steps_ago(isaac_device):
    env = open_task("Dexwheel-Velocity-Flat-Solenopsis-v0", NUM_ENVS, isaac_device, 0, {"actions": {"delay_steps": K}})
    try:
        env.reset(seed=0)
        term = env.unwrapped.action_manager.get_term("joints")
        actions = [torch.rand(NUM_ENVS, 8, device=env.unwrapped.device) * 2 - 1 for _ in range(5)]
        for t, a in enumerate(actions):
            env.step(a)
            expected = actions[t - K] if t >= K else torch.zeros_like(a)  # the stance, wheels still, until then
            wheels = term.processed_actions[:, 4:]
            scale = float(term._scale[4])
            assert torch.allclose(wheels.double(), expected[:, 4:].double() * scale, atol=1e-5), t
            assert torch.equal(term.raw_actions, a)  # what the policy gave is what the terms read
    finally:
        env.close()


def test_the_hand_maps_the_action_of_k_steps_ago(isaac_device):
    overrides = {"actions": {"delay_steps": K, "kind": "nominal"}, "composer": {"layers": ["policy"]}}
    env = open_task("Dexwheel-HandPose-G20Left-v0", NUM_ENVS, isaac_device, 0, overrides)
    try:
        env.reset(seed=0)
        term = env.unwrapped.action_manager.get_term("joint_targets")
        low, high = term.bounds
        start = term.processed_actions.clone()
        actions = [(low + (high - low) * torch.rand(NUM_ENVS, len(low), dtype=torch.float64)).float() for _ in range(5)]
        for t, a in enumerate(actions):
            env.step(a)
            expected = actions[t - K].double() if t >= K else start  # the hold action: the start pose
            assert torch.allclose(term.processed_actions, expected, atol=1e-6), t
    finally:
        env.close()
