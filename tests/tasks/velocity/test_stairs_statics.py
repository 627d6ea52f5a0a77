"""scripts/stairs_statics.py: the quasi-static climb of a wheel pair on a flight, the why behind the gait's limit on
real stairs (docs/explanation/climbing-gait.md#on-real-stairs)."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from dexwheel.robots.wheel_leg import CONTACT
from dexwheel.tasks.velocity.config import ActionCfg

SCRIPT = Path(__file__).parents[3] / "scripts" / "stairs_statics.py"
_spec = importlib.util.spec_from_file_location("stairs_statics", SCRIPT)
statics = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(statics)


def test_the_least_friction_balances_a_face_climb_and_grows_as_the_centre_of_mass_moves_back():
    """A wheel on a face 0.5 m behind the support, level with it: the face friction must carry what the support
    does not; the further back the centre of mass (toward the climbing wheel), the more friction it needs, and a
    centre of mass over the support needs none."""
    assert statics.least_mu(-0.5, 0.0, 0.0) == pytest.approx(0.0, abs=1e-6)
    mus = [statics.least_mu(-0.5, 0.0, -d) for d in (0.1, 0.2, 0.3)]
    assert mus[0] < mus[1] < mus[2]
    # level, face friction f = d / 0.5 of the weight and f <= mu N <= mu^2 (1 - f): mu^2 >= f / (1 - f)
    assert mus[1] == pytest.approx(math.sqrt(0.4 / 0.6), abs=1e-3)
    assert statics.least_mu(-0.5, 0.0, -0.6) == math.inf  # behind the climbing wheel: it tips over


def test_on_real_stairs_the_hind_climb_needs_more_friction_than_the_model_has_within_the_actions_reach():
    """0.15 m risers, 0.30 m treads: inside the box the rough task's actions reach (the stance +- 0.25 rad) the hind
    wheels need a friction coefficient above the model's 1.0 to climb a riser quasi-statically, the front ones
    well under it; further out (the front arm raised, the hind one swung back) the hind climb fits under 1.0."""
    (f0, f1), (h0, h1) = statics.action_box(ActionCfg().knee_scale)
    box = [(qf, qh) for qf in np.linspace(f0, f1, 6) for qh in np.linspace(h0, h1, 6)]
    hind = min(statics.climb("hind", qf, qh, 0.15, 0.3)[0] for qf, qh in box)
    front = min(statics.climb("front", qf, qh, 0.15, 0.3)[0] for qf, qh in box)
    assert CONTACT.friction[0] == 1.0 and hind > 1.05 and front < 0.5
    mu, where = statics.climb("hind", 1.6, -1.2, 0.15, 0.3)
    assert mu < 0.8 and where["m"] == 3  # the front wheels three risers up, the body along the flight
    # on a single step's long tread the hind climb needs even more (what the gait crosses by momentum)
    assert min(statics.climb("hind", qf, qh, 0.15, 0.8)[0] for qf, qh in box) > hind
