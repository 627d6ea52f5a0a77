"""The velocity task's event terms: each alone (an inline MJCF model or a mock state), their draw order in the
task, a user's own events by gym.make and Hydra, removing the push, and bad entries refused by name."""

import copy
import math
from types import SimpleNamespace

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from cfgutil import compose_cfg

import dexwheel  # noqa: F401
from dexwheel.fields import ConfigFieldError
from dexwheel.rl.env_factory import make_env
from dexwheel.sim.randomization import DomainRandCfg, ModelRandomizer
from dexwheel.tasks.terms import resolve
from dexwheel.tasks.velocity import events as ev
from dexwheel.tasks.velocity.config import EVENTS, active_events, make_cfg

MJCF = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" friction="1 0.005 0.0001"/>
    <body name="base" pos="0 0 0.3">
      <freejoint/>
      <geom type="box" size="0.2 0.1 0.05" mass="4"/>
      <body name="l1" pos="0.2 0 0"><joint name="j1" axis="0 1 0"/><geom type="sphere" size="0.05" mass="0.5"/></body>
      <body name="l2" pos="-0.2 0 0"><joint name="j2" axis="0 1 0"/><geom type="sphere" size="0.05" mass="0.7"/></body>
    </body>
  </worldbody>
</mujoco>
"""
PUSHES = {"enabled": True, "push_interval_s": (0.1, 0.1)}  # a push every 5 control steps


@pytest.fixture
def small():
    """A task-like state around a 2-link model with domain randomisation on (one env)."""
    model = mujoco.MjModel.from_xml_string(MJCF)
    rz = ModelRandomizer(DomainRandCfg(enabled=True), model, "base", ["l1", "l2"], 2, nominal_friction=1.0)
    gains = []
    return SimpleNamespace(
        randomizer=rz, models=[model], _scratch=mujoco.MjData(model), episode_params=[rz.nominal],
        model_params=np.zeros((1, 7)), drive=SimpleNamespace(set_gain_scales=lambda i, kp, kd: gains.append((i, kp, kd))),
        gains=gains, physics=SimpleNamespace(qvel=np.zeros((1, model.nv)), set_qvel=lambda i: gains.append(("qvel", i))),
        mass=model.body_mass.copy(),
    )  # fmt: skip


def test_randomize_model_writes_one_draw_into_the_model(small):
    s, model = small, small.models[0]
    rng, twin = np.random.default_rng(3), np.random.default_rng(3)
    ev.randomize_model(s, 0, rng)
    u = twin.random(s.randomizer.n_draws)  # one fixed-count draw: friction, base mass, 3 CoM, 2 links, 2 kp, 2 kd
    assert rng.random() == twin.random()
    p = s.episode_params[0]
    assert p.friction == 0.35 + 1.15 * u[0] and p.base_mass_add == -1.0 + 4.0 * u[1]
    np.testing.assert_allclose(p.link_mass_scale, 0.85 + 0.3 * u[5:7], rtol=1e-15)
    assert np.all(model.geom_friction[:, 0] == p.friction)  # every collision geom, the floor included
    base, links = model.body("base").id, [model.body("l1").id, model.body("l2").id]
    assert model.body_mass[base] == pytest.approx(4.0 + p.base_mass_add, rel=1e-12)
    np.testing.assert_allclose(model.body_mass[links], s.mass[links] * p.link_mass_scale, rtol=1e-15)
    assert s.gains == [(0, p.kp_scale, p.kd_scale)]  # the drive's gains follow the draw
    np.testing.assert_allclose(s.model_params[0], [p.friction - 1.0, p.base_mass_add, *p.base_com_offset,
                                                   *(p.link_mass_scale - 1.0)])  # fmt: skip
    ev.randomize_model(s, 0, rng)  # the next draw starts from the nominal model, not from this one
    assert model.body_mass[base] == pytest.approx(4.0 + s.episode_params[0].base_mass_add, rel=1e-12)


def test_push_adds_a_uniform_velocity_to_x_and_y_only(small):
    s = small
    s.physics.qvel[0] = np.arange(s.models[0].nv, dtype=float)
    before = s.physics.qvel[0].copy()
    rng, twin = np.random.default_rng(7), np.random.default_rng(7)
    ev.push_by_setting_velocity(s, 0, rng)
    dv = (2.0 * twin.random(2) - 1.0) * 0.5  # domain_rand.push_velocity 0.5 m/s
    assert np.array_equal(s.physics.qvel[0, :2], before[:2] + dv) and np.all(np.abs(dv) <= 0.5)
    assert np.array_equal(s.physics.qvel[0, 2:], before[2:])
    assert s.gains == [("qvel", 0)]  # the edit is handed to the simulation


def test_reset_joints_and_base_perturbs_the_knees_and_the_base_velocity():
    home = np.arange(15, dtype=float)
    qadr = np.array([7, 8, 10, 11])

    def start_qpos(knees):
        q = home.copy()
        q[qadr] = knees
        q[2] = 0.3 + knees.max()
        return q

    s = SimpleNamespace(cfg=SimpleNamespace(reset_noise_scale=0.1), knee_qadr=qadr, start_qpos=start_qpos,
                        reset_qpos=start_qpos(np.full(4, 0.5))[None].copy(), reset_qvel=np.zeros((1, 14)))  # fmt: skip
    rng, twin = np.random.default_rng(1), np.random.default_rng(1)
    ev.reset_joints_and_base(s, 0, rng)
    noise = 0.1 * (2.0 * twin.random(10) - 1.0)  # 4 knees, then the base's 6 velocities
    assert rng.random() == twin.random()
    np.testing.assert_array_equal(s.reset_qpos[0, qadr], 0.5 + noise[:4])
    assert s.reset_qpos[0, 2] == 0.3 + (0.5 + noise[:4]).max()  # the height follows the knees
    np.testing.assert_array_equal(s.reset_qvel[0, :6], noise[4:])
    assert not s.reset_qvel[0, 6:].any()


def test_every_event_entry_names_a_documented_function_of_events_py():
    for name, entry in EVENTS.items():
        func = resolve(entry.func, f"events.{name}")
        assert func.__module__ == "dexwheel.tasks.velocity.events" and func.__doc__, name
    assert list(EVENTS) == ["randomize_model", "reset_joints_and_base", "push"]


def test_which_events_run():
    assert list(active_events(make_cfg())) == ["reset_joints_and_base"]  # domain randomisation off
    on = active_events(make_cfg(domain_randomization=True))
    assert list(on) == ["randomize_model", "reset_joints_and_base", "push"]
    assert on["push"][1] == (10.0, 15.0)  # the interval is domain_rand.push_interval_s: one place
    assert active_events(make_cfg(domain_rand={"push_interval_s": (2, 3)}))["push"][1] == (2.0, 3.0)
    assert "push" not in active_events(make_cfg(domain_rand={"push_interval_s": None}))
    assert list(active_events(make_cfg(domain_randomization=True, events={"push": None}))) == [
        "randomize_model", "reset_joints_and_base"]  # fmt: skip
    own = make_cfg(domain_randomization=True, events={"push": {"interval_range_s": (1.0, 2.0)}})
    assert active_events(own)["push"][1] == (1.0, 2.0)


def test_a_reset_draws_in_the_fixed_order():
    """Domain randomisation, the start noise, the command, the push interval: the counts the goldens pin."""
    task = gym.make("Solenopsis-v0", domain_randomization=True).unwrapped.task
    twin = np.random.default_rng(11)
    task.reset_env(0, np.random.default_rng(11))
    u = twin.random(task.randomizer.n_draws)
    noise = 0.05 * (2.0 * twin.random(10) - 1.0)
    twin.random(4)  # the command
    push_in = max(1, round((10.0 + 5.0 * twin.random()) / task.dt))
    assert task.rngs[0].random() == twin.random()
    assert task.episode_params[0].friction == 0.35 + 1.15 * u[0]
    np.testing.assert_array_equal(task.physics.qvel[0, :6], noise[4:])
    assert task.schedule.event_at.shape == (1, 1) and task.schedule.event_at[0, 0] == task.t + push_in


def _run(env, n=40):
    env.reset(seed=4)
    env.unwrapped.task.set_command(0.0, 0.0)
    return np.array([env.step(np.zeros(8, np.float32))[0] for _ in range(n)])


def test_removing_the_push_event_stops_pushes():
    edits = []
    pushed, unpushed, off = (gym.make("Solenopsis-v0", domain_rand=dr, events=e) for dr, e in (
        (PUSHES, {}), (PUSHES, {"push": None}), ({**PUSHES, "push_interval_s": None}, {})))  # fmt: skip
    set_qvel = unpushed.unwrapped.task.physics.set_qvel
    unpushed.unwrapped.task.physics.set_qvel = lambda i: (edits.append(i), set_qvel(i))
    a, b, c = _run(pushed), _run(unpushed), _run(off)
    assert edits == [] and unpushed.unwrapped.task.schedule.event_at.shape == (
        1,
        0,
    )  # nothing scheduled, nothing edited
    assert np.array_equal(b, c)  # the same trajectory as with pushes off in domain_rand: no velocity changed
    assert np.abs(a - b).max() > 0.1  # 8 pushes of up to 0.5 m/s did change it


def test_a_user_reset_event_runs_after_the_built_in_ones_in_single_and_vector_envs():
    kwargs = {"events": {"yaw": {"func": "user_terms:random_yaw", "mode": "reset", "params": {"max_yaw": 0.5}}}}
    env = gym.make("Solenopsis-v0", **kwargs)
    assert list(env.unwrapped.cfg.events)[-1] == "yaw"
    env.reset(seed=0)
    task = env.unwrapped.task
    w, x, y, z = task.physics.qpos[0, 3:7]
    yaw = 2.0 * math.atan2(z, w)
    assert x == y == 0.0 and 0.0 < abs(yaw) <= 0.5
    assert not np.array_equal(task.physics.qpos[0, task.knee_qadr], task.settled_knees)  # the noise still ran
    vec = gym.make_vec("Solenopsis-v0", num_envs=2, vectorization_mode="vector_entry_point", **kwargs)
    obs, _ = vec.reset(seed=5)
    singles = [gym.make("Solenopsis-v0", **kwargs) for _ in range(2)]
    for i, single in enumerate(singles):
        o, _ = single.reset(seed=5 + i)
        assert np.array_equal(obs[i], o)
        assert np.array_equal(vec.unwrapped.task.physics.qpos[i], single.unwrapped.task.physics.qpos[0])


def test_a_user_interval_event_runs_at_its_interval_and_copies_carry_its_schedule():
    env = gym.make("Solenopsis-v0", events={"spin": {"func": "user_terms:spin", "mode": "interval",
                                                     "interval_range_s": (0.2, 0.2), "params": {"rate": 2.0}}}).unwrapped  # fmt: skip
    env.reset(seed=0)
    task = env.task
    assert task.schedule.event_at[0, 0] == task.t + 10  # 0.2 s at 50 Hz
    for _ in range(9):
        env.step(np.zeros(8, np.float32))
    before = task.physics.qvel[0, 5]
    twin = copy.deepcopy(env)
    assert np.array_equal(twin.task.schedule.event_at, task.schedule.event_at)
    for e in (env, twin):
        e.step(np.zeros(8, np.float32))
    assert task.physics.qvel[0, 5] > before + 1.5 and task.schedule.event_at[0, 0] == task.t + 10
    assert np.array_equal(twin.task.physics.qvel, task.physics.qvel)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"func": "user_terms:random_yaw", "mode": "startup"}, r"events\.x\.mode: 'startup'; use one of \['reset', 'interval'\]"),
        ({"func": "no_such_module:f"}, r"events\.x\.func: cannot import module 'no_such_module'"),
        ({"func": "user_terms:missing"}, r"events\.x\.func: module 'user_terms' has no 'missing'"),
        ({"func": "user_terms:random_yaw", "params": {"bogus": 1}}, r"events\.x\.params: 'user_terms:random_yaw' takes \['max_yaw'\], got \{'bogus': 1\}"),
        ({"func": "user_terms:spin", "mode": "interval"}, r"events\.x\.interval_range_s: an interval event needs"),
        ({"func": "user_terms:spin", "mode": "interval", "interval_range_s": (0.0, 1.0)}, r"events\.x\.interval_range_s"),
        ({"func": "user_terms:spin", "mode": "interval", "interval_range_s": "domain_rand.push_every"},
         r"events\.x\.interval_range_s: 'domain_rand\.push_every' names no field"),
        ({"func": "user_terms:spin", "mode": "interval", "interval_range_s": "domain_rand.push_velocity"},
         r"events\.x\.interval_range_s: 'domain_rand\.push_velocity' holds 0\.5, not \(low, high\) seconds"),
        ({"func": "user_terms:random_yaw", "interval_range_s": (1.0, 2.0)}, r"events\.x\.interval_range_s: only an interval"),
        ({"mode": "reset"}, r"events\.x: a new term needs 'func'"),
    ],
)  # fmt: skip
def test_a_bad_event_is_one_clear_error_naming_it(entry, message):
    with pytest.raises(ConfigFieldError, match=message) as e:
        gym.make("Solenopsis-v0", events={"x": entry})
    assert "\n" not in str(e.value)


def test_built_in_events_keep_their_numbers_in_one_place():
    with pytest.raises(ConfigFieldError, match=r"events\.push\.params: .* takes none, .* domain_rand"):
        gym.make("Solenopsis-v0", events={"push": {"params": {"velocity": 1.0}}})
    # an event that does not run with this config (domain randomisation off) is still checked
    with pytest.raises(ConfigFieldError, match=r"events\.push\.func: module"):
        gym.make("Solenopsis-v0", events={"push": {"func": "user_terms:nope"}})


@pytest.mark.slow
def test_hydra_reaches_the_events():
    c = compose_cfg("train", "robot=solenopsis", "task.velocity.domain_rand.enabled=true", "task.velocity.events.push=null",
                  "+task.velocity.events.yaw={func: 'user_terms:random_yaw', mode: reset}")  # fmt: skip
    assert c.task.velocity.events.reset_joints_and_base.mode == "reset"
    task = make_env(c).unwrapped.task
    assert list(task.cfg.events) == ["randomize_model", "reset_joints_and_base", "yaw"]
    assert task.schedule.event_at.shape == (1, 0) and len(task._reset_events) == 3
    c = compose_cfg(
        "train",
        "robot=solenopsis",
        "task.velocity.domain_rand.enabled=true",
        "task.velocity.domain_rand.push_interval_s=[1.0,2.0]",
    )
    assert c.task.velocity.events.push.interval_range_s == "domain_rand.push_interval_s"
    assert active_events(make_env(c).unwrapped.cfg)["push"][1] == (1.0, 2.0)  # the old key moves the push
