"""The G20's object tasks (``G20Rotate-v0``, ``G20RotateZ-v0``, ``G20Reorient-v0``): config and term tables (:mod:`.config`), the scene
(:mod:`.scene`), the grasp cache (:mod:`.grasps` samples it, :mod:`.grasp_cache` stores it), the named terms
(:mod:`.rewards`, :mod:`.observations`, :mod:`.terminations`, :mod:`.events`) and the batched task (:mod:`.task`)."""

from dexwheel.tasks.registry import GoldenSpec, TaskRecord, TrainBudget, register_task

_ROTATE, _ROTATE_Z, _REORIENT = "G20Rotate-v0", "G20RotateZ-v0", "G20Reorient-v0"
_COMMON = {
    "family": "hand",
    "task_class": "dexwheel.tasks.in_hand.task:InHandTask",
    "make_config": "dexwheel.tasks.in_hand.config:make_cfg",
    "env": "dexwheel.envs.g20_in_hand:G20InHandEnv",
    "vector_env": "dexwheel.envs.g20_in_hand:G20InHandVectorEnv",
    "metrics": "dexwheel.rl.metrics:InHandMetrics",
    # PD only (a hard-written pose has no contact forces), the delta mapping (HORA's and the LEAP hand's)
    "groups": {"drive": "pd", "collision": "off", "action": "delta"},
    "isaaclab_cfg": "dexwheel.isaaclab.tasks.in_hand.config:InHandEnvCfg",
    "bridge": True,  # its policies read proprioception only: the policy node plays them
    # 39 minutes with algo=rsl_ppo (docs/results.md#g20-in-hand-rotation)
    "train": TrainBudget(
        total_timesteps=10_000_000,
        num_envs=128,
        steps_per_env=32,
        eval_every_steps=2_000_000,
        eval_episodes=10,
        checkpoint_every_steps=2_000_000,
    ),
}

# a free object in contact with the fingers, drops and their resets from the grasp cache, goals; both hands, a vector env
register_task(TaskRecord(
    name="in_hand_rotate",
    summary="roll a capsule lying across the fingers about the flexion axis without dropping it",
    envs={"g20_left": _ROTATE, "g20_right": _ROTATE},
    config="dexwheel.tasks.in_hand.config:rotate_cfg",
    protocol="rotation",
    isaaclab={"g20_left": "Dexwheel-InHand-Rotate-G20Left-v0", "g20_right": "Dexwheel-InHand-Rotate-G20Right-v0"},
    golden=(
        GoldenSpec("g20_left_rotate_delta_random", _ROTATE, "random", 150, {"episode_length_s": 3.0}),
        GoldenSpec("g20_right_rotate_normalized_random", _ROTATE, "random", 100,
                   {"hand": "right", "actions": "normalized", "episode_length_s": 2.0}),
    ),
    **_COMMON,
))  # fmt: skip

register_task(TaskRecord(
    name="in_hand_rotate_z",
    summary="spin the cube about the palm normal without dropping it (the hand's weakest axis)",
    envs={"g20_left": _ROTATE_Z, "g20_right": _ROTATE_Z},
    config="dexwheel.tasks.in_hand.config:rotate_z_cfg",
    protocol="rotation",
    isaaclab={"g20_left": "Dexwheel-InHand-RotateZ-G20Left-v0", "g20_right": "Dexwheel-InHand-RotateZ-G20Right-v0"},
    **_COMMON,
))  # fmt: skip

register_task(TaskRecord(
    name="in_hand_reorient",
    summary="turn the object to a goal orientation, a new goal on each success",
    envs={"g20_left": _REORIENT, "g20_right": _REORIENT},
    config="dexwheel.tasks.in_hand.config:reorient_cfg",
    protocol="reorient",
    isaaclab={"g20_left": "Dexwheel-InHand-Reorient-G20Left-v0", "g20_right": "Dexwheel-InHand-Reorient-G20Right-v0"},
    golden=(
        GoldenSpec("g20_left_reorient_vector_sdk255_random", _REORIENT, "random", 100,
                   {"actions": "sdk255", "episode_length_s": 2.0}, num_envs=2),
    ),
    **_COMMON,
))  # fmt: skip
