"""The G20 action path's layer settings: a hold setting nothing would apply is refused, naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from dexwheel.fields import ConfigFieldError
from dexwheel.rl.env_factory import env_kwargs, make_env
from dexwheel.rl.schema import ConfigError
from dexwheel.tasks.hand_pose.config import make_cfg

CONFIGS = str(Path(__file__).resolve().parents[3] / "configs")


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [({"composer": {"hold_joints": "index"}}, "composer.hold_joints", r"^composer.hold_joints='index' would be ignored: composer.layers \['policy'\] "
                                               r"has no 'hold' layer; add 'hold'"),
     ({"composer": {"hold_pose": "full_fist"}}, "composer.hold_pose", r"^composer.hold_pose='full_fist' would be ignored"),
     ({"composer": {"hold_joints": ("index_pip",), "hold_pose": "half_fist"}}, "composer.hold_joints",
      r"^composer.hold_joints=\('index_pip',\) and composer.hold_pose='half_fist' would be ignored"),
     ({"composer": {"layers": ("policy", "hold"), "hold_joints": ("index_pip", "middle_pip", "index_pip")}}, "composer.hold_joints",
      r"^composer.hold_joints: \['index_pip'\] named more than once; name each joint once$")],
)  # fmt: skip
def test_hold_settings_without_the_hold_layer_or_a_joint_named_twice_are_refused(kwargs, field, message) -> None:
    with pytest.raises(ConfigFieldError, match=message) as info:
        make_cfg(**kwargs)
    assert info.value.field == field


def test_the_shipped_composer_options_pass_and_a_hold_override_without_hold_names_its_path() -> None:
    assert make_cfg().composer.layers == ("policy",)  # the defaults leave hold_joints and hold_pose unset
    assert (
        make_cfg(
            composer={"layers": ("policy", "hold"), "hold_joints": "index", "hold_pose": "full_fist"}
        ).composer.hold_pose
        == "full_fist"
    )
    with initialize_config_dir(config_dir=CONFIGS, version_base="1.3"):
        for option, layers in [("policy", ("policy",)), ("hold_thumb", ("policy", "hold"))]:
            kwargs = env_kwargs(compose("train", overrides=["robot=g20_left", f"composer={option}"]))
            assert make_cfg(**kwargs).composer.layers == layers
        with pytest.raises(ConfigError, match=r"^composer.hand.composer.hold_pose='full_fist' would be ignored"):
            make_env(compose("train", overrides=["robot=g20_left", "composer.hand.composer.hold_pose=full_fist"]))
