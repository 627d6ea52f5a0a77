"""The compiled hard-write step: MuJoCo's C calls from numba, the projection's contact sensors, actions
in float32, and the kernel cache's invalidation."""

import subprocess
import sys
import textwrap

import mujoco
import numpy as np
import pytest

from dexwheel.control import G20_MIMIC, ActionClipWarning
from dexwheel.control.coupling import MimicCompletion
from dexwheel.envs.g20_hand import G20HandEnv
from dexwheel.envs.g20_vector import G20HandVectorEnv
from dexwheel.robots.g20 import ACTIVE_JOINTS
from dexwheel.sim.projection import (
    CHAIN_SENSOR_FORMAT,
    DEEPEST_CONTACT_SENSOR,
    _set_joint,
    capture_frames,
    contact_depth,
    contact_pairs,
    group_depth,
    moved_depth,
    project_pose,
    rigid_movers,
    rotated_depth,
)
from dexwheel.tasks.hand_pose.config import REWARD_TERMS
from dexwheel.tasks.hand_pose.kernels import METRIC_FIELDS

#: the default tables' ``info`` keys, in order: each reward term's, then the step's measurements
INFO_KEYS = (*(f"reward_{t}" for t in REWARD_TERMS), *(k for k, _ in METRIC_FIELDS), "diverged")

TOL = 5e-4


def _random_actions(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (n, len(ACTIVE_JOINTS))).astype(np.float32)


def test_compiled_step_leaves_what_the_bindings_mj_forward_computes():
    """After each step (random actions: projection trials and contacts), a fresh MjData given the
    written qpos/qvel/ctrl/time and forwarded through the Python bindings is identical."""
    env = G20HandEnv(reset_noise_scale=0.0)
    env.reset(seed=1)
    fresh = mujoco.MjData(env.model)
    contacts = 0
    for action in _random_actions(60):
        env.step(action)
        d = env.data
        assert not d.qvel.any() and np.array_equal(d.ctrl, d.qpos)
        fresh.qpos[:], fresh.qvel[:], fresh.ctrl[:], fresh.time = d.qpos, d.qvel, d.ctrl, d.time
        mujoco.mj_forward(env.model, fresh)
        for field in ("xpos", "xquat", "sensordata", "qacc", "efc_force"):
            np.testing.assert_array_equal(getattr(d, field), getattr(fresh, field), err_msg=field)
        assert d.ncon == fresh.ncon
        np.testing.assert_array_equal(d.contact.dist, fresh.contact.dist)
        contacts += d.ncon
    assert contacts > 0  # the sequence did touch


def _unaligned(a: np.ndarray) -> np.ndarray:
    """A read-only copy of float32 ``a`` at an odd byte address."""
    out = np.frombuffer(b"\0" + a.tobytes(), dtype=np.float32, offset=1)
    assert not out.flags.aligned and not out.flags.writeable
    return out


@pytest.mark.parametrize(
    "layout",
    [
        lambda a, k: a,
        lambda a, k: a.astype(np.float64),
        lambda a, k: _unaligned(a),  # copied: the compiled step is built for aligned arrays
        lambda a, k: a.astype(np.float64) if k % 3 else (_unaligned(a) if k % 2 else a),  # switching layouts
    ],
    ids=["float32", "float64", "float32-unaligned", "mixed"],
)
def test_float32_and_float64_actions_step_identically(layout):
    """float32 actions go to the compiled step as they are; the result is the float64 conversion's,
    whatever the actions' layout and however it changes between steps."""
    runs = []
    for make_action in (lambda a, k: a.astype(np.float64), layout):
        env = G20HandEnv(reset_noise_scale=0.0)
        obs, _ = env.reset(seed=3)
        trace = [obs]
        for k, action in enumerate(_random_actions(40, seed=3)):
            obs, reward, _, _, info = env.step(make_action(action, k))
            trace += [obs, np.float64(reward), np.array([info[k] for k in INFO_KEYS], dtype=np.float64)]
        runs.append(trace)
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_info_keeps_its_types():
    env = G20HandEnv(reset_noise_scale=0.0, actions={"out_of_range": "clip"})
    env.reset(seed=0)
    with pytest.warns(ActionClipWarning) as caught:
        _, _, _, _, info = env.step(np.full(len(ACTIVE_JOINTS), 2.0, np.float32))
    assert caught[0].filename == __file__  # the warning points at the env.step call
    assert tuple(info) == INFO_KEYS
    assert all(type(info[k]) is int for k in ("projection_checks", "projection_limited", "action_clipped"))
    assert all(type(info[k]) is bool for k in ("projection_fallback", "goal_switched"))
    assert info["action_clipped"] == len(ACTIVE_JOINTS) and info["projection_checks"] >= 1


def test_projection_costs_no_trial_in_free_motion():
    """A candidate within the tolerance is checked by the write's own mj_forward: projection on and
    off give the same trajectory in free space, one check per moving step."""
    moves = [np.full(len(ACTIVE_JOINTS), -1.0, np.float32), np.zeros(len(ACTIVE_JOINTS), np.float32)] * 3
    runs = {}
    for projection in (False, True):
        env = G20HandEnv(collision={"projection": projection}, reset_noise_scale=0.0, goal_mode="presets")
        env.reset(seed=0)
        trace = []
        for action in moves:
            for _ in range(4):
                obs, _, _, _, info = env.step(action)
                trace.append((obs, info["projection_checks"], info["max_penetration"]))
        runs[projection] = trace
    for (obs_off, checks_off, _), (obs_on, checks_on, depth) in zip(runs[False], runs[True], strict=True):
        np.testing.assert_array_equal(obs_off, obs_on)
        assert checks_off == 0 and checks_on <= 1 and depth <= TOL
    assert sum(c for _, c, _ in runs[True]) > 0


def test_chain_contact_sensors_attribute_contacts_to_the_joints_that_move_them():
    """The projection reads, per active joint, the deepest contact touching its subtree from a MuJoCo
    sensor; recomputed from the contact list and the body tree, over random poses."""
    env = G20HandEnv(reset_noise_scale=0.0)
    model = env.model
    d = mujoco.MjData(model)
    adr = lambda name: model.sensor_adr[model.sensor(name).id]  # noqa: E731
    chain_adr = [adr(CHAIN_SENSOR_FORMAT.format(j)) for j in ACTIVE_JOINTS]
    subtree_of = []
    for j in ACTIVE_JOINTS:
        root = model.jnt_bodyid[model.joint(j).id]
        inside = np.zeros(model.nbody, dtype=bool)
        for b in range(model.nbody):
            c = b
            while c > root:
                c = model.body_parentid[c]
            inside[b] = c == root
        subtree_of.append(inside)
    rng = np.random.default_rng(0)
    penetrating = 0
    for _ in range(400):
        d.qpos[:] = G20_MIMIC.complete(rng.uniform(G20_MIMIC.active_lower, G20_MIMIC.active_upper), clip_mimic=True)
        mujoco.mj_kinematics(model, d)
        mujoco.mj_collision(model, d)
        mujoco.mj_sensorPos(model, d)
        assert -min(d.sensordata[adr(DEEPEST_CONTACT_SENSOR)], 0.0) == contact_depth(d)
        dist = d.contact.dist
        bodies = model.geom_bodyid[d.contact.geom]
        for a, inside in enumerate(subtree_of):
            touching = inside[bodies].any(axis=1) & (d.contact.exclude == 0)
            expected = min(dist[touching].min(), 0.0) if touching.any() else 0.0
            assert min(d.sensordata[chain_adr[a]], 0.0) == expected
        penetrating += contact_depth(d) > TOL
    assert penetrating > 20


def test_contact_pairs_are_the_pairs_mj_collision_reports():
    """The pair list comes from MuJoCo's own filters: every contact of random poses is on a listed
    pair, and no pair is of one body, or of a finger link and its parent link (MuJoCo filters those
    unless one of them is welded to the world, as the palm is)."""
    model = G20HandEnv(reset_noise_scale=0.0).model
    pairs = {tuple(p) for p in contact_pairs(model).tolist()}
    for g, h in pairs:
        b, c = model.geom_bodyid[g], model.geom_bodyid[h]
        assert b != c
        if c in (model.body_parentid[b],) or b == model.body_parentid[c]:
            assert 0 in (model.body_weldid[b], model.body_weldid[c])
    d = mujoco.MjData(model)
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(300):
        d.qpos[:] = G20_MIMIC.complete(rng.uniform(G20_MIMIC.active_lower, G20_MIMIC.active_upper), clip_mimic=True)
        mujoco.mj_kinematics(model, d)
        mujoco.mj_collision(model, d)
        seen |= {tuple(sorted(p)) for p in d.contact.geom[d.contact.exclude == 0].tolist()}
    assert seen <= pairs and len(seen) > len(pairs) // 4


def test_a_one_joint_trial_measures_what_the_joints_contact_sensor_reports():
    """moved_depth (mj_kinematics + mj_geomDistance over the joint's pairs) equals, bit for bit, the
    deepest contact touching the joint's subtree after mj_collision (its chain sensor), for every
    active joint over random poses; group_depth of a random set of joints (each pair measured once)
    equals the deepest of their sensors."""
    env = G20HandEnv(reset_noise_scale=0.0)
    model, projector = env.model, env.task.projector
    d = mujoco.MjData(model)
    tables, rigid = projector.trial_tables(d)
    rng = np.random.default_rng(2)
    penetrating = 0
    for _ in range(200):
        full = G20_MIMIC.complete(rng.uniform(G20_MIMIC.active_lower, G20_MIMIC.active_upper), clip_mimic=True)
        depths = [
            moved_depth(model._address, d._address, d.qpos, projector.qpos_adr, full, a, tables)
            for a in range(len(ACTIVE_JOINTS))
        ]
        joints = np.flatnonzero(rng.random(len(ACTIVE_JOINTS)) < 0.5)
        together = group_depth(model._address, d._address, d.qpos, projector.qpos_adr, full, joints, tables, rigid)
        mujoco.mj_collision(model, d)
        mujoco.mj_sensorPos(model, d)
        sensed = [-min(d.sensordata[projector.sensor_adr[1 + a]], 0.0) for a in range(len(ACTIVE_JOINTS))]
        for a, depth in enumerate(depths):
            assert depth == sensed[a], ACTIVE_JOINTS[a]
            penetrating += depth > TOL
        assert together == max([sensed[a] for a in joints], default=0.0)
    assert penetrating > 100


def test_a_rigidly_turned_trial_measures_what_the_kinematics_give():
    """rotated_depth (the subtree of the moved joint and its mimic followers turned about their axes
    from captured poses) agrees with moved_depth (mj_kinematics) to rounding, for every active joint,
    over random poses and moves, mimic followers at their limits included."""
    env = G20HandEnv(reset_noise_scale=0.0)
    model, projector = env.model, env.task.projector
    d = mujoco.MjData(model)
    tables, rigid_tables = projector.trial_tables(d)
    assert (np.diff(projector.movers[0]) >= 1).all()  # every G20 joint is a hinge chain: all turn rigidly
    base, frames = np.empty(G20_MIMIC.nfull), np.empty(12 * model.ngeom)
    rng = np.random.default_rng(5)
    lower, upper = G20_MIMIC.active_lower, G20_MIMIC.active_upper
    worst, penetrating = 0.0, 0
    for _ in range(100):
        full = G20_MIMIC.complete(rng.uniform(lower, upper), clip_mimic=True)
        for a in range(len(ACTIVE_JOINTS)):
            moved_depth(model._address, d._address, d.qpos, projector.qpos_adr, full, a, tables)
            capture_frames(a, full, tables, rigid_tables, base, frames)
            trial = full.copy()
            _set_joint(trial, a, rng.uniform(lower[a], upper[a]), G20_MIMIC.arrays)  # one trial move
            turned = rotated_depth(model._address, d._address, a, trial, tables, rigid_tables, base, frames)
            kinematic = moved_depth(model._address, d._address, d.qpos, projector.qpos_adr, trial, a, tables)
            worst = max(worst, abs(turned - kinematic))
            penetrating += kinematic > TOL
    assert worst < 1e-15
    assert penetrating > 100


def test_rigid_movers_list_hinge_chains_deepest_first_and_leave_other_joints_to_the_kinematics():
    """A hinge with a mimic follower turns the follower's geoms, then its own subtree's (follower
    first); a slide joint gets no movers, so its trials run mj_kinematics."""
    model = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody>
          <body name="base"><joint name="root" type="hinge"/><geom name="g0" size=".01"/>
            <body name="tip" pos="0 0 .1"><joint name="tip" type="hinge"/><geom name="g1" size=".01"/></body>
          </body>
          <body name="slider" pos=".2 0 0"><joint name="slide" type="slide"/><geom name="g2" size=".01"/></body>
        </worldbody></mujoco>"""
    )
    limits = {name: (-1.0, 1.0) for name in ("root", "tip", "slide")}
    coupling = MimicCompletion(["root", "slide"], ["root", "tip", "slide"], {"tip": ("root", 0.5)}, limits)
    qpos_adr = np.array([model.joint(n).qposadr[0] for n in coupling.layout.names])
    start, full_idx, jnt, geom_start, geoms = rigid_movers(model, coupling, qpos_adr)
    assert start.tolist() == [0, 2, 2]  # root: two movers; slide: none
    assert full_idx.tolist() == [1, 0] and jnt.tolist() == [model.joint("tip").id, model.joint("root").id]
    movers_geoms = [geoms[geom_start[m] : geom_start[m + 1]].tolist() for m in range(2)]
    assert movers_geoms == [[model.geom("g1").id], [model.geom("g0").id, model.geom("g1").id]]


def test_one_joint_trials_from_a_safe_start_project_as_full_collision_checks_do():
    """From a safe start the per-joint trials measure only the moved joint's pairs, and a bisection
    turns the joint's subtree rigidly instead of running the kinematics; told the start may penetrate,
    project_pose checks every contact instead. Both accept the same pose, bit for bit (the depths
    differ by rounding only, ~1e-17 m: a decision could flip only that close to the tolerance)."""
    env = G20HandEnv(reset_noise_scale=0.0)
    model, projector, task = env.model, env.task.projector, env.task
    d = mujoco.MjData(model)
    tables, rigid_tables = projector.trial_tables(d)
    completion = G20_MIMIC.arrays
    rng = np.random.default_rng(4)
    compared = limited = 0
    while compared < 60:
        start = rng.uniform(G20_MIMIC.active_lower, G20_MIMIC.active_upper)
        if task.pose_depth(start) > TOL:
            continue
        candidate = np.clip(start + rng.uniform(-0.6, 0.6, start.size), G20_MIMIC.active_lower, G20_MIMIC.active_upper)
        if task.pose_depth(candidate) <= TOL:  # only penetrating candidates are projected
            continue
        results = []
        for start_is_safe in (True, False):
            projector.depth(d, G20_MIMIC.complete(candidate, clip_mimic=True))  # the candidate's sensors
            out, scratch = np.empty_like(start), np.empty(G20_MIMIC.nfull)
            checks, lim, fallback = project_pose(
                model._address, d._address, d.qpos, d.sensordata, projector.qpos_adr, projector.sensor_adr,
                completion, tables, rigid_tables, TOL, projector.iters, True, start, candidate, start_is_safe, start,
                out, scratch,
            )  # fmt: skip
            results.append((out, lim, fallback))
        (out_fast, lim_fast, fb_fast), (out_full, lim_full, fb_full) = results
        np.testing.assert_array_equal(out_fast, out_full)
        assert (lim_fast, fb_fast) == (lim_full, fb_full) and not fb_fast
        assert task.pose_depth(out_fast) <= TOL
        compared += 1
        limited += lim_fast
    assert limited > 30  # bisections were compared, not only whole moves


@pytest.mark.slow
def test_a_changed_callee_invalidates_the_cached_callers(tmp_path):
    """numba re-validates a cached kernel against its own file only; dexwheel.jit flushes it when a source
    its module imports changed, so a kernel never runs the old code of a kernel it calls, and keeps it when
    only a file no kernel imports changed."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "callee.py").write_text("from dexwheel.jit import kernel\n\n@kernel\ndef value():\n    return 1\n")
    (pkg / "caller.py").write_text(
        "from dexwheel.jit import kernel\nfrom pkg.callee import value\n\n@kernel\ndef twice():\n    return 2 * value()\n"
    )
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import dexwheel.jit as jit
        jit.PACKAGE = __import__("pathlib").Path({str(pkg)!r})
        from pkg.caller import twice
        print(twice(), sum(twice.stats.cache_hits.values()))
        """
    )
    run = lambda: subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)  # noqa: E731
    (pkg / "training.py").write_text("STEPS = 1\n")  # a module no kernel imports
    assert run().stdout.split() == ["2", "0"]
    assert run().stdout.split() == ["2", "1"]  # from the cache
    (pkg / "callee.py").write_text("from dexwheel.jit import kernel\n\n@kernel\ndef value():\n    return 5\n")
    assert run().stdout.split() == ["10", "0"]  # caller.py is unchanged, its cached code was not reused
    (pkg / "training.py").write_text("STEPS = 2\n")
    assert run().stdout.split() == ["10", "1"]  # an edit no kernel depends on keeps the cache


def test_threaded_vector_step_matches_single_envs():
    """Several envs' hard-write steps run on numba's worker threads; each env still computes what a
    single env computes (random actions: uneven projection work per env)."""
    num_envs = 3
    vec = G20HandVectorEnv(num_envs=num_envs, num_threads=2, reset_noise_scale=0.0)
    singles = [G20HandEnv(reset_noise_scale=0.0) for _ in range(num_envs)]
    obs, _ = vec.reset(seed=7)
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(env.reset(seed=7 + i)[0], obs[i])
    actions = np.random.default_rng(7).uniform(-1, 1, (30, num_envs, len(ACTIVE_JOINTS))).astype(np.float32)
    for a in actions:
        obs, reward, _, _, info = vec.step(a)
        for i, env in enumerate(singles):
            o, r, _, _, inf = env.step(a[i])
            np.testing.assert_array_equal(o, obs[i])
            assert r == reward[i]
            for key in INFO_KEYS:
                assert info[key][i] == inf[key], key
    kinds = {key: info[key].dtype.kind for key in INFO_KEYS}
    assert [k for k, kind in kinds.items() if kind == "i"] == [
        "projection_checks",
        "projection_limited",
        "action_clipped",
    ]
    assert [k for k, kind in kinds.items() if kind == "b"] == ["projection_fallback", "goal_switched", "diverged"]


FORK_SCRIPT = """
import multiprocessing as mp
import numpy as np
from dexwheel.envs.g20_vector import G20HandVectorEnv

def rollout():
    vec = G20HandVectorEnv(num_envs=2, num_threads=2, reset_noise_scale=0.0)
    obs, _ = vec.reset(seed=5)
    for a in np.random.default_rng(5).uniform(-1, 1, (10, 2, 16)).astype(np.float32):
        obs, *_ = vec.step(a)
    return obs

def child(queue):
    queue.put(rollout())

if __name__ == "__main__":
    parent = rollout()  # starts numba's worker threads in this process
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=child, args=(queue,))
    proc.start()
    forked = queue.get(timeout=120)
    proc.join(30)
    print(proc.exitcode, np.array_equal(forked, parent))
"""


@pytest.mark.slow
def test_a_forked_child_steps_a_threaded_vector_env(tmp_path):
    """GNU OpenMP's pool does not survive fork(); a forked child steps its envs on one thread instead
    of being ended by numba, and computes the same."""
    script = tmp_path / "fork_child.py"
    script.write_text(FORK_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True"], out.stdout + out.stderr


def test_projection_names_a_missing_contact_sensor():
    from dexwheel.robots import get_robot
    from dexwheel.robots.mjcf import build_spec
    from dexwheel.sim.projection import CollisionProjector, add_deepest_contact_sensor

    spec = build_spec(get_robot("g20_left"))
    add_deepest_contact_sensor(spec)  # but no per-joint sensors
    model = spec.compile()
    qpos_adr = model.jnt_qposadr[[model.joint(j).id for j in G20_MIMIC.layout.names]]
    with pytest.raises(ValueError, match=r"no sensor 'deepest_contact:pinky_mcp_roll'.*add_chain_contact_sensors"):
        CollisionProjector(model, G20_MIMIC, qpos_adr)
