"""A run saved before a module or a name moved still loads, evaluates and resumes: its config's import paths are
read through the one table of moved paths (dexwheel.rl.saved_paths), each named in a warning, and no module is kept
at an old place for it."""

import importlib

import pytest
from cfgutil import compose_cfg, short

from dexwheel.rl import saved_paths
from dexwheel.rl.eval_job import evaluate
from dexwheel.rl.run_config import load_run_config
from dexwheel.rl.schema import ConfigError
from dexwheel.rl.training import train

REWARDS = "dexwheel.tasks.velocity.rewards"
#: where a move would have left the velocity task's rewards (what a run saved before it names)
OLD_REWARDS = "dexwheel.tasks.velocity.reward_terms"


def resolves(path: str) -> bool:
    """Whether ``module`` or ``module:name`` imports today."""
    module, _, name = path.partition(":")
    try:
        obj = importlib.import_module(module)
    except ModuleNotFoundError:
        return False
    for part in filter(None, name.split(".")):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


@pytest.mark.parametrize(("old", "new"), sorted(saved_paths.MOVED.items()))
def test_each_moved_path_is_gone_and_today_s_imports(old, new):
    assert not resolves(old), f"{old} still imports: a module kept for old paths, or an entry that moves nothing"
    assert resolves(new)


def test_an_old_path_reads_as_today_s_module_by_module_and_name_by_name():
    from dexwheel.rl.rsl.symmetry import mirrored
    from dexwheel.tasks.hand.action_path import HandActionPath
    from dexwheel.tasks.terms import resolve

    assert resolve(saved_paths.today("dexwheel.rl.symmetry:mirrored"), "f") is mirrored
    assert resolve(saved_paths.today("dexwheel.tasks.hand_pose.command:HandCommandPath"), "f") is HandActionPath
    assert saved_paths.today(f"{REWARDS}:is_terminated") == "dexwheel.tasks.mdp:is_terminated"  # the generic term
    assert saved_paths.today(f"{REWARDS}:track_lin_vel_x_exp") == f"{REWARDS}:track_lin_vel_x_exp"  # not moved
    node = {"a": [{"func": "dexwheel.rl.symmetry:mirrored"}], "b": "dexwheel.rl.symmetry", "c": "x:y"}
    assert saved_paths.translate(node) == [("a.0.func", "dexwheel.rl.symmetry:mirrored",
                                            "dexwheel.rl.rsl.symmetry:mirrored")]  # fmt: skip
    assert node == {"a": [{"func": "dexwheel.rl.rsl.symmetry:mirrored"}], "b": "dexwheel.rl.symmetry", "c": "x:y"}


@pytest.mark.slow
def test_a_run_saved_before_its_terms_moved_evaluates_and_resumes(tmp_path, monkeypatch):
    run = tmp_path / "run"
    train(compose_cfg("train", *short("solenopsis", algo="rsl_ppo")), run)
    before = evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))
    saved = run / "config.yaml"
    text = saved.read_text()
    assert text.count(f"{REWARDS}:") >= 5
    saved.write_text(text.replace(f"{REWARDS}:", f"{OLD_REWARDS}:"))  # the run as saved before the move
    with pytest.raises(ConfigError, match=OLD_REWARDS):  # no entry: the old path cannot be read
        evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1"))

    monkeypatch.setitem(saved_paths.MOVED, OLD_REWARDS, REWARDS)  # the entry the move adds
    _, warnings = load_run_config(run)
    assert f"{saved}: task.velocity.rewards.track_lin_vel_x_exp.func={OLD_REWARDS}:track_lin_vel_x_exp has moved; " \
           f"using {REWARDS}:track_lin_vel_x_exp" in warnings  # fmt: skip
    assert evaluate(compose_cfg("evaluate", f"run={run}", "episodes=1")) == before  # the same policy, the same env
    summary = train(compose_cfg("train", *short("solenopsis", "train.total_timesteps=4096", f"train.resume={run}",
                                                algo="rsl_ppo")), tmp_path / "ignored")  # fmt: skip
    assert summary["timesteps"] >= 4096
    assert OLD_REWARDS not in saved.read_text() and f"{REWARDS}:" in saved.read_text()  # saved again as today's
