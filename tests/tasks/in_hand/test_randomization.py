"""The in-hand tasks' domain randomisation: object mass, size, friction and the PD gains, each a named event term that
draws per env and episode into the env's own model (dexwheel/tasks/in_hand/events.py)."""

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import dexwheel  # noqa: F401
from dexwheel.fields import ConfigFieldError
from dexwheel.robots.g20 import ACTUATOR_KP, ACTUATOR_KV

E = "dexwheel.tasks.in_hand.events:"
EVENTS = {
    "randomize_object_mass": {"func": E + "randomize_object_mass", "params": {"mass_range": [0.05, 0.3]}},
    "randomize_friction": {"func": E + "randomize_friction", "params": {"friction_range": [0.5, 1.5]}},
    "randomize_pd_gains": {
        "func": E + "randomize_pd_gains",
        "params": {"kp_scale": [0.8, 1.2], "kd_scale": [0.8, 1.2]},
    },
}
SIZES = {"randomize_object_size": {"func": E + "randomize_object_size", "params": {"sizes": [0.05, 0.06, 0.07]}}}
ACTIONS = np.random.default_rng(0).uniform(-1, 1, (8, 3, 16)).astype(np.float32)


def run_vector(events, seed=5):
    vec = gym.make_vec("G20RotateZ-v0", num_envs=3, vectorization_mode="vector_entry_point", events=events)
    obs = [vec.reset(seed=seed)[0]]
    obs += [vec.step(a)[0] for a in ACTIONS]
    return vec, np.asarray(obs)


def test_each_env_draws_its_own_physics_into_its_own_model():
    vec, _ = run_vector(EVENTS)
    task = vec.unwrapped.task
    assert len({id(m) for m in task.models}) == 3  # a model per env
    for i, model in enumerate(task.models):
        mass = model.body_mass[task._obj_body]
        assert mass == task.object_mass[i] and 0.05 <= mass <= 0.3
        assert model.body_inertia[task._obj_body] / mass == pytest.approx(task.models[0].body_inertia[task._obj_body]
                                                                          / task.models[0].body_mass[task._obj_body])  # fmt: skip
        scale = model.geom_friction[task._contact_geoms, 0] / task._nominal["friction"]  # the pads' ratios kept
        assert np.allclose(scale, task.friction[i]) and 0.5 <= task.friction[i] <= 1.5
        assert model.geom_friction[task._obj_geom, 0] == task.friction[i]
        kp, kd = model.actuator_gainprm[task._actuators, 0], -model.actuator_biasprm[task._actuators, 2]
        assert np.allclose(kp / ACTUATOR_KP, task.kp_scale[i]) and np.allclose(kd / ACTUATOR_KV, task.kd_scale[i])
        assert np.all((task.kp_scale[i] >= 0.8) & (task.kp_scale[i] <= 1.2))
    assert len(set(task.object_mass)) == 3 and len(set(task.friction)) == 3  # drawn, not nominal


def test_randomised_physics_moves_the_hand_differently_and_off_is_the_nominal_model():
    _, nominal = run_vector({})
    vec, randomised = run_vector(EVENTS)
    assert not np.array_equal(nominal[1:], randomised[1:])
    off = gym.make_vec("G20RotateZ-v0", num_envs=3, vectorization_mode="vector_entry_point").unwrapped.task
    assert all(m is off.models[0] for m in off.models)  # no randomisation: one shared model
    assert np.all(off.object_mass == 0.1) and np.all(off.friction == 1.0) and np.all(off.kp_scale == 1.0)


def test_the_vector_env_is_single_envs_bit_for_bit():
    _, vector = run_vector({**EVENTS, **SIZES})
    for i in range(3):
        env = gym.make("G20RotateZ-v0", events={**EVENTS, **SIZES})
        single = [env.reset(seed=5 + i)[0]] + [env.step(a[i])[0] for a in ACTIONS]
        np.testing.assert_array_equal(vector[:, i], np.asarray(single))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copy_keeps_its_draws_and_continues_the_trajectory(how):
    env = gym.make("G20RotateZ-v0", events={**EVENTS, **SIZES})
    env.reset(seed=1)
    for a in ACTIONS[:3]:
        env.step(a[0])
    other = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    task, copied = env.unwrapped.task, other.unwrapped.task
    assert copied.models[0] is not task.models[0]
    assert copied.models[0].body_mass[copied._obj_body] == task.object_mass[0] == copied.object_mass[0]
    assert copied.object_size[0] == task.object_size[0] and copied.grasps_for(0.05) is not task.grasps_for(0.05)
    for a in ACTIONS[3:]:
        np.testing.assert_array_equal(env.step(a[0])[0], other.step(a[0])[0])


@pytest.mark.parametrize(
    ("event", "params", "message"),
    [
        ("randomize_object_mass", {"mass_range": [0.05, 0.9]},
         r"events.randomize_object_mass.params.mass_range: must be finite numbers >= 0.02 and <= 0.5 \(kg\)"),
        ("randomize_friction", {"friction_range": [0.1, 1.0]},
         r"events.randomize_friction.params.friction_range: must be finite numbers >= 0.3 and <= 2"),
        ("randomize_pd_gains", {"kp_scale": [1.2, 0.9]},
         r"events.randomize_pd_gains.params.kp_scale: expected \(low, high\) with low <= high, got \(1.2, 0.9\)"),
        ("randomize_pd_gains", {"kd_scale": [0.0, 1.0]}, r"events.randomize_pd_gains.params.kd_scale: must be finite "
                                                          r"numbers > 0"),
    ],
)  # fmt: skip
def test_a_range_outside_what_the_hand_holds_is_refused_at_construction(event, params, message):
    with pytest.raises(ConfigFieldError, match=message):
        gym.make("G20Rotate-v0", events={event: {"func": E + event, "params": params}})


def test_the_documented_overrides_turn_the_terms_on():
    """docs/how-to/in-hand.md's training command: its overrides compose to an env that randomises."""
    import re
    import shlex
    from pathlib import Path

    from cfgutil import compose_cfg

    from dexwheel.rl.env_factory import make_env

    doc = (Path(__file__).resolve().parents[3] / "docs" / "how-to" / "in-hand.md").read_text()
    block = re.search(r"```bash\n(python scripts/train.py robot=g20_left task=in_hand_rotate \\\n.*?)```", doc, re.S)
    args = shlex.split(block.group(1).replace("\\\n", " "))[2:]
    env = make_env(compose_cfg("train", *args))
    env.reset(seed=0)
    task = env.unwrapped.task
    assert task._randomizes and list(task.cfg.events)[1:] == list(EVENTS)
    assert 0.05 <= task.object_mass[0] <= 0.3 and task.object_mass[0] != 0.1


def test_the_object_size_is_drawn_per_env_with_its_own_grasps_shape_and_inertia():
    from dexwheel.tasks.in_hand import grasp_cache
    from dexwheel.tasks.in_hand.objects import ObjectSpec

    vec = gym.make_vec("G20RotateZ-v0", num_envs=6, vectorization_mode="vector_entry_point", events=SIZES)
    vec.reset(seed=3)
    task = vec.unwrapped.task
    g, b = task._obj_geom, task._obj_body
    assert set(task.object_size) == {0.05, 0.06, 0.07}  # seed 3 draws every size among 6 envs
    for i, model in enumerate(task.models):
        size = task.object_size[i]
        assert np.allclose(model.geom_size[g], size / 2) and model.geom_rbound[g] == pytest.approx(size / 2 * 3**0.5)
        assert model.body_inertia[b] == pytest.approx(np.full(3, 0.1 * size**2 / 6))  # a uniform 100 g cube
        cache = grasp_cache.load_for("left", ObjectSpec(size=float(size)))
        assert any(np.array_equal(task.start_object[i], pose) for pose in cache.object_pose)  # its size's grasp
    for a in ACTIONS[:4]:  # every size holds its cube through a few steps
        _, _, terminated, _, _ = vec.step(np.concatenate([a, a]) * 0.0)
        assert not terminated.any()
    # a single env with env i's seed draws the same size and trajectory
    single = gym.make("G20RotateZ-v0", events=SIZES)
    single.reset(seed=3 + 5)
    assert single.unwrapped.task.object_size[0] == task.object_size[5]


def test_a_size_without_a_grasp_cache_is_refused_at_construction_naming_the_event():
    with pytest.raises(ConfigFieldError, match=r"^events.randomize_object_size.params.sizes: 0.045 m: grasps: no cache at "
                                               r".*left_cube_45mm.npz .*sample_grasps.py --hand left --shape cube --size 0.045"):  # fmt: skip
        gym.make("G20RotateZ-v0", events={"randomize_object_size": {"func": E + "randomize_object_size",
                                                                   "params": {"sizes": [0.05, 0.045]}}})  # fmt: skip
    with pytest.raises(ConfigFieldError, match=r"sizes: must be finite numbers >= 0.04 and <= 0.08 \(m\)"):
        gym.make("G20RotateZ-v0", events={"randomize_object_size": {"func": E + "randomize_object_size",
                                                                   "params": {"sizes": [0.05, 0.09]}}})  # fmt: skip
    with pytest.raises(ConfigFieldError, match=r"^events.randomize_object_size: scales the whole object; the capsule's "
                                               r"own length \(object.length=0.08\) would scale with it"):  # fmt: skip
        gym.make("G20Rotate-v0", events=SIZES)
