"""Velocity tracking for the wheel-leg robots: config and term tables (:mod:`.config`; on terrain :mod:`.rough`), the
named terms (:mod:`.rewards`, :mod:`.observations`, :mod:`.terminations`, :mod:`.events`), the compiled loops they share
(:mod:`.kernels`) and the batched task (:mod:`.task`). Two tasks: ``velocity`` (``Solenopsis-v0``, ``M20Legacy-v0``)
and ``velocity_rough`` (``Solenopsis-Rough-v0``, ``M20Legacy-Rough-v0``)."""

from dexwheel.tasks.registry import GoldenSpec, TaskRecord, TrainBudget, register_task
from dexwheel.terrain.config import ROUGH_SUB_TERRAINS

_SOL, _M20, _SOL_ROUGH, _M20_ROUGH = "Solenopsis-v0", "M20Legacy-v0", "Solenopsis-Rough-v0", "M20Legacy-Rough-v0"
_PUSHES = {"enabled": True, "push_interval_s": (1.0, 1.5)}  # a push every 1-1.5 s, so a short run has several
_SHORT_EPISODES = {"episode_length_s": 2.0}  # so the vector cases cross autoresets
#: One tile, a 0.10 m deep pit with a 2 m floor: the robot spawns in it and drives into its rim.
_PIT_010 = {
    "num_rows": 1,
    "num_cols": 1,
    "curriculum": False,
    "sub_terrains": {
        **{name: {"proportion": 0.0} for name in ROUGH_SUB_TERRAINS if name != "pit"},
        "pit": {"proportion": 1.0, "height_range": [0.10, 0.10], "platform_width": 2.0},
    },
}
_COMMON = {
    "family": "wheel_leg",
    "task_class": "dexwheel.tasks.velocity.task:WheelLegTask",
    "make_config": "dexwheel.tasks.velocity.config:make_cfg",
    "env": "dexwheel.envs.wheel_leg:WheelLegEnv",
    "vector_env": "dexwheel.envs.wheel_leg_vector:WheelLegVectorEnv",
    "isaaclab_cfg": "dexwheel.isaaclab.tasks.velocity.config:VelocityEnvCfg",
    "protocol": "steps",
}

register_task(TaskRecord(
    name="velocity",
    summary="track a forward velocity and yaw rate on flat ground",
    envs={"solenopsis": _SOL, "m20_legacy": _M20},
    config="dexwheel.tasks.velocity.config:velocity_cfg",
    metrics="dexwheel.rl.metrics:VelocityTrackingMetrics",
    # the fewest steps that met every target on seeds 0-2 (docs/notes/2026-12-training-time.md)
    train=TrainBudget(total_timesteps=2_500_000, num_envs=128, steps_per_env=32, eval_every_steps=500_000,
                      eval_episodes=5, checkpoint_every_steps=1_000_000),
    isaaclab={"solenopsis": "Dexwheel-Velocity-Flat-Solenopsis-v0", "m20_legacy": "Dexwheel-Velocity-Flat-M20Legacy-v0"},
    golden=(
        GoldenSpec("solenopsis_drive_turn", _SOL, "drive_turn", 300),
        GoldenSpec("solenopsis_random", _SOL, "random", 300),
        GoldenSpec("solenopsis_domain_rand_pushes", _SOL, "drive_turn", 300, {"domain_rand": _PUSHES}),
        GoldenSpec("m20_legacy_drive_turn", _M20, "drive_turn", 300),
        GoldenSpec("m20_legacy_domain_rand_random", _M20, "random", 300, {"domain_rand": _PUSHES}),
        GoldenSpec("solenopsis_vector_random", _SOL, "random", 200, _SHORT_EPISODES, num_envs=3),
        GoldenSpec("m20_legacy_vector_domain_rand", _M20, "drive_turn", 200, {**_SHORT_EPISODES, "domain_rand": _PUSHES},
                   num_envs=3),
    ),
    **_COMMON,
))  # fmt: skip

register_task(TaskRecord(
    name="velocity_rough",
    summary="the velocity task on the terrain grid: height scan, terrain curriculum, out-of-bounds termination",
    envs={"solenopsis": _SOL_ROUGH, "m20_legacy": _M20_ROUGH},
    config="dexwheel.tasks.velocity.rough:rough_cfg",
    metrics="dexwheel.rl.metrics:RoughTrackingMetrics",
    # ~7x the flat run's steps: ~156 episodes of 20 s per env, the curriculum's 6 levels need several each
    train=TrainBudget(total_timesteps=20_000_000, num_envs=128, steps_per_env=32, eval_every_steps=2_000_000,
                      eval_episodes=5, checkpoint_every_steps=2_000_000),
    isaaclab={"solenopsis": "Dexwheel-Velocity-Rough-Solenopsis-v0",
              "m20_legacy": "Dexwheel-Velocity-Rough-M20Legacy-v0"},
    # the generated grid, the height scan, the spawn on the tile and the curriculum's moves at the resets (short
    # episodes, so a short run crosses several); single and vector; the wheels against a 0.10 m pit's rim
    golden=(
        GoldenSpec("solenopsis_rough_drive_turn", _SOL_ROUGH, "drive_turn", 240, _SHORT_EPISODES, seed=1),
        GoldenSpec("solenopsis_rough_vector_random", _SOL_ROUGH, "random", 150, _SHORT_EPISODES, num_envs=2),
        GoldenSpec("m20_legacy_rough_random", _M20_ROUGH, "random", 120, _SHORT_EPISODES),
        GoldenSpec("solenopsis_rough_pit_edge", _SOL_ROUGH, "drive_forward", 240,
                   {"terrain": _PIT_010, "episode_length_s": 5.0}),
    ),
    **_COMMON,
))  # fmt: skip
