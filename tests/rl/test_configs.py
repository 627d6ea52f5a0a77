"""The Hydra tree: every group option composes and builds its env; bad keys and values fail, named."""

from pathlib import Path

import gymnasium as gym
import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ConfigAttributeError

from dexwheel.rl.env_factory import env_kwargs, make_env, physics_only_s
from dexwheel.rl.schema import ConfigError, validate

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
HANDS = ["g20_left", "g20_right"]
WHEEL_LEGS = ["solenopsis", "m20_legacy"]


def cfg(*overrides: str, name: str = "train"):
    with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
        return compose(config_name=name, overrides=list(overrides))


def options(group: str) -> list[str]:
    """A group's options as Hydra finds them: its files, and the registered tasks' options (the ``task`` group)."""
    from hydra.core.global_hydra import GlobalHydra

    from dexwheel.overrides import initialized

    with initialized():
        return sorted(GlobalHydra.instance().config_loader().get_group_options(group))


@pytest.mark.slow
def test_choosing_a_robot_pulls_its_task_defaults():
    hand, wheel = cfg("robot=g20_left"), cfg("robot=solenopsis")
    assert (hand.task.name, hand.drive.name, hand.action.name) == ("hand_pose", "hard_write", "normalized")
    assert (wheel.task.name, wheel.drive.name, wheel.action.name) == ("velocity", "pd", "wheel_leg")
    assert wheel.train.total_timesteps == wheel.task.train.total_timesteps
    assert cfg().robot.name == "solenopsis"  # the default robot
    # each robot's learner: rsl_ppo (mirrored batches) for the wheel-leg robots, SB3 PPO for the hand
    assert (wheel.algo.name, cfg("robot=m20_legacy").algo.name, hand.algo.name) == ("rsl_ppo", "rsl_ppo", "ppo")
    assert cfg("robot=solenopsis", "algo=ppo").algo.name == "ppo"  # the command line still chooses


@pytest.mark.slow
def test_the_rollout_per_env_is_the_tasks_and_every_on_policy_learner_follows_it():
    hand = cfg("robot=g20_left")
    assert (hand.train.num_envs, hand.algo.params.n_steps, hand.train.total_timesteps) == (64, 64, 2_500_000)
    assert cfg("robot=g20_left", "algo=rsl_ppo").algo.params.num_steps_per_env == 64
    assert cfg("robot=solenopsis").algo.params.num_steps_per_env == 32
    assert cfg("robot=solenopsis", "algo=ppo").algo.params.n_steps == 32
    assert cfg("robot=g20_left", "task.train.steps_per_env=128").algo.params.n_steps == 128
    assert cfg("robot=g20_left", "algo.params.n_steps=16").algo.params.n_steps == 16  # the algorithm's own, typed
    assert validate(cfg("robot=g20_left", "algo=sac"))[2].keys().isdisjoint({"n_steps", "num_steps_per_env"})


@pytest.mark.parametrize("robot", HANDS)
@pytest.mark.parametrize("drive", ["hard_write", "pd", "track_test"])
@pytest.mark.slow
def test_every_hand_drive_composes_and_builds(robot, drive):
    c = cfg(f"robot={robot}", f"drive={drive}")
    env = make_env(c)
    assert env.unwrapped.cfg.hand == robot.removeprefix("g20_")
    assert env.unwrapped.cfg.drive.kind == ("hard_write" if drive == "track_test" else drive)
    env.close()


@pytest.mark.parametrize("action", ["normalized", "sdk255", "nominal", "delta"])
@pytest.mark.parametrize("collision", ["projection", "off"])
def test_every_hand_action_and_collision_option_builds(action, collision):
    env = make_env(cfg("robot=g20_left", f"action={action}", f"collision={collision}"))
    assert env.unwrapped.cfg.actions.kind == action
    assert env.unwrapped.cfg.collision.projection == (collision == "projection")
    env.close()


def test_an_env_override_of_one_section_field_keeps_the_fields_the_groups_set():
    """``env_overrides={collision: {contact_excludes: ...}}`` with ``collision=off``: the exclude is added, the
    projection stays off (the section is merged field by field, not replaced)."""
    pairs = [["hand_base", "thumb_distal"]]
    env = make_env(cfg("robot=g20_left", "collision=off", "drive=pd"), collision={"contact_excludes": pairs})
    assert env.unwrapped.cfg.collision.projection is False and env.unwrapped.cfg.drive.kind == "pd"
    assert [list(p) for p in env.unwrapped.cfg.collision.contact_excludes] == pairs
    env.close()
    merged = env_kwargs(cfg("robot=g20_left", "collision=off"), {"collision": {"contact_excludes": pairs}})
    assert merged["collision"]["projection"] is False and merged["collision"]["contact_excludes"] == pairs


@pytest.mark.parametrize("overrides", [["robot=solenopsis"], ["robot=g20_left", "action=sdk255", "drive=pd"]])
def test_the_physics_only_baseline_steps_any_action_space(overrides):
    """results.py's and the training benchmark's baseline: random actions from the env's own space (sdk255's
    integers too), timed per env step."""
    seconds = physics_only_s(cfg(*overrides), num_envs=2, steps=16)
    assert seconds > 0  # timed, never bounded: speed is stated in benchmarks/


@pytest.mark.parametrize("robot", WHEEL_LEGS)
@pytest.mark.parametrize("composer", ["policy", "wheels_only", "safety_stop"])
def test_every_wheel_leg_composer_option_builds(robot, composer):
    c = cfg(f"robot={robot}", f"composer={composer}")
    env = make_env(c)
    assert tuple(env.unwrapped.cfg.composer.layers) == tuple(c.composer.wheel_leg.composer.layers)
    assert env.unwrapped.cfg.robot == robot
    env.close()


@pytest.mark.parametrize("robot", HANDS)
@pytest.mark.parametrize("composer", ["policy", "hold_thumb"])
@pytest.mark.slow
def test_every_hand_composer_option_builds(robot, composer):
    c = cfg(f"robot={robot}", f"composer={composer}")
    env = make_env(c)
    assert env.unwrapped.cfg.composer.layers == tuple(c.composer.hand.composer.layers)
    env.close()


@pytest.mark.parametrize("algo", ["ppo", "sac", "rsl_ppo"])
def test_algo_options_validate(algo):
    train, name, params, policy = validate(cfg(f"algo={algo}"))
    assert name == algo and train.num_envs > 0 and params.learning_rate > 0 and len(policy.net_arch) >= 2


def test_an_unknown_rsl_schedule_fails_naming_it():
    with pytest.raises(ConfigError, match=r"algo.params.schedule: 'cosine' is not one of \['adaptive', 'fixed'\]"):
        validate(cfg("algo=rsl_ppo", "algo.params.schedule=cosine"))


def test_every_group_option_is_covered_above():
    assert options("robot") == sorted(HANDS + WHEEL_LEGS)
    assert options("task") == ["hand_pose", "in_hand_reorient", "in_hand_rotate", "in_hand_rotate_z", "velocity",
                               "velocity_rough"]  # fmt: skip
    assert options("drive") == ["hard_write", "pd", "track_test"]
    assert options("action") == ["delta", "nominal", "normalized", "sdk255", "wheel_leg"]
    assert options("composer") == ["hold_thumb", "policy", "safety_stop", "wheels_only"]
    assert options("collision") == ["off", "projection", "wheel_leg"]
    assert options("algo") == ["ppo", "rsl_ppo", "sac"]
    assert options("backend") == ["isaaclab", "mujoco"]


# -- bad keys and values fail before anything runs, naming them --------------------------------
def test_an_unknown_key_fails_naming_it():
    with pytest.raises(ConfigCompositionException, match="train.bogus"):
        cfg("train.bogus=1")
    with pytest.raises(ConfigCompositionException, match="task.hand_pose.slew"):
        cfg("robot=g20_left", "task.hand_pose.slew=1")


def test_an_unknown_env_field_added_with_plus_fails_naming_it():
    with pytest.raises(ConfigError, match="bogus"):
        make_env(cfg("robot=g20_left", "+task.hand_pose.bogus=1"))
    with pytest.raises(ValueError, match="bogus"):
        make_env(cfg("robot=solenopsis", "+task.velocity.rewards.bogus=1"))


def test_an_unknown_group_option_lists_the_valid_ones():
    with pytest.raises(ConfigCompositionException, match="hard_write"):
        cfg("robot=g20_left", "drive=soft")


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ("train.num_envs=abc", "train.num_envs"),
        ("train.num_envs=0", "train.num_envs"),
        ("train.learner_threads=0", "train.learner_threads: must be > 0, got 0"),
        ("train.critic_thread=maybe", "train.critic_thread: Value 'maybe' is not a valid bool"),
        ("train.vectorization=threads", "train.vectorization"),
        ("algo.params.learning_rate=fast", "algo.params.learning_rate"),
        ("algo.policy.activation=swish", "algo.policy.activation"),
    ],
)
def test_a_bad_training_value_fails_naming_the_field(override, match):
    with pytest.raises(ConfigError, match=match):
        validate(cfg(override))


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (
            ["robot=g20_left", "task.hand_pose.rewards.joint_pos_tracking.params.std=-1"],
            "rewards.joint_pos_tracking.params.std",
        ),
        # an earlier flat key (now with +) reaches the entry that holds it
        (
            ["robot=g20_left", "+task.hand_pose.tracking_fine_std=0"],
            r"rewards\.joint_pos_tracking_fine\.params\.std: must be a finite number > 0, got 0",
        ),
        (["robot=g20_left", "drive.hand.drive.kind=teleport"], "drive.hand.drive.kind"),
        (["robot=solenopsis", "task.velocity.decimation=0"], "decimation"),
        (["robot=solenopsis", "task.velocity.commands.lin_vel_x=[1.0,-1.0]"], "commands.lin_vel_x"),
        (
            ["robot=solenopsis", "task.velocity.commands.rel_reversal=-0.1"],
            r"commands.rel_reversal: must be in \[0, 1\]",
        ),
    ],
)
@pytest.mark.slow
def test_a_bad_env_value_fails_naming_the_field(overrides, match):
    with pytest.raises(ValueError, match=match):
        make_env(cfg(*overrides))


def test_an_option_of_the_wrong_family_is_refused():
    with pytest.raises(ConfigError, match="drive=hard_write is not available for robot solenopsis"):
        env_kwargs(cfg("robot=solenopsis", "drive=hard_write"))
    with pytest.raises(ConfigError, match="composer=wheels_only is not available for robot g20_left"):
        env_kwargs(cfg("robot=g20_left", "composer=wheels_only"))


def test_struct_mode_protects_nested_env_sections():
    c = cfg("robot=solenopsis")
    with pytest.raises(ConfigAttributeError, match="task.velocity.rewards.bogus"):
        c.task.velocity.rewards.bogus = 1.0


@pytest.mark.parametrize(("robot", "env_id", "kwargs"), [("solenopsis", "Solenopsis-v0", {}),
                                                         ("m20_legacy", "M20Legacy-v0", {}),
                                                         ("g20_left", "G20Hand-v0", {}),
                                                         ("g20_right", "G20Hand-v0", {"hand": "right"})])  # fmt: skip
def test_gym_make_and_train_py_build_the_same_task_by_default(robot, env_id, kwargs):
    """One set of defaults: the env ``train.py`` builds for a robot is the one ``gymnasium.make`` builds."""
    import dataclasses

    trained = make_env(cfg(f"robot={robot}")).unwrapped
    made = gym.make(env_id, **kwargs).unwrapped

    def config(env) -> dict:
        return dataclasses.asdict(env.cfg)

    assert config(trained) == config(made)


@pytest.mark.parametrize(
    ("task", "env_id"),
    [("in_hand_rotate", "G20Rotate-v0"), ("in_hand_rotate_z", "G20RotateZ-v0"), ("in_hand_reorient", "G20Reorient-v0")],
)
@pytest.mark.parametrize("robot", HANDS)
def test_an_object_task_builds_its_own_env_with_the_pd_drive(robot, task, env_id):
    """``robot=g20_left task=in_hand_rotate``: the task's env id, PD, no projection, the delta mapping; the same
    config gymnasium.make builds."""
    import dataclasses

    c = cfg(f"robot={robot}", f"task={task}")
    assert (c.drive.name, c.collision.name, c.action.name) == ("pd", "off", "delta")
    env = make_env(c)
    assert env.spec.id == env_id
    hand = robot.removeprefix("g20_")
    made = gym.make(env_id, hand=hand).unwrapped
    assert dataclasses.asdict(env.unwrapped.cfg) == dataclasses.asdict(made.cfg)
    env.close()
    sdk = make_env(cfg(f"robot={robot}", f"task={task}", "action=sdk255", "composer=hold_thumb"))
    assert sdk.unwrapped.cfg.actions.kind == "sdk255" and sdk.unwrapped.cfg.composer.layers == ("policy", "hold")


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (["drive=hard_write"], r"^drive.hand.drive.kind: 'hard_write': the object tasks drive the hand's PD actuators only"),
        (["collision=projection"], r"^collision.hand.collision.projection: true: collision projection is the hard-write"),
        (["task.in_hand_rotate.object.size=0.3"], r"^task.in_hand_rotate.object.size: 0.3 m is outside \[0.04, 0.08\]"),
        (["robot=solenopsis"], r"^task=in_hand_rotate is not available for robot solenopsis"),
    ],
)  # fmt: skip
def test_an_object_task_refuses_what_it_cannot_run_naming_the_key(overrides, match):
    with pytest.raises(ConfigError, match=match):
        make_env(cfg("robot=g20_left", "task=in_hand_rotate", *overrides))
