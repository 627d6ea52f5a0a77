"""Gymnasium environments of dexwheel and their registration."""

from __future__ import annotations

from gymnasium.envs.registration import register, registry


def register_envs() -> None:
    """Register the dexwheel ids (idempotent): single envs and native vector envs."""
    specs = {
        "G20Hand-v0": ("dexwheel.envs.g20_hand:G20HandEnv", "dexwheel.envs.g20_vector:G20HandVectorEnv", {}, 250),
        # the in-hand tasks (dexwheel.tasks.in_hand): they truncate at their own episode_length_s
        "G20Rotate-v0": (
            "dexwheel.envs.g20_in_hand:G20InHandEnv",
            "dexwheel.envs.g20_in_hand:G20InHandVectorEnv",
            {"task": "rotate"},
            None,
        ),  # fmt: skip
        "G20RotateZ-v0": (
            "dexwheel.envs.g20_in_hand:G20InHandEnv",
            "dexwheel.envs.g20_in_hand:G20InHandVectorEnv",
            {"task": "rotate_z"},
            None,
        ),  # fmt: skip
        "G20Reorient-v0": (
            "dexwheel.envs.g20_in_hand:G20InHandEnv",
            "dexwheel.envs.g20_in_hand:G20InHandVectorEnv",
            {"task": "reorient"},
            None,
        ),  # fmt: skip
        "Solenopsis-v0": (
            "dexwheel.envs.wheel_leg:WheelLegEnv",
            "dexwheel.envs.wheel_leg_vector:WheelLegVectorEnv",
            {"robot": "solenopsis"},
            None,  # the env truncates at its own episode_length_s
        ),
        "M20Legacy-v0": (
            "dexwheel.envs.wheel_leg:WheelLegEnv",
            "dexwheel.envs.wheel_leg_vector:WheelLegVectorEnv",
            {"robot": "m20_legacy"},
            None,
        ),
        # the velocity task on the terrain grid (dexwheel.tasks.velocity.rough)
        "Solenopsis-Rough-v0": (
            "dexwheel.envs.wheel_leg:WheelLegRoughEnv",
            "dexwheel.envs.wheel_leg_vector:WheelLegRoughVectorEnv",
            {"robot": "solenopsis"},
            None,
        ),
        "M20Legacy-Rough-v0": (
            "dexwheel.envs.wheel_leg:WheelLegRoughEnv",
            "dexwheel.envs.wheel_leg_vector:WheelLegRoughVectorEnv",
            {"robot": "m20_legacy"},
            None,
        ),
    }
    for env_id, (entry, vector_entry, kwargs, max_steps) in specs.items():
        if env_id not in registry:
            register(
                id=env_id,
                entry_point=entry,
                vector_entry_point=vector_entry,
                kwargs=kwargs,
                max_episode_steps=max_steps,  # G20: 250 control steps = 5 s at 50 Hz
            )
