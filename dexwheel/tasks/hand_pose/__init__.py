"""Goal-pose tracking for the LinkerHand G20 (``G20Hand-v0``): config and term tables (:mod:`.config`), the
action term (:mod:`.action`) and the composer path (:mod:`.action_path`), the named terms (:mod:`.rewards`,
:mod:`.observations`, :mod:`.terminations`, :mod:`.events`), the compiled metrics (:mod:`.kernels`) and the
batched task (:mod:`.task`)."""

from dexwheel.tasks.registry import GoldenSpec, TaskRecord, TrainBudget, register_task

_G20 = "G20Hand-v0"

register_task(TaskRecord(
    name="hand_pose",
    family="hand",
    summary="reach a goal hand pose (the spec's presets and random collision-free poses)",
    envs={"g20_left": _G20, "g20_right": _G20},
    config="dexwheel.tasks.hand_pose.config:hand_pose_cfg",
    task_class="dexwheel.tasks.hand_pose.task:G20HandTask",
    make_config="dexwheel.tasks.hand_pose.config:make_cfg",
    env="dexwheel.envs.g20_hand:G20HandEnv",
    vector_env="dexwheel.envs.g20_vector:G20HandVectorEnv",
    metrics="dexwheel.rl.metrics:HandPoseMetrics",
    train=TrainBudget(total_timesteps=2_500_000, num_envs=64, steps_per_env=64, eval_every_steps=250_000,
                      eval_episodes=10, checkpoint_every_steps=500_000),
    isaaclab={"g20_left": "Dexwheel-HandPose-G20Left-v0", "g20_right": "Dexwheel-HandPose-G20Right-v0"},
    isaaclab_cfg="dexwheel.isaaclab.tasks.hand_pose.config:HandPoseEnvCfg",
    # hard-write (projection on and off), track_test, PD; every action mapping; both hands; single and vector
    golden=(
        GoldenSpec("g20_left_hard_write_normalized_random", _G20, "random", 200),
        GoldenSpec("g20_left_hard_write_sdk255_presets", _G20, "presets", 200, {"actions": "sdk255"}),
        GoldenSpec("g20_left_hard_write_delta_fist", _G20, "fist", 200, {"actions": "delta", "goal_mode": "presets"}),
        GoldenSpec("g20_left_no_projection_nominal_presets", _G20, "presets", 200,
                   {"actions": "nominal", "collision": {"projection": False}}),
        GoldenSpec("g20_left_track_test_sdk255_presets", _G20, "presets", 200,
                   {"actions": "sdk255", "drive": {"track_test": True}}),
        GoldenSpec("g20_left_pd_normalized_random", _G20, "random", 200, {"drive": "pd"}),
        GoldenSpec("g20_left_pd_sdk255_presets", _G20, "presets", 200, {"drive": "pd", "actions": "sdk255"}),
        GoldenSpec("g20_right_hard_write_nominal_random", _G20, "random", 200, {"hand": "right", "actions": "nominal"}),
        GoldenSpec("g20_right_pd_delta_fist", _G20, "fist", 200, {"hand": "right", "drive": "pd", "actions": "delta"}),
        GoldenSpec("g20_left_hard_write_vector_random", _G20, "random", 150,
                   {"max_episode_steps": 60, "goal_switch_steps": 25}, num_envs=3),
        GoldenSpec("g20_left_pd_vector_sdk255_random", _G20, "random", 150,
                   {"drive": "pd", "actions": "sdk255", "max_episode_steps": 60}, num_envs=3),
    ),
))  # fmt: skip
