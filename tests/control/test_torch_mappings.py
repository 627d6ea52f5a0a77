"""The G20 mappings, the mimic completion and the hand's composer path run on torch as on numpy (one
implementation, :mod:`dexwheel.control._xp`): float64 in, the same bits out; what the Isaac Lab G20 task runs."""

from __future__ import annotations

import numpy as np
import pytest

from dexwheel.control.g20_sdk import (
    G20_MIMIC,
    G20SdkMapping,
    g20_delta_mapping,
    g20_nominal_mapping,
    g20_normalized_mapping,
)
from dexwheel.tasks.hand.action_path import HandActionPath

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(7)


def _same(a: np.ndarray, t) -> bool:
    return t.dtype == torch.float64 and np.array_equal(a, t.numpy())


@pytest.mark.parametrize("hand", ["left", "right"])
def test_sdk255_goals(hand):
    sdk = G20SdkMapping(hand)
    values = RNG.integers(0, 256, (64, 20)).astype(np.float64)
    values[0], values[1] = 0.0, 255.0  # the tables' clipped ends
    assert _same(sdk.goals(values), sdk.goals(torch.from_numpy(values)))


def test_normalized_nominal_and_delta_goals():
    a = RNG.uniform(-1.0, 1.0, (64, 16))
    previous = RNG.uniform(G20_MIMIC.active_lower, G20_MIMIC.active_upper, (64, 16))
    radians = RNG.uniform(G20_MIMIC.active_lower - 0.1, G20_MIMIC.active_upper + 0.1, (64, 16))
    for mapping, x in ((g20_normalized_mapping(), a), (g20_nominal_mapping(), radians)):
        assert _same(mapping.goals(x), mapping.goals(torch.from_numpy(x)))
    delta = g20_delta_mapping(0.05)
    assert _same(delta.goals(a, previous), delta.goals(torch.from_numpy(a), torch.from_numpy(previous)))


def test_mimic_completion():
    q = RNG.uniform(-0.5, 2.0, (3, 8, 16))  # past the limits too: clipping decides
    for clip in (False, True):
        assert _same(G20_MIMIC.complete(q, clip_mimic=clip), G20_MIMIC.complete(torch.from_numpy(q), clip_mimic=clip))
    assert _same(G20_MIMIC.clip_and_complete(q), G20_MIMIC.clip_and_complete(torch.from_numpy(q)))


@pytest.mark.parametrize("layers", [("policy",), ("policy", "hold")])
def test_the_hand_command_path(layers):
    hold = G20SdkMapping("left").goals(np.full(20, 255.0))
    limits = (G20_MIMIC.active_lower, G20_MIMIC.active_upper)
    on_numpy = HandActionPath(layers, "thumb", hold, limits, 5)
    on_torch = HandActionPath(layers, "thumb", hold, limits, 5, xp=torch, device="cpu")
    goals = RNG.uniform(G20_MIMIC.active_lower, G20_MIMIC.active_upper, (5, 16))
    assert _same(on_numpy(goals), on_torch(torch.from_numpy(goals)))
