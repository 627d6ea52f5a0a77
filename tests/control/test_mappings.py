"""Action mappings: expected values are computed here from the spec's tables and formulas, written out
(docs/spec/g20.md, "SDK channel protocol"), never by calling the code under test."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dexwheel.control import (
    G20_MIMIC,
    ActionClipWarning,
    ActionError,
    DeltaMapping,
    G20SdkMapping,
    NominalMapping,
    NormalizedMapping,
    UnknownJointError,
    clip_and_complete,
    complete_mimic,
    g20_delta_mapping,
    g20_nominal_mapping,
    g20_normalized_mapping,
)
from dexwheel.robots import g20

# --- the spec, written out ------------------------------------------------------------------------
SPEC_MIN = [0, 0, 0, 0, 0, 0.0, -0.23, -0.23, -0.23, -0.23, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
SPEC_MAX = [0.84, 1.22, 1.22, 1.22, 1.22, 1.47, 0.23, 0.23, 0.23, 0.23, 1.57, 0, 0, 0, 0, 1.29, 1.55, 1.55, 1.55, 1.55]
SPEC_DIR = [-1, -1, -1, -1, -1, -1, +1, +1, +1, +1, -1, 0, 0, 0, 0, -1, -1, -1, -1, -1]
SPEC_CHANNEL = {
    0: "thumb_cmc_pitch",
    1: "index_mcp_pitch",
    2: "middle_mcp_pitch",
    3: "ring_mcp_pitch",
    4: "pinky_mcp_pitch",
    5: "thumb_cmc_roll",
    6: "index_mcp_roll",
    7: "middle_mcp_roll",
    8: "ring_mcp_roll",
    9: "pinky_mcp_roll",
    10: "thumb_cmc_yaw",
    15: "thumb_mcp",
    16: "index_pip",
    17: "middle_pip",
    18: "ring_pip",
    19: "pinky_pip",
}
SPEC_DIVISOR = {15: 1.02, 16: 0.89, 17: 0.89, 18: 0.89, 19: 0.89}
SPEC_MIMIC = {"thumb_ip": ("thumb_mcp", 1.02), **{f"{f}_dip": (f"{f}_pip", 0.89) for f in g20.FINGERS}}
SPEC_LIMITS = {
    "thumb_cmc_roll": (0, 1.47),
    "thumb_cmc_yaw": (0, 1.57),
    "thumb_cmc_pitch": (0, 0.84),
    "thumb_mcp": (0, 1.26),
    "thumb_ip": (0, 1.29),
    **{f"{f}_mcp_roll": (-0.23, 0.23) for f in g20.FINGERS},
    **{f"{f}_mcp_pitch": (0, 1.22) for f in g20.FINGERS},
    **{f"{f}_pip": (0, 1.74) for f in g20.FINGERS},
    **{f"{f}_dip": (0, 1.55) for f in g20.FINGERS},
}
SPEC_OPEN = [255, 255, 255, 255, 255, 255, 193, 148, 105, 42, 245, 255, 255, 255, 255, 255, 255, 255, 255, 255]
SPEC_HALF_FIST = [80, 80, 80, 80, 80, 255, 193, 148, 105, 42, 245, 255, 255, 255, 255, 80, 80, 80, 80, 80]


def spec_radians(cmd: list[float]) -> dict[str, float]:
    """The spec's protocol in plain Python: interpolate, divide, clip, complete."""
    cmd = list(cmd)[:20] + [255] * max(0, 20 - len(cmd))
    q: dict[str, float] = {}
    for ch, joint in SPEC_CHANNEL.items():
        lo, hi, d = SPEC_MIN[ch], SPEC_MAX[ch], SPEC_DIR[ch]
        value = lo + cmd[ch] / 255 * (hi - lo) if d == +1 else hi - cmd[ch] / 255 * (hi - lo)
        value /= SPEC_DIVISOR.get(ch, 1.0)
        q[joint] = min(max(value, SPEC_LIMITS[joint][0]), SPEC_LIMITS[joint][1])
    for mimic, (src, ratio) in SPEC_MIMIC.items():
        q[mimic] = q[src] * ratio
    return q


def as_dict(q: np.ndarray) -> dict[str, float]:
    assert q.shape == (21,)
    return dict(zip(g20.ALL_JOINTS, q.tolist(), strict=True))


def test_robot_tables_match_the_spec() -> None:
    assert list(g20.G20_L_MIN) == SPEC_MIN and list(g20.G20_L_MAX) == SPEC_MAX and list(g20.G20_L_DIR) == SPEC_DIR
    assert list(g20.G20_OPEN_CMD) == SPEC_OPEN and list(g20.G20_HALF_FIST_CMD) == SPEC_HALF_FIST


# --- SDK protocol -----------------------------------------------------------------------------------
def test_open_preset_exact_radians() -> None:
    q = as_dict(G20SdkMapping()(SPEC_OPEN))
    assert q["index_mcp_roll"] == pytest.approx(-0.23 + 193 / 255 * 0.46, abs=1e-12)
    assert q["middle_mcp_roll"] == pytest.approx(-0.23 + 148 / 255 * 0.46, abs=1e-12)
    assert q["ring_mcp_roll"] == pytest.approx(-0.23 + 105 / 255 * 0.46, abs=1e-12)
    assert q["pinky_mcp_roll"] == pytest.approx(-0.23 + 42 / 255 * 0.46, abs=1e-12)
    assert q["thumb_cmc_yaw"] == pytest.approx(1.57 - 245 / 255 * 1.57, abs=1e-12)
    for joint in ("thumb_cmc_roll", "thumb_cmc_pitch", "thumb_mcp", "thumb_ip"):
        assert q[joint] == pytest.approx(0.0, abs=1e-12)
    for f in g20.FINGERS:
        for j in ("mcp_pitch", "pip", "dip"):
            assert q[f"{f}_{j}"] == pytest.approx(0.0, abs=1e-12)


def test_half_fist_exact_radians() -> None:
    q = as_dict(G20SdkMapping()(SPEC_HALF_FIST))
    pip = (1.55 - 80 / 255 * 1.55) / 0.89
    thumb_mcp = (1.29 - 80 / 255 * 1.29) / 1.02
    for f in g20.FINGERS:
        assert q[f"{f}_mcp_pitch"] == pytest.approx(1.22 - 80 / 255 * 1.22, abs=1e-12)
        assert q[f"{f}_pip"] == pytest.approx(pip, abs=1e-12)
        assert q[f"{f}_dip"] == pytest.approx(pip * 0.89, abs=1e-12)  # divide, then complete
    assert q["thumb_cmc_pitch"] == pytest.approx(0.84 - 80 / 255 * 0.84, abs=1e-12)
    assert q["thumb_mcp"] == pytest.approx(thumb_mcp, abs=1e-12)
    assert q["thumb_ip"] == pytest.approx(thumb_mcp * 1.02, abs=1e-12)
    assert q["thumb_cmc_roll"] == pytest.approx(0.0, abs=1e-12)
    assert q["index_mcp_roll"] == pytest.approx(-0.23 + 193 / 255 * 0.46, abs=1e-12)


def test_overshooting_tables_are_clipped_then_completed() -> None:
    cmd = [255] * 15 + [0, 0, 0, 0, 0]
    assert 1.29 / 1.02 > 1.26 and 1.55 / 0.89 > 1.74  # the vendor SDK tables overshoot
    q = as_dict(G20SdkMapping()(cmd))
    assert q["thumb_mcp"] == pytest.approx(1.26, abs=1e-12)
    assert q["thumb_ip"] == pytest.approx(1.26 * 1.02, abs=1e-12)
    assert q["thumb_ip"] == pytest.approx(1.2852, abs=1e-12)
    for f in g20.FINGERS:
        assert q[f"{f}_pip"] == pytest.approx(1.74, abs=1e-12)
        assert q[f"{f}_dip"] == pytest.approx(1.74 * 0.89, abs=1e-12)


@pytest.mark.parametrize("preset", ["G20_OPEN_CMD", "G20_HALF_FIST_CMD", "G20_FULL_FIST_CMD"])
@pytest.mark.parametrize("hand", ["left", "right"])
def test_presets_match_the_spec_formula(preset: str, hand: str) -> None:
    cmd = list(getattr(g20, preset))
    q = as_dict(G20SdkMapping(hand)(cmd))  # type: ignore[arg-type]
    expected = spec_radians(cmd)
    for joint in g20.ALL_JOINTS:
        assert q[joint] == pytest.approx(expected[joint], abs=1e-12), joint


def test_short_command_is_padded_with_255_and_long_one_truncated() -> None:
    m = G20SdkMapping()
    np.testing.assert_allclose(m([]), [spec_radians([255] * 20)[j] for j in g20.ALL_JOINTS], atol=1e-12)
    short = [80, 80, 80, 80, 80]
    np.testing.assert_allclose(m(short), [spec_radians(short)[j] for j in g20.ALL_JOINTS], atol=1e-12)
    long = [*SPEC_HALF_FIST, 0, 0, 0]
    np.testing.assert_allclose(m(long), [spec_radians(SPEC_HALF_FIST)[j] for j in g20.ALL_JOINTS], atol=1e-12)


def test_reserved_channels_are_skipped() -> None:
    m = G20SdkMapping()
    a = m(SPEC_HALF_FIST).copy()
    cmd = list(SPEC_HALF_FIST)
    cmd[11:15] = [0, 17, 200, 3]
    np.testing.assert_array_equal(m(cmd), a)


def test_to_sdk_inverse_of_presets_and_reserved_255() -> None:
    m = G20SdkMapping()
    for cmd in (SPEC_OPEN, SPEC_HALF_FIST):
        q = m(cmd)
        assert m.to_sdk(q).tolist() == cmd
        assert m.to_sdk(q[[g20.ALL_JOINTS.index(j) for j in g20.ACTIVE_JOINTS]]).tolist() == cmd
    assert m.to_sdk(np.zeros(21))[11:15].tolist() == [255] * 4
    # clipped ends: 1 count away at most
    assert m.to_sdk(m([255] * 15 + [0] * 5))[15:].tolist() == [1, 0, 0, 0, 0]


@settings(max_examples=200, deadline=None)
@given(cmd=st.lists(st.integers(0, 255), min_size=20, max_size=20), hand=st.sampled_from(["left", "right"]))
def test_sdk_round_trip_within_one_count(cmd: list[int], hand: str) -> None:
    m = G20SdkMapping(hand)  # type: ignore[arg-type]
    back = m.to_sdk(m(cmd)).tolist()
    for ch in range(20):
        if ch in (11, 12, 13, 14):
            assert back[ch] == 255
        elif ch == 15 and cmd[ch] == 0:  # the clipped end of thumb_mcp
            assert back[ch] == 1
        else:
            assert back[ch] == cmd[ch], ch


@settings(max_examples=200, deadline=None)
@given(
    cmd=st.lists(st.integers(0, 255).map(float), min_size=0, max_size=20),
    hand=st.sampled_from(["left", "right"]),
)
def test_random_sdk_commands_stay_inside_every_limit(cmd: list[float], hand: str) -> None:
    q = as_dict(G20SdkMapping(hand)(cmd))  # type: ignore[arg-type]
    for joint, (lo, hi) in SPEC_LIMITS.items():
        assert lo <= q[joint] <= hi, joint
    for mimic, (src, ratio) in SPEC_MIMIC.items():
        assert q[mimic] == pytest.approx(q[src] * ratio, abs=1e-12)


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        (256, "outside the allowed range [0, 255]"),
        (-1, "outside the allowed range [0, 255]"),
        (float("nan"), "not finite"),
        (float("inf"), "not finite"),
    ],
)
def test_sdk_out_of_range_is_rejected_by_default(value: float, needle: str) -> None:
    m = G20SdkMapping()
    m(SPEC_OPEN)
    before = m(SPEC_OPEN).copy()
    cmd = list(SPEC_OPEN)
    cmd[3] = value
    with pytest.raises(ActionError, match=r"SDK channel 3 \(ring_mcp_pitch\)") as info:
        m(cmd)
    assert needle in str(info.value)
    np.testing.assert_array_equal(m(SPEC_OPEN), before)


def test_sdk_clip_mode_counts_and_warns() -> None:
    m = G20SdkMapping(out_of_range="clip")
    m(SPEC_HALF_FIST)
    cmd = list(SPEC_OPEN)
    cmd[0] = 300.0  # -> 255
    cmd[16] = float("nan")  # holds the previous value, 80
    cmd[17] = -float("inf")  # -> 0
    with pytest.warns(ActionClipWarning, match="clipped 3"):
        q = as_dict(m(cmd))
    assert m.clip_count == 3 and m.last_clip_count == 3
    expected = dict(spec_radians(SPEC_OPEN))
    assert q["thumb_cmc_pitch"] == pytest.approx(expected["thumb_cmc_pitch"], abs=1e-12)
    assert q["index_pip"] == pytest.approx((1.55 - 80 / 255 * 1.55) / 0.89, abs=1e-12)
    assert q["middle_pip"] == pytest.approx(1.74, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(SPEC_OPEN)
    assert m.clip_count == 3 and m.last_clip_count == 0


def test_sdk_shape_errors() -> None:
    m = G20SdkMapping()
    with pytest.raises(ActionError, match=r"got shape \(2, 10\)"):
        m(np.zeros((2, 10)))
    with pytest.raises(ActionError, match=r"shape \(21,\).*\(16,\).*got \(5,\)"):
        m.to_sdk(np.zeros(5))
    with pytest.raises(ValueError, match="out_of_range"):
        G20SdkMapping(out_of_range="wrap")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hand"):
        G20SdkMapping("middle")  # type: ignore[arg-type]


def test_out_parameter_writes_float32_buffer() -> None:
    out = np.zeros(21, dtype=np.float32)
    res = G20SdkMapping()(SPEC_HALF_FIST, out=out)
    assert res is out
    np.testing.assert_allclose(out, [spec_radians(SPEC_HALF_FIST)[j] for j in g20.ALL_JOINTS], atol=1e-6)


# --- mimic helpers --------------------------------------------------------------------------------
def test_complete_mimic_and_clip_and_complete() -> None:
    active = np.array([{"thumb_mcp": 1.3}.get(j, 0.5) for j in g20.ACTIVE_JOINTS])
    full = as_dict(complete_mimic(active))
    assert full["thumb_ip"] == pytest.approx(1.3 * 1.02) and full["index_dip"] == pytest.approx(0.5 * 0.89)
    clipped = as_dict(clip_and_complete(active))
    assert clipped["thumb_mcp"] == pytest.approx(1.26) and clipped["thumb_ip"] == pytest.approx(1.26 * 1.02)
    assert clipped["index_mcp_roll"] == pytest.approx(0.23)


def test_mimic_completion_is_the_same_for_one_vector_and_any_batch() -> None:
    """The drives complete (envs, substeps, 16) at once; every row must equal the single-vector result."""
    rng = np.random.default_rng(0)
    lo = np.array([SPEC_LIMITS[j][0] for j in g20.ACTIVE_JOINTS])
    hi = np.array([SPEC_LIMITS[j][1] for j in g20.ACTIVE_JOINTS])
    batch = rng.uniform(lo - 0.2, hi + 0.2, (3, 10, len(g20.ACTIVE_JOINTS)))  # some beyond the limits
    full = G20_MIMIC.clip_and_complete(batch)
    assert full.shape == (3, 10, len(g20.ALL_JOINTS))
    for row, done in zip(batch.reshape(-1, len(lo)), full.reshape(-1, len(g20.ALL_JOINTS)), strict=True):
        assert np.array_equal(done, clip_and_complete(row))
        by_name = as_dict(done)
        for mimic, (src, ratio) in SPEC_MIMIC.items():
            lo_m, hi_m = SPEC_LIMITS[mimic]
            assert by_name[mimic] == min(max(by_name[src] * ratio, lo_m), hi_m)  # clipped source, then ratio
    with pytest.raises(ActionError, match=r"shape \(\.\.\., 16\)"):
        G20_MIMIC.complete(np.zeros(15))


# --- normalized / delta / nominal / wheel --------------------------------------------------------
def test_normalized_maps_the_ends_and_middle() -> None:
    m = g20_normalized_mapping()
    n = len(g20.ACTIVE_JOINTS)
    lo = as_dict(m(-np.ones(n)).copy())
    hi = as_dict(m(np.ones(n)).copy())
    mid = as_dict(m(np.zeros(n)).copy())
    for joint in g20.ACTIVE_JOINTS:
        a, b = SPEC_LIMITS[joint]
        assert (
            lo[joint] == pytest.approx(a) and hi[joint] == pytest.approx(b) and mid[joint] == pytest.approx((a + b) / 2)
        )
    assert hi["thumb_ip"] == pytest.approx(1.26 * 1.02) and hi["pinky_dip"] == pytest.approx(1.74 * 0.89)


def test_normalized_errors_name_field_joint_and_range() -> None:
    m = NormalizedMapping({"a": (0.0, 1.0), "b": (-1.0, 1.0)})
    assert m([0.5, 0.0]).tolist() == pytest.approx([0.75, 0.0])
    with pytest.raises(ActionError, match=r"action\[1\] \(b\) = 1.5 is outside the allowed range \[-1, 1\]"):
        m([0.0, 1.5])
    with pytest.raises(ActionError, match=r"shape \(2,\), got \(3,\)"):
        m([0.0, 0.0, 0.0])
    clip = NormalizedMapping({"a": (0.0, 1.0), "b": (-1.0, 1.0)}, out_of_range="clip")
    with pytest.warns(ActionClipWarning):
        assert clip([2.0, float("nan")]).tolist() == pytest.approx([1.0, 0.0])
    assert clip.clip_count == 2


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=16, max_size=16))
def test_random_normalized_actions_stay_inside_every_limit(action: list[float]) -> None:
    q = as_dict(g20_normalized_mapping()(action))
    for joint, (lo, hi) in SPEC_LIMITS.items():
        assert lo <= q[joint] <= hi, joint


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.floats(-1, 1), min_size=16, max_size=16), min_size=1, max_size=30))
def test_random_delta_sequences_stay_inside_every_limit(actions: list[list[float]]) -> None:
    m = g20_delta_mapping(0.2)
    for a in actions:
        q = as_dict(m(a))
        for joint, (lo, hi) in SPEC_LIMITS.items():
            assert lo <= q[joint] <= hi, joint


def test_delta_accumulates_clips_and_resets() -> None:
    m = DeltaMapping({"a": (0.0, 1.0)}, 0.25)
    assert m([1.0])[0] == pytest.approx(0.25)
    assert m([1.0])[0] == pytest.approx(0.5)
    for _ in range(5):
        m([1.0])
    assert m([0.0])[0] == pytest.approx(1.0)  # clipped to the limit, not counted
    assert m.clip_count == 0
    m.reset()
    assert m.goal.tolist() == [0.0]
    with pytest.raises(ActionError, match=r"action\[0\] \(a\)"):
        m([float("nan")])


def test_nominal_subset_keeps_previous_goal() -> None:
    m = g20_nominal_mapping()
    q = as_dict(m({"index_pip": 1.0, "thumb_mcp": 0.5}).copy())
    assert q["index_pip"] == 1.0 and q["index_dip"] == pytest.approx(0.89)
    assert q["thumb_ip"] == pytest.approx(0.51)
    q2 = as_dict(m({"middle_pip": 0.3}).copy())
    assert q2["index_pip"] == 1.0 and q2["middle_pip"] == 0.3 and q2["thumb_mcp"] == 0.5
    with pytest.raises(ActionError, match=r"index_dip is a mimic joint: it follows index_pip \(x 0.89\)"):
        m({"index_dip": 0.1})  # a mimic joint follows its source: not a separate command
    assert as_dict(m({})) == q2


def test_nominal_unknown_names_listed_with_valid_ones() -> None:
    m = g20_nominal_mapping()
    with pytest.raises(UnknownJointError) as info:
        m({"index_pip": 0.1, "idx_pip": 0.2, "wrist": 0.0})
    msg = str(info.value)
    assert "'idx_pip'" in msg and "'wrist'" in msg and "thumb_cmc_yaw" in msg
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert as_dict(m({}))["index_pip"] == 0.0  # failed call changed nothing


def test_nominal_rejects_nan_and_out_of_range_or_clips() -> None:
    m = NominalMapping(("a", "b"), {"a": (0.0, 1.0), "b": (-1.0, 1.0)}, {"a": 0.5})
    assert m({}).tolist() == [0.5, 0.0]
    with pytest.raises(ActionError, match=r"target\['a'\] = nan is not finite; allowed range \[0, 1\]"):
        m({"a": float("nan")})
    with pytest.raises(ActionError, match=r"target\['b'\] = 2.0 is outside the allowed range \[-1, 1\]"):
        m({"b": 2.0})
    c = NominalMapping(("a", "b"), {"a": (0.0, 1.0), "b": (-1.0, 1.0)}, {"a": 0.5}, out_of_range="clip")
    with pytest.warns(ActionClipWarning):
        assert c({"a": float("nan"), "b": 2.0}).tolist() == [0.5, 1.0]
    assert c.clip_count == 2


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(g20.ACTIVE_JOINTS),
        st.floats(allow_nan=True, allow_infinity=True),
        max_size=16,
    )
)
def test_random_nominal_targets_in_clip_mode_stay_inside_every_limit(targets: dict[str, float]) -> None:
    m = g20_nominal_mapping(out_of_range="clip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ActionClipWarning)
        q = as_dict(m(targets))
    for joint, (lo, hi) in SPEC_LIMITS.items():
        assert lo <= q[joint] <= hi, joint


# --- refusals change nothing; configured goals are taken as given -----------------------------------
def state(m: object) -> dict:
    """Every attribute of a mapping, arrays copied: what a refused call must leave as it was."""
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in vars(m).items()}


def assert_same_state(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k], k


@pytest.mark.parametrize(
    ("make", "action"),
    [(g20_normalized_mapping, np.full(16, 0.5)), (lambda: g20_delta_mapping(0.1), np.ones(16)),
     (g20_nominal_mapping, {"index_pip": 1.0}), (G20SdkMapping, SPEC_HALF_FIST),
     (lambda: G20SdkMapping(out_of_range="clip"), [300] * 20)],
)  # fmt: skip
def test_a_wrong_out_is_refused_before_the_mapping_changes(make, action) -> None:
    m = make()
    before = state(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ActionClipWarning)  # nor does a refused call count or warn of clipping
        with pytest.raises(ActionError, match=r"out must have shape \((21|2),\), got \(5,\)"):
            m(action, out=np.zeros(5))
    assert_same_state(before, state(m))


@pytest.mark.parametrize(
    ("make", "message"),
    [(lambda: g20_nominal_mapping(initial={"index_pip": 99.0}),
      r"^initial\['index_pip'\] = 99.0 is outside the allowed range \[0, 1.74\]$"),
     (lambda: g20_nominal_mapping(initial=np.full(16, 9.0), out_of_range="clip"),
      r"^initial\[0\] \(pinky_mcp_roll\) = 9.0 is outside the allowed range \[-0.23, 0.23\] \(and 15 more\)$"),
     (lambda: g20_nominal_mapping(initial={"index_pip": float("nan")}), r"initial\['index_pip'\] = nan is not finite"),
     (lambda: DeltaMapping({"a": (0.0, 1.0)}, 0.1, initial=[2.0]),
      r"^initial\[0\] \(a\) = 2.0 is outside the allowed range \[0, 1\]$")],
)  # fmt: skip
def test_an_initial_goal_out_of_range_is_refused_not_clipped(make, message: str) -> None:
    with pytest.raises(ActionError, match=message):
        make()


def test_a_refused_reset_leaves_the_goal_and_the_initial_goal() -> None:
    m = g20_nominal_mapping(initial={"index_pip": 1.0}, out_of_range="clip")
    m({"middle_pip": 0.5})
    for goal, message in [({"index_pip": 99.0}, r"^goal\['index_pip'\] = 99.0 is outside the allowed range \[0, 1.74\]$"),
                          (np.full(16, 9.0), r"^goal\[0\] \(pinky_mcp_roll\) = 9.0 is outside"),
                          ({"index_pip": 0.2, "thumb_ip": 0.1}, "thumb_ip is a mimic joint")]:  # fmt: skip
        before = state(m)
        with pytest.raises(ActionError, match=message):
            m.reset(goal)
        assert_same_state(before, state(m))
    m.reset({"ring_pip": 0.3})  # joints not named: the initial goal
    q = as_dict(m({}))
    assert (q["index_pip"], q["ring_pip"], q["middle_pip"]) == (1.0, 0.3, 0.0)
    d = DeltaMapping({"a": (0.0, 1.0)}, 0.25, initial=[0.5])
    d([1.0])
    with pytest.raises(ActionError, match=r"^goal\[0\] \(a\) = -1.0 is outside the allowed range \[0, 1\]$"):
        d.reset([-1.0])
    assert d.goal.tolist() == [0.75]
    d.reset()
    assert d.goal.tolist() == [0.5]


@pytest.mark.parametrize("value", ["1.0", None, 1 + 0j, [1.0], b"1"])
def test_a_joint_value_that_is_no_number_is_refused_naming_the_joint(value) -> None:
    m = g20_nominal_mapping()
    before = state(m)
    with pytest.raises(ActionError, match=r"^NominalMapping: target\['index_pip'\] = .* is not a number; "
                                          r"allowed range \[0, 1.74\]$"):  # fmt: skip
        m({"thumb_mcp": 0.5, "index_pip": value})
    assert_same_state(before, state(m))
    with pytest.raises(ActionError, match=r"goal\['index_pip'\] = .* is not a number; allowed range \[0, 1.74\]"):
        m.checked({"index_pip": value}, m.goal)
    assert (
        m({"index_pip": np.float32(1.0), "thumb_mcp": 1, "middle_pip": True})[g20.ALL_JOINTS.index("index_pip")] == 1.0
    )


def test_a_vector_entry_that_is_no_number_is_refused_naming_the_joint() -> None:
    with pytest.raises(
        ActionError, match=r"^action\[0\] \(pinky_mcp_roll\) = '0.5' is not a number; allowed range \[-1, 1\]$"
    ):
        g20_normalized_mapping()(["0.5"] * 16)
    goal = [0.0] * 16
    goal[11] = "1.0"
    with pytest.raises(
        ActionError, match=r"^goal\[11\] \(index_pip\) = '1.0' is not a number; allowed range \[0, 1.74\]$"
    ):
        g20_nominal_mapping().checked(np.array(goal, dtype=object), np.zeros(16))
    with pytest.raises(ActionError, match=r"action\[1\] \(\w+\) = None is not a number"):
        g20_normalized_mapping()([0.5, None] + [0.5] * 14)
