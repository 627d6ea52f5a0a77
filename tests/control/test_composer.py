"""JointCommandComposer: the five construction rules, override ordering, fast paths, no allocation."""

from __future__ import annotations

import copy
import pickle
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dexwheel.control import (
    JointCommandComposer,
    JointCommandError,
    JointCommandLayer,
    JointLayout,
    JointTargetBuffer,
    JointTargetView,
    MotorFrame,
)
from dexwheel.control.spec_example import (  # the composer spec's example: a 29-joint policy plus two head joints
    ARMS,
    HEAD_JOINTS,
    LEGS,
    POLICY_JOINTS,
    STATE_OUTPUT_JOINTS,
    WAVE_JOINTS,
)


def _buffer(layout: JointLayout, base: float) -> JointTargetBuffer:
    buf = JointTargetBuffer(layout)
    buf.position[:] = base + np.arange(layout.dof)
    buf.kp[:] = base + 100 + np.arange(layout.dof)
    buf.kd[:] = base + 200 + np.arange(layout.dof)
    return buf


def spec_example(wave: bool = True) -> tuple[JointCommandComposer, dict[str, JointTargetBuffer]]:
    policy = _buffer(POLICY_JOINTS, 0.0)
    head = JointTargetBuffer(HEAD_JOINTS)
    head.kp[:] = (16.747, 16.747)
    head.kd[:] = (1.066, 1.066)
    head.position[:] = (0.1, -0.2)
    layers = [JointCommandLayer("policy", policy.view)]
    bufs = {"policy": policy, "head": head}
    if wave:
        bufs["wave"] = _buffer(WAVE_JOINTS, 1000.0)
        layers.append(JointCommandLayer("wave", bufs["wave"].view, override=True))
    layers.append(JointCommandLayer("head", head.view))
    return JointCommandComposer(STATE_OUTPUT_JOINTS, layers), bufs


def reference(output: JointLayout, layers: list[tuple[JointLayout, np.ndarray, bool]]) -> np.ndarray:
    """Naive composition by name: later override layers win."""
    out = np.full((5, output.dof), np.nan, dtype=np.float32)
    for layout, block, _ in layers:
        for i, name in enumerate(layout.names):
            out[:, output.index(name)] = block[:, i]
    return out


def test_spec_example_composes_policy_wave_and_head() -> None:
    composer, bufs = spec_example()
    frame = composer.compose()
    assert isinstance(frame, MotorFrame) and frame.layout == STATE_OUTPUT_JOINTS
    assert frame.qpos.dtype == np.float32 and frame.kp.dtype == np.float32
    expected = reference(
        STATE_OUTPUT_JOINTS,
        [(b.layout, b.block, False) for b in (bufs["policy"], bufs["wave"], bufs["head"])],
    )
    np.testing.assert_array_equal(frame.block, expected)
    d = frame.as_dict()
    assert d["neck_y_joint"]["kp"] == pytest.approx(16.747, rel=1e-6)
    assert d[ARMS[7]]["qpos"] == 1000.0 and d[ARMS[6]]["qpos"] == POLICY_JOINTS.index(ARMS[6])
    assert composer.owners[ARMS[8]] == "wave" and composer.owners[ARMS[6]] == "policy"
    assert composer.owners["neck_z_joint"] == "head"


def test_compose_returns_the_same_frame_and_follows_in_place_updates() -> None:
    composer, bufs = spec_example()
    first = composer.compose()
    bufs["head"].position[:] = (0.7, 0.8)
    bufs["policy"].position[0] = -5.0
    second = composer.compose()
    assert second is first is composer.frame
    assert second.qpos[-2:].tolist() == pytest.approx([0.7, 0.8])
    assert second.qpos[0] == -5.0


def _peak_bytes(fn, n: int = 1000) -> int:
    fn()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        for _ in range(n):
            fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base


def test_compose_does_not_allocate() -> None:
    composer, _ = spec_example()
    frame = composer.frame
    loop_overhead = _peak_bytes(lambda: frame)
    # Any new ndarray (even a view) costs > 100 bytes; compose creates none, however many calls.
    assert _peak_bytes(composer.compose) - loop_overhead < 100
    assert _peak_bytes(lambda: frame.block[:, 1:3]) - loop_overhead > 100  # the probe can see one view


def test_fast_paths_op_counts() -> None:
    # identity: one layer equal to the output -> a single block copy
    buf = _buffer(STATE_OUTPUT_JOINTS, 0.0)
    identity = JointCommandComposer(STATE_OUTPUT_JOINTS, [JointCommandLayer("all", buf.view)])
    assert identity.op_count == 1
    np.testing.assert_array_equal(identity.compose().block, buf.block)
    # policy with a hole punched by wave (2 runs) + wave (1) + head (1)
    composer, _ = spec_example()
    assert composer.op_count == 4
    no_wave, _ = spec_example(wave=False)
    assert no_wave.op_count == 2


def test_scattered_layer_uses_the_fancy_path_correctly() -> None:
    rng = np.random.default_rng(0)
    names = list(STATE_OUTPUT_JOINTS.names)
    perm = JointLayout([names[i] for i in rng.permutation(len(names))], "shuffled")
    buf = _buffer(perm, 0.0)
    composer = JointCommandComposer(STATE_OUTPUT_JOINTS, [JointCommandLayer("shuffled", buf.view)])
    assert composer.op_count == 2  # take into scratch + one fancy store
    np.testing.assert_array_equal(composer.compose().block, reference(STATE_OUTPUT_JOINTS, [(perm, buf.block, False)]))


# --- construction rules ---------------------------------------------------------------------------
def test_rule1_every_output_joint_is_covered() -> None:
    policy = _buffer(POLICY_JOINTS, 0.0)
    with pytest.raises(JointCommandError, match=r"\['neck_y_joint', 'neck_z_joint'\].*covered by no layer.*'policy'"):
        JointCommandComposer(STATE_OUTPUT_JOINTS, [JointCommandLayer("policy", policy.view)])


def test_rule2_no_joint_outside_the_output() -> None:
    policy = _buffer(POLICY_JOINTS, 0.0)
    head = _buffer(JointLayout(("neck_y_joint", "neck_x_joint", "neck_z_joint")), 0.0)
    with pytest.raises(JointCommandError, match=r"layer 'head' contains joints \['neck_x_joint'\].*not in the output"):
        JointCommandComposer(
            STATE_OUTPUT_JOINTS, [JointCommandLayer("policy", policy.view), JointCommandLayer("head", head.view)]
        )


def test_rule3_two_ordinary_layers_may_not_share_a_joint() -> None:
    policy = _buffer(POLICY_JOINTS, 0.0)
    wave = _buffer(WAVE_JOINTS, 0.0)
    head = _buffer(HEAD_JOINTS, 0.0)
    with pytest.raises(
        JointCommandError, match=rf"joint '{ARMS[7]}' is owned by two ordinary layers, 'policy' and 'wave'"
    ):
        JointCommandComposer(
            STATE_OUTPUT_JOINTS,
            [
                JointCommandLayer("policy", policy.view),
                JointCommandLayer("wave", wave.view),
                JointCommandLayer("head", head.view),
            ],
        )


def test_rule4_replacing_an_owner_needs_override() -> None:
    policy = _buffer(POLICY_JOINTS, 0.0)
    wave = _buffer(WAVE_JOINTS, 0.0)
    late = _buffer(JointLayout((ARMS[8], *HEAD_JOINTS.names)), 0.0)
    with pytest.raises(
        JointCommandError, match=rf"layer 'late' would replace the owner of joint '{ARMS[8]}', override layer 'wave'"
    ):
        JointCommandComposer(
            STATE_OUTPUT_JOINTS,
            [
                JointCommandLayer("policy", policy.view),
                JointCommandLayer("wave", wave.view, override=True),
                JointCommandLayer("late", late.view),
            ],
        )


def test_rule5_sources_provide_position_kp_and_kd() -> None:
    policy = _buffer(POLICY_JOINTS, 0.0)
    pos = np.zeros(2, np.float32)
    cases = [
        (
            JointTargetView(HEAD_JOINTS, pos, None, pos.copy()),
            r"layer 'head' provides no kp for joints \['neck_y_joint'",
        ),
        (JointTargetView(HEAD_JOINTS, pos, pos.copy(), None), r"layer 'head' provides no kd"),
        (JointTargetView(HEAD_JOINTS, None, pos, pos.copy()), r"layer 'head' provides no position"),
        (
            JointTargetView(HEAD_JOINTS, pos, np.zeros(2), pos.copy()),
            r"layer 'head': kp .* dtype float64, expected float32",
        ),
        (
            JointTargetView(HEAD_JOINTS, pos, np.zeros(3, np.float32), pos),
            r"layer 'head': kp .* shape \(3,\), expected \(2,\)",
        ),
    ]
    for view, message in cases:
        with pytest.raises(JointCommandError, match=message):
            JointCommandComposer(
                STATE_OUTPUT_JOINTS, [JointCommandLayer("policy", policy.view), JointCommandLayer("head", view)]
            )


def test_layer_names_unique_and_at_least_one_layer() -> None:
    with pytest.raises(JointCommandError, match="at least one layer"):
        JointCommandComposer(STATE_OUTPUT_JOINTS, [])
    policy = _buffer(POLICY_JOINTS, 0.0)
    head = _buffer(HEAD_JOINTS, 0.0)
    with pytest.raises(JointCommandError, match="layer name 'a' is used twice"):
        JointCommandComposer(
            STATE_OUTPUT_JOINTS, [JointCommandLayer("a", policy.view), JointCommandLayer("a", head.view)]
        )
    with pytest.raises(JointCommandError, match="non-blank"):
        JointCommandLayer(" ", head.view)


# --- override ordering, unset fields --------------------------------------------------------------
def test_override_ordering_last_override_wins() -> None:
    layout = JointLayout(("a", "b", "c"))
    base = _buffer(layout, 0.0)
    first = _buffer(JointLayout(("b", "c")), 10.0)
    second = _buffer(JointLayout(("c",)), 20.0)
    composer = JointCommandComposer(
        layout,
        [
            JointCommandLayer("base", base.view),
            JointCommandLayer("first", first.view, override=True),
            JointCommandLayer("second", second.view, override=True),
        ],
    )
    assert composer.compose().qpos.tolist() == [0.0, 10.0, 20.0]
    assert dict(composer.owners) == {"a": "base", "b": "first", "c": "second"}
    # an override layer that takes everything leaves the earlier layer nothing to write
    takeover = JointCommandComposer(
        layout, [JointCommandLayer("first", first.view), JointCommandLayer("base", base.view, override=True)]
    )
    assert takeover.compose().qpos.tolist() == [0.0, 1.0, 2.0]
    assert set(takeover.owners.values()) == {"base"}


def test_unset_vel_and_torque_come_out_as_zeros() -> None:
    layout = JointLayout(("knee", "wheel"))
    legs = JointTargetBuffer(layout, kp=30.0, kd=1.0)
    legs.vel[:] = 5.0  # stale-looking velocities on both joints
    legs.torque[:] = 2.0
    pos, kp, kd = (np.zeros(1, np.float32) for _ in range(3))
    wheel = JointTargetView(JointLayout(("wheel",)), pos, kp, kd)  # no vel, no torque
    composer = JointCommandComposer(
        layout, [JointCommandLayer("legs", legs.view), JointCommandLayer("wheel", wheel, override=True)]
    )
    frame = composer.compose()
    assert frame.vel.tolist() == [5.0, 0.0] and frame.torque.tolist() == [2.0, 0.0]
    frame.vel[:] = 99.0  # even a scribbled frame is rewritten whole by the next compose
    assert composer.compose().vel.tolist() == [5.0, 0.0]


def test_velocity_source_reaches_the_frame() -> None:
    wheels = JointLayout(("fl_wheel_joint", "fr_wheel_joint"))
    src = JointTargetBuffer(wheels, kp=0.0, kd=0.5)
    composer = JointCommandComposer(wheels, [JointCommandLayer("wheels", src.view)])
    src.vel[:] = (3.0, -3.0)
    assert composer.compose().vel.tolist() == [3.0, -3.0]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_partitions_match_the_naive_reference(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 40))
    names = [f"j{i}" for i in range(n)]
    output = JointLayout(data.draw(st.permutations(names)), "out")
    owner = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    layers, ref = [], []
    for k in range(4):
        mine = [names[i] for i in range(n) if owner[i] == k]
        if not mine:
            continue
        layout = JointLayout(data.draw(st.permutations(mine)), f"l{k}")
        buf = JointTargetBuffer(layout)
        buf.block[:] = np.arange(buf.block.size, dtype=np.float32).reshape(buf.block.shape) + 1000 * k
        layers.append(JointCommandLayer(f"l{k}", buf.view))
        ref.append((layout, buf.block, False))
    # an override layer over a random subset
    sub = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=n))
    if sub:
        over = JointTargetBuffer(JointLayout(sub, "over"))
        over.block[:] = -np.arange(over.block.size, dtype=np.float32).reshape(over.block.shape) - 1
        layers.append(JointCommandLayer("over", over.view, override=True))
        ref.append((over.layout, over.block, True))
    composer = JointCommandComposer(output, layers)
    np.testing.assert_array_equal(composer.compose().block, reference(output, ref))


def test_layout_basics_and_pickling() -> None:
    assert STATE_OUTPUT_JOINTS.dof == 31 and STATE_OUTPUT_JOINTS.index("neck_z_joint") == 30
    assert HEAD_JOINTS.missing_from(POLICY_JOINTS) == HEAD_JOINTS.names
    assert STATE_OUTPUT_JOINTS.select(["neck_z_joint", LEGS[0]]).names == ("neck_z_joint", LEGS[0])
    with pytest.raises(KeyError, match=r"'neck_x_joint' is not in layout 'state'; valid names: \['l_hip_y_joint'"):
        STATE_OUTPUT_JOINTS.index("neck_x_joint")
    with pytest.raises(ValueError, match="duplicate joint names"):
        JointLayout(("a", "b", "a"))
    with pytest.raises(ValueError, match="non-blank"):
        JointLayout(("a", " "))
    with pytest.raises(AttributeError):
        HEAD_JOINTS.label = "x"  # type: ignore[misc]
    assert JointLayout(HEAD_JOINTS.names, "other label") == HEAD_JOINTS
    assert pickle.loads(pickle.dumps(STATE_OUTPUT_JOINTS)) == STATE_OUTPUT_JOINTS
    buf = _buffer(HEAD_JOINTS, 3.0)
    for clone in (pickle.loads(pickle.dumps(buf)), copy.deepcopy(buf)):
        np.testing.assert_array_equal(clone.block, buf.block)
        clone.position[0] = -1.0
        assert clone.block[0, 0] == -1.0 and clone.view.position is clone.position
    frame = pickle.loads(pickle.dumps(spec_example()[0].compose()))
    frame.qpos[0] = 7.0
    assert frame.block[0, 0] == 7.0


@pytest.mark.parametrize("clone", [copy.deepcopy, copy.copy, lambda v: pickle.loads(pickle.dumps(v))])
def test_a_copied_view_is_one_independent_block_a_composer_reads(clone) -> None:
    buf = _buffer(HEAD_JOINTS, 3.0)
    view = clone(buf.view)
    np.testing.assert_array_equal(view.block, buf.block)
    view.position[:] = 9.0  # its rows are views of its own block, not of the original's
    assert view.block[0].tolist() == [9.0, 9.0] and buf.position.tolist() == [3.0, 4.0]
    assert JointCommandComposer(HEAD_JOINTS, [JointCommandLayer("head", view)]).compose().qpos.tolist() == [9.0, 9.0]
    wrapped = JointTargetView(HEAD_JOINTS, buf.position, buf.kp, buf.kd)  # arrays owned elsewhere, no block
    other = clone(wrapped)
    other.kp[:] = 0.0
    assert other.vel is None and buf.kp.tolist() == [103.0, 104.0]
    assert JointCommandComposer(HEAD_JOINTS, [JointCommandLayer("head", other)]).compose().kp.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("clone", [copy.deepcopy, copy.copy, pickle.dumps])
def test_copying_a_composer_is_refused_saying_to_build_another(clone) -> None:
    composer, _ = spec_example()
    with pytest.raises(TypeError, match=r"^a JointCommandComposer cannot be copied or pickled: .*; build another "
                                        r"JointCommandComposer over the sources it should merge$"):  # fmt: skip
        clone(composer)
