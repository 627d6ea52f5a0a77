"""JointCommandResolver: drop with one warning, defaults, construction errors, caching, identity."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

from dexwheel.control import (
    JointCommandComposer,
    JointCommandDefaults,
    JointCommandError,
    JointCommandLayer,
    JointCommandResolver,
    JointDefault,
    JointDroppedWarning,
    JointLayout,
    JointTargetBuffer,
    MotorFrame,
)

BODY = tuple(f"j{i:02d}" for i in range(29))
HEAD = ("neck_y_joint", "neck_z_joint")
STATE31 = JointLayout((*BODY, *HEAD), "state31")
ROBOT29 = JointLayout(BODY, "robot29")
ROBOT31 = JointLayout((*BODY, *HEAD), "robot31")


def frame_of(layout: JointLayout, base: float = 0.0) -> MotorFrame:
    frame = MotorFrame(layout)
    frame.block[:] = base + np.arange(frame.block.size, dtype=np.float32).reshape(frame.block.shape)
    return frame


def test_identity_fast_path() -> None:
    resolver = JointCommandResolver(ROBOT31)
    src = frame_of(STATE31)
    out = resolver.resolve_into(src)
    assert resolver.is_identity(STATE31)
    assert out is not src and out.layout == ROBOT31
    np.testing.assert_array_equal(out.block, src.block)
    src.qpos[0] = -1.0
    assert resolver.resolve_into(src) is out and out.qpos[0] == -1.0


def test_dropped_joints_warn_once_per_binding() -> None:
    resolver = JointCommandResolver(ROBOT29)
    src = frame_of(STATE31)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = resolver.resolve_into(src)
        for _ in range(5):
            resolver.resolve_into(src)
        resolver.resolve_into(frame_of(STATE31, 7.0))  # another frame, same layout: same binding
        resolver.bind(STATE31)
    dropped = [w for w in caught if issubclass(w.category, JointDroppedWarning)]
    assert len(dropped) == 1
    assert "'neck_y_joint', 'neck_z_joint'" in str(dropped[0].message) and "robot29" in str(dropped[0].message)
    assert resolver.dropped(STATE31) == HEAD
    np.testing.assert_array_equal(resolver.resolve_into(src).block, src.block[:, :29])
    assert resolver.resolve_into(src) is out


def test_missing_joints_need_defaults_named_in_the_error() -> None:
    with pytest.raises(JointCommandError, match=r"\['neck_y_joint', 'neck_z_joint'\].*no JointCommandDefaults"):
        JointCommandResolver(ROBOT31, sources=[ROBOT29])
    resolver = JointCommandResolver(ROBOT31)
    with pytest.raises(JointCommandError, match="neck_y_joint"):
        resolver.resolve_into(frame_of(ROBOT29))


def test_missing_joints_filled_from_defaults() -> None:
    defaults = JointCommandDefaults(
        {"neck_y_joint": JointDefault(0.1, 16.747, 1.066), "neck_z_joint": JointDefault(-0.2, 16.747, 1.066)}
    )
    resolver = JointCommandResolver(ROBOT31, defaults, sources=[ROBOT29])
    src = frame_of(ROBOT29, 1.0)
    out = resolver.resolve_into(src)
    np.testing.assert_array_equal(out.block[:, :29], src.block)
    assert out.qpos[29:].tolist() == pytest.approx([0.1, -0.2])
    assert out.kp[29:].tolist() == pytest.approx([16.747, 16.747])
    assert out.kd[29:].tolist() == pytest.approx([1.066, 1.066])
    assert out.vel[29:].tolist() == [0.0, 0.0] and out.torque[29:].tolist() == [0.0, 0.0]
    assert resolver.defaulted(ROBOT29) == HEAD


def test_defaults_are_validated() -> None:
    with pytest.raises(ValueError, match="kp=-1"):
        JointDefault(0.0, -1.0, 0.0)
    with pytest.raises(ValueError, match="position must be a finite"):
        JointDefault(float("nan"), 1.0, 0.0)
    with pytest.raises(JointCommandError, match=r"\['waist_joint'\] that robot 'robot29' does not have"):
        JointCommandResolver(ROBOT29, {"waist_joint": JointDefault(0.0, 1.0, 0.1)})
    with pytest.raises(TypeError, match="neck_y_joint"):
        JointCommandDefaults({"neck_y_joint": (0.0, 1.0, 0.1)})  # type: ignore[dict-item]


def test_bindings_cached_per_source_layout() -> None:
    defaults = JointCommandDefaults.uniform(HEAD, JointDefault(0.0, 10.0, 1.0))
    resolver = JointCommandResolver(ROBOT31, defaults)
    a = resolver.bind(ROBOT29)
    b = resolver.bind(JointLayout(BODY, "another label, same names"))
    assert a is b
    c = resolver.bind(STATE31)
    assert c is not a
    # alternating sources each land in their own frame
    f29, f31 = frame_of(ROBOT29, 1.0), frame_of(STATE31, 2.0)
    assert resolver.resolve_into(f29) is a and resolver.resolve_into(f31) is c and resolver.resolve_into(f29) is a
    assert a.qpos[0] == 1.0 and c.qpos[0] == 2.0


def test_reordering_to_robot_order_and_resolve_copy() -> None:
    policy = JointLayout([f"{leg}_{part}_joint" for part in ("knee", "wheel") for leg in ("fl", "fr", "hl", "hr")])
    robot = JointLayout([f"{leg}_{part}_joint" for leg in ("fl", "fr", "hl", "hr") for part in ("knee", "wheel")])
    resolver = JointCommandResolver(robot)
    src = frame_of(policy)
    out = resolver.resolve(src)
    for name in robot.names:
        np.testing.assert_array_equal(out.block[:, robot.index(name)], src.block[:, policy.index(name)])
    assert resolver.resolve(src) is not out


def test_composer_to_resolver_pipeline() -> None:
    body = JointTargetBuffer(JointLayout(BODY), kp=50.0, kd=2.0)
    head = JointTargetBuffer(JointLayout(HEAD), kp=16.747, kd=1.066)
    composer = JointCommandComposer(
        STATE31, [JointCommandLayer("policy", body.view), JointCommandLayer("head", head.view)]
    )
    resolver = JointCommandResolver(ROBOT29)
    with pytest.warns(JointDroppedWarning):
        resolver.bind(STATE31)
    body.position[:] = np.linspace(0, 1, 29, dtype=np.float32)
    out = resolver.resolve_into(composer.compose())
    np.testing.assert_array_equal(out.qpos, body.position)
    assert out.kp.tolist() == [50.0] * 29


@pytest.mark.parametrize("clone", [copy.deepcopy, copy.copy, pickle.dumps])
def test_copying_a_resolver_is_refused_saying_to_build_another(clone) -> None:
    resolver = JointCommandResolver(ROBOT29, sources=[ROBOT29])
    with pytest.raises(TypeError, match=r"^a JointCommandResolver cannot be copied or pickled: .*; build another "
                                        r"JointCommandResolver with the same robot layout and defaults$"):  # fmt: skip
        clone(resolver)
