"""The one config builder of every task (dexwheel.tasks.config_builder), on a small config of its own."""

import dataclasses

import pytest

from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.config_builder import build_cfg
from dexwheel.tasks.terms import RewardTermCfg


@dataclasses.dataclass(frozen=True)
class Section:
    a: float = 1.0
    b: float = 2.0


@dataclasses.dataclass(frozen=True)
class Cfg:
    x: int = 0
    section: Section = dataclasses.field(default_factory=Section)
    rewards: dict = dataclasses.field(default_factory=lambda: {"r": RewardTermCfg("m:f", 1.0, {"std": 0.5})})


RENAMES = {
    "old_x": "x",
    "flat_a": "section.a",
    "cost": ("rewards.r.weight", -1.0),
    "rewards.std": "rewards.r.params.std",
}
TABLES = {"rewards": RewardTermCfg}


def build(**kwargs):
    return build_cfg(Cfg(), kwargs, tables=TABLES, renames=RENAMES,
                     finish={"section": lambda c: {"b": 9.0, **c}}, env="Toy")  # fmt: skip


def test_fields_sections_tables_and_renames_apply_and_merge():
    cfg = build(old_x=3, flat_a=5.0, cost=2.0, rewards={"std": 0.1, "r": {"params": {"k": 1}}})
    assert cfg.x == 3 and cfg.section == Section(5.0, 9.0)  # finish completes a changed section
    r = cfg.rewards["r"]
    assert r.weight == -2.0 and r.params == {"std": 0.1, "k": 1}  # a factor, an earlier key, a change: all apply
    assert build().section == Section()  # an untouched section is not finished


@pytest.mark.parametrize(("kwargs", "field", "match"), [
    ({"old_y": 1}, "old_y", r"Toy: old_y: unknown keyword argument \(did you mean old_x\?\); valid: x, section, rewards; aliases: cost, flat_a, old_x"),
    ({"section": {"c": 1}}, "section", r"section: unknown field\(s\) \['c'\]"),
    ({"section": 3}, "section", r"section: expected a dict of fields, got 3"),
    ({"cost": "high"}, "cost", r"cost must be a finite number, got 'high'"),
])  # fmt: skip
def test_what_it_cannot_apply_is_one_error_naming_the_key(kwargs, field, match):
    with pytest.raises(ConfigFieldError, match=match) as e:
        build(**kwargs)
    assert e.value.field == field
