"""The term-table machinery every task uses: merging changes by name, function paths, plain dicts."""

import gymnasium as gym
import pytest

from dexwheel.fields import ConfigFieldError
from dexwheel.rl.config_defaults import defaults
from dexwheel.tasks.terms import ObservationTermCfg, RewardTermCfg, func_path, merge_terms, resolve
from dexwheel.tasks.velocity import rewards

TABLE = {"a": RewardTermCfg("user_terms:lateral_vel_l2", 1.0, {"scale": 1.0, "k": 2}), "b": RewardTermCfg("x:y", -1.0)}


def test_changes_merge_by_name_in_order():
    out = merge_terms(
        TABLE, {"a": {"params": {"scale": 3.0}}, "b": 0.5, "c": {"func": "m:f"}}, RewardTermCfg, "rewards"
    )
    assert list(out) == ["a", "b", "c"]
    assert out["a"].params == {"scale": 3.0, "k": 2} and out["a"].weight == 1.0  # params merge, the rest stays
    assert out["b"].weight == 0.5 and out["c"] == RewardTermCfg("m:f")
    assert list(merge_terms(TABLE, {"a": None}, RewardTermCfg, "rewards")) == ["b"]
    assert TABLE["a"].params["scale"] == 1.0  # the defaults are not edited


def test_bad_changes_name_the_term():
    with pytest.raises(ConfigFieldError, match=r"rewards\.zz: no such term to reweight"):
        merge_terms(TABLE, {"zz": 1.0}, RewardTermCfg, "rewards")
    with pytest.raises(ConfigFieldError, match=r"observations\.a: expected a dict of .* or None, got 1.0"):
        merge_terms({"a": ObservationTermCfg("m:f")}, {"a": 1.0}, ObservationTermCfg, "observations")
    with pytest.raises(ConfigFieldError, match=r"rewards\.zz: no such term to remove"):
        merge_terms(TABLE, {"zz": None}, RewardTermCfg, "rewards")


def test_functions_become_paths_when_they_import_back():
    assert func_path(rewards.lin_vel_z_l2) == "dexwheel.tasks.velocity.rewards:lin_vel_z_l2"
    assert resolve(func_path(rewards.lin_vel_z_l2), "r") is rewards.lin_vel_z_l2
    inline = lambda task: task  # noqa: E731
    assert func_path(inline) is inline  # a lambda cannot be saved as a path: it stays a callable
    # a Hydra node (and so a saved config) holds each term as a plain dict, its function as the path
    assert defaults("wheel_leg")["task"]["rewards"]["lin_vel_z_l2"] == {
        "func": "dexwheel.tasks.velocity.rewards:lin_vel_z_l2",
        "weight": -2.0,
        "params": {},
    }


@pytest.mark.parametrize(
    ("env_id", "kwargs", "field", "match"),
    [
        ("Solenopsis-v0", {"rewards": {"track_lin_vel_x_exp": {"params": {"sd": 0.3}}}},
         "rewards.track_lin_vel_x_exp", r"params: '.*:track_lin_vel_x_exp' takes \['std'\], got \{'std': 0.25, 'sd': 0.3\}"),
        ("Solenopsis-v0", {"rewards": {"track_ang_vel_z_exp": {"params": {"std": 0.0}}}},
         "rewards.track_ang_vel_z_exp.params.std", r"must be a finite number > 0, got 0.0"),
        ("Solenopsis-v0", {"terminations": {"tilt": {"params": {"limit_angle": 4.0}}}},
         "terminations.tilt.params.limit_angle", r"must be a finite number > 0 and <= 3.14159 \(rad\), got 4.0"),
        ("Solenopsis-v0", {"terminations": {"contact": {"params": {"bodies": ["fl_wheel"]}}}},
         "terminations.contact.params.bodies", r"\['fl_wheel'\] not allowed; choose from \['base_link'"),
        ("Solenopsis-v0", {"observations": {"n": {"func": "user_terms:steps_since_reset", "params": {"begin": 1}}}},
         "observations.n", r"takes \['start'\], got \{'begin': 1\}"),
        ("G20Hand-v0", {"events": {"reset_joints": {"params": {"scale": -0.1}}}},
         "events.reset_joints.params.scale", r"must be a finite number >= 0 \(rad\), got -0.1"),
    ],
)  # fmt: skip
def test_a_terms_parameters_are_checked_from_its_signature(env_id, kwargs, field, match):
    """Issue 56: a built-in term is its function plus its table entry; the config reads what each parameter allows
    from the function's annotations (dexwheel.tasks.terms.Check), not from a list of function paths."""
    with pytest.raises(ConfigFieldError, match=match) as e:
        gym.make(env_id, **kwargs)
    assert e.value.field == field and "\n" not in str(e.value)
