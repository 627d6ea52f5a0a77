"""Invariants that need no golden file, checked at every step of long random runs.

Mimic ratios, joint limits, actuator force limits, hard-write's penetration bound, masses and stance:
the specs' numbers (tests/spec_tables.py), not the code's own output.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from spec_tables import (
    G20_LIMITS,
    KNEE_EFFORT,
    M20_MASS,
    M20_TOTAL_MASS,
    SOLENOPSIS_MASS,
    SOLENOPSIS_TOTAL_MASS,
    WHEEL_EFFORT,
)

import dexwheel  # noqa: F401

MIMIC = {
    "thumb_ip": ("thumb_mcp", 1.02),
    **{f"{f}_dip": (f"{f}_pip", 0.89) for f in ("index", "middle", "ring", "pinky")},
}
G20_FORCE = 8.0  # N m, the spec's position actuator forcerange
PENETRATION_TOL = 5e-4  # m, the spec's absolute penetration criterion
#: PD joints are held by soft limits: how far the solver lets them pass (measured 4.4e-3 rad under
#: random actions that drive joints into their stops).
PD_LIMIT_TOL = 0.01
#: PD mimic joints have their own actuators with coupled targets: their positions follow the ratio
#: once the motion settles (they lag by up to 0.23 rad mid-motion).
PD_SETTLED_MIMIC_TOL = 2e-3
STEPS = 1500


def _actions(rng: np.random.Generator, t: int) -> np.ndarray:
    """Random actions with stretches of all +1 (a fist into contact, joints into their stops)."""
    return rng.uniform(-1.0, 1.0, 16) if t % 100 < 60 else np.ones(16)


def _joint_index(model, name: str) -> int:
    return int(model.jnt_qposadr[model.joint(name).id])


@pytest.mark.parametrize("hand", ["left", "right"])
def test_g20_hard_write_invariants_every_step(hand: str) -> None:
    env = gym.make("G20Hand-v0", hand=hand, goal_mode="presets").unwrapped
    m, d = env.model, env.data
    idx = {name: _joint_index(m, name) for name in G20_LIMITS}
    lower = np.array([G20_LIMITS[n][0] for n in G20_LIMITS])
    upper = np.array([G20_LIMITS[n][1] for n in G20_LIMITS])
    cols = np.array([idx[n] for n in G20_LIMITS])
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    contacts = 0
    for t in range(STEPS):
        *_, info = env.step(_actions(rng, t))
        q = d.qpos
        for mimic, (source, ratio) in MIMIC.items():
            assert q[idx[mimic]] == ratio * q[idx[source]], (t, mimic)  # completed exactly
        assert np.all(q[cols] >= lower) and np.all(q[cols] <= upper), t  # never past a limit, exactly
        if d.ncon:
            contacts += 1
            assert d.contact.dist[: d.ncon].min() >= -PENETRATION_TOL, t  # projection's bound, after projection
        assert info["max_penetration"] <= PENETRATION_TOL
        assert np.all(np.abs(d.actuator_force) <= G20_FORCE)
    assert contacts > 100  # the run did press into contact


def test_g20_pd_invariants_every_step() -> None:
    env = gym.make("G20Hand-v0", drive="pd", goal_mode="presets").unwrapped
    m, d = env.model, env.data
    idx = {name: _joint_index(m, name) for name in G20_LIMITS}
    act = {name: m.actuator(f"{name}_pos").id for name in G20_LIMITS}
    cols = np.array([idx[n] for n in G20_LIMITS])
    lower = np.array([G20_LIMITS[n][0] for n in G20_LIMITS])
    upper = np.array([G20_LIMITS[n][1] for n in G20_LIMITS])
    rng = np.random.default_rng(1)
    env.reset(seed=1)
    worst_force = 0.0
    for t in range(STEPS):
        env.step(_actions(rng, t))
        for mimic, (source, ratio) in MIMIC.items():
            assert d.ctrl[act[mimic]] == ratio * d.ctrl[act[source]], (t, mimic)  # coupled targets, exactly
        q = d.qpos[cols]
        assert np.all(q >= lower - PD_LIMIT_TOL) and np.all(q <= upper + PD_LIMIT_TOL), t
        worst_force = max(worst_force, float(np.abs(d.actuator_force).max()))
        assert worst_force <= G20_FORCE
    assert worst_force == G20_FORCE  # the limit was reached and held
    hold = np.zeros(16)  # hold a mid-range pose: the positions settle onto the ratio
    for _ in range(100):
        env.step(hold)
    for mimic, (source, ratio) in MIMIC.items():
        assert abs(d.qpos[idx[mimic]] - ratio * d.qpos[idx[source]]) <= PD_SETTLED_MIMIC_TOL, mimic


@pytest.mark.parametrize(
    ("env_id", "total", "base", "link"),
    [("Solenopsis-v0", SOLENOPSIS_TOTAL_MASS, SOLENOPSIS_MASS["base_link"][0], SOLENOPSIS_MASS["left_knee"][0]),
     ("M20Legacy-v0", M20_TOTAL_MASS, M20_MASS["base_link"], M20_MASS["knee"])],
)  # fmt: skip
def test_wheel_leg_forces_and_masses_every_step(env_id: str, total: float, base: float, link: float) -> None:
    env = gym.make(env_id).unwrapped
    m = env.model
    limit = np.array([KNEE_EFFORT if "knee" in m.actuator(i).name else WHEEL_EFFORT for i in range(m.nu)])
    worst = np.zeros(m.nu)

    def check_forces(_env: int, _model, data) -> None:  # every physics substep
        np.maximum(worst, np.abs(data.actuator_force), out=worst)

    env.task.physics.on_substep = check_forces
    rng = np.random.default_rng(2)
    env.reset(seed=2)
    for t in range(STEPS):
        a = rng.uniform(-1, 1, 8) if t % 200 < 150 else np.sign(rng.uniform(-1, 1, 8))  # random, then bang-bang
        _, _, terminated, truncated, _ = env.step(a)
        assert np.all(worst <= limit + 1e-12), t
        assert m.body_mass.sum() == pytest.approx(total, abs=1e-9)
        if terminated or truncated:
            env.reset()
    assert m.body("base_link").mass[0] == pytest.approx(base, abs=1e-9)
    assert m.body("fl_knee").mass[0] == pytest.approx(link, abs=1e-9)
    assert np.any(worst >= 0.999 * limit)  # bang-bang reached the limits


def test_wheel_leg_randomised_masses_stay_in_their_ranges() -> None:
    """With domain randomisation every episode's masses lie in the spec's ranges (base -1..+3 kg,
    links x0.85-1.15) and stay there through the episode."""
    env = gym.make("Solenopsis-v0", domain_randomization=True).unwrapped
    m = env.model
    base = SOLENOPSIS_MASS["base_link"][0]
    links = {f"{leg}_{part}": SOLENOPSIS_MASS[f"{side}_{part}"][0]
             for leg, side in (("fl", "left"), ("fr", "right"), ("hl", "left"), ("hr", "right"))
             for part in ("knee", "wheel")}  # fmt: skip
    seen = []
    for episode in range(20):
        env.reset(seed=episode)
        start = m.body_mass.copy()
        assert -1.0 <= m.body("base_link").mass[0] - base <= 3.0
        for name, nominal in links.items():
            assert 0.85 <= m.body(name).mass[0] / nominal <= 1.15, name
        for _ in range(25):
            env.step(np.zeros(8))
            assert np.array_equal(m.body_mass, start)
        seen.append(m.body("base_link").mass[0] - base)
    assert max(seen) - min(seen) > 1.0  # the draws do spread over the range


def test_solenopsis_holds_its_stance_every_step() -> None:
    """Zero actions: the A stance settles near +-0.6 rad with the base about 0.276 m up (spec) and stays."""
    env = gym.make("Solenopsis-v0", reset_noise_scale=0.0).unwrapped
    env.reset(seed=0)
    env.set_command(0.0, 0.0)
    knees = [_joint_index(env.model, f"{leg}_knee_joint") for leg in ("fl", "fr", "hl", "hr")]
    for t in range(500):
        _, _, terminated, _, _ = env.step(np.zeros(8))
        assert not terminated
        if t >= 25:
            q = env.data.qpos
            assert q[2] == pytest.approx(0.276, abs=0.004), t
            np.testing.assert_allclose(q[knees], (0.6, 0.6, -0.6, -0.6), atol=0.05)
