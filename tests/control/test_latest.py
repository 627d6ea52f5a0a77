"""LatestValueSlot: freshness, the three timeout policies, complete samples, no torn snapshots."""

from __future__ import annotations

import copy
import pickle
import threading

import numpy as np
import pytest

from dexwheel.control import (
    ActionError,
    JointLayout,
    JointTargetBuffer,
    LatestValueSlot,
    SlotState,
    SourceTimeoutError,
    TimeoutPolicy,
)

HEAD = JointLayout(("neck_y_joint", "neck_z_joint"), "head")


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def make(policy: TimeoutPolicy | str, fixed: bool = True) -> tuple[LatestValueSlot, FakeClock, JointTargetBuffer]:
    clock = FakeClock()
    fixed_target = JointTargetBuffer(HEAD, position=(0.5, -0.5), kp=5.0, kd=0.5) if fixed else None
    slot = LatestValueSlot(
        HEAD, timeout_s=0.1, kp=16.747, kd=1.066, policy=policy, fixed_target=fixed_target, clock=clock
    )
    return slot, clock, JointTargetBuffer(HEAD)


def test_fresh_sample_is_copied_whole() -> None:
    slot, clock, target = make(TimeoutPolicy.HOLD_LAST)
    slot.write((0.1, 0.2), vel=(1.0, 2.0))
    clock.t += 0.05
    assert slot.copy_into(target) is SlotState.FRESH
    assert target.position.tolist() == pytest.approx([0.1, 0.2])
    assert target.kp.tolist() == pytest.approx([16.747] * 2) and target.kd.tolist() == pytest.approx([1.066] * 2)
    assert target.vel.tolist() == [1.0, 2.0]
    assert slot.last_age == pytest.approx(0.05)


def test_hold_last_holds_after_timeout() -> None:
    slot, clock, target = make("hold_last")
    assert slot.copy_into(target) is SlotState.FIXED  # nothing to hold yet: the fixed target
    assert target.position.tolist() == [0.5, -0.5]
    slot.write((0.1, 0.2))
    clock.t += 5.0
    assert slot.copy_into(target) is SlotState.HELD
    assert target.position.tolist() == pytest.approx([0.1, 0.2])


def test_hold_last_without_sample_or_fixed_target_raises() -> None:
    slot, _, target = make(TimeoutPolicy.HOLD_LAST, fixed=False)
    with pytest.raises(SourceTimeoutError, match="'head' is stale: no sample yet and no fixed_target"):
        slot.copy_into(target)


def test_fixed_target_after_timeout() -> None:
    slot, clock, target = make(TimeoutPolicy.FIXED_TARGET)
    slot.write((0.1, 0.2))
    assert slot.copy_into(target) is SlotState.FRESH
    clock.t += 0.2
    assert slot.copy_into(target) is SlotState.FIXED
    assert target.position.tolist() == [0.5, -0.5] and target.kp.tolist() == [5.0, 5.0]
    slot.write((0.3, 0.4))
    assert slot.copy_into(target) is SlotState.FRESH
    with pytest.raises(ValueError, match="FIXED_TARGET needs a fixed_target"):
        make(TimeoutPolicy.FIXED_TARGET, fixed=False)


def test_raise_policy() -> None:
    slot, clock, target = make(TimeoutPolicy.RAISE)
    with pytest.raises(SourceTimeoutError, match="no sample yet; policy RAISE"):
        slot.copy_into(target)
    slot.write((0.1, 0.2))
    assert slot.copy_into(target) is SlotState.FRESH
    clock.t += 0.25
    with pytest.raises(SourceTimeoutError, match=r"last sample 0.250 s old \(timeout 0.1 s\)"):
        slot.copy_into(target)


def test_each_write_is_a_complete_sample() -> None:
    slot, _, target = make(TimeoutPolicy.RAISE)
    slot.write((0.1, 0.2), vel=(1.0, 1.0), torque=(0.5, 0.5), kp=(20.0, 21.0))
    slot.write((0.3, 0.4))  # no vel/torque: zeros, never the previous sample's; gains are kept
    slot.copy_into(target)
    assert target.vel.tolist() == [0.0, 0.0] and target.torque.tolist() == [0.0, 0.0]
    assert target.kp.tolist() == [20.0, 21.0]
    assert slot.write_count == 2


def test_invalid_writes_raise_and_change_nothing() -> None:
    slot, _, target = make(TimeoutPolicy.RAISE)
    slot.write((0.1, 0.2))
    with pytest.raises(ActionError, match=r"position\[1\] \(neck_z_joint\) = nan is not finite"):
        slot.write((0.0, float("nan")))
    with pytest.raises(ActionError, match=r"shape \(2,\), got \(3,\)"):
        slot.write((0.0, 0.0, 0.0))
    with pytest.raises(ActionError, match=r"kd\[0\] \(neck_y_joint\) = -1.0 must be >= 0"):
        slot.write((0.0, 0.0), kd=(-1.0, 0.0))
    slot.copy_into(target)
    assert target.position.tolist() == pytest.approx([0.1, 0.2]) and slot.write_count == 1
    with pytest.raises(ValueError, match="timeout_s"):
        LatestValueSlot(HEAD, timeout_s=0.0, kp=1.0, kd=0.1)


def test_concurrent_writes_never_tear_a_snapshot() -> None:
    layout = JointLayout([f"j{i}" for i in range(64)])
    slot = LatestValueSlot(layout, timeout_s=10.0, kp=1.0, kd=0.1)
    target = JointTargetBuffer(layout)
    stop = threading.Event()

    def writer() -> None:
        k = 0
        while not stop.is_set():
            k += 1
            value = np.full(64, float(k))
            slot.write(value, vel=value, kp=value)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        seen = set()
        for _ in range(3000):
            try:
                slot.copy_into(target)
            except SourceTimeoutError:
                continue
            for row in (target.position, target.vel, target.kp):
                assert np.all(row == target.position[0])
            seen.add(float(target.position[0]))
    finally:
        stop.set()
        thread.join()
    assert len(seen) > 1


@pytest.mark.parametrize("clone", [copy.deepcopy, copy.copy, pickle.dumps])
def test_copying_a_slot_is_refused_saying_to_build_another(clone) -> None:
    slot, _, _ = make(TimeoutPolicy.HOLD_LAST)
    with pytest.raises(TypeError, match=r"^a LatestValueSlot cannot be copied or pickled: a copy would not receive "
                                        r"the writes .*; build another LatestValueSlot"):  # fmt: skip
        clone(slot)
