"""The G20 simulation bridge: the SDK topic protocol in, joint states out, ROS 2's wire format over Cyclone DDS.

Two kinds of tests:

* over DDS, against ``scripts/bridge.py`` in a subprocess: a client whose samples rosbags encodes and
  decodes (an independent ROS 2 CDR implementation) sends the vendor bridge's half-fist command and reads the
  state; wire format, type hash, the 50 Hz rate, a burst of malformed messages, SIGTERM/Ctrl-C shutdown;
* in process, on a fake transport and (for the timeout policies) a fake clock: the handlers' checks, the
  timeout policies, the drives, the loop's pacing, the config.

All DDS traffic stays on the loopback interface: the test process and every bridge it starts use the
loopback-only Cyclone config (``CYCLONEDDS_URI``) with multicast off, on a domain id of this process.
"""

from __future__ import annotations

import copy
import gc
import logging
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import mujoco
import numpy as np
import pytest

pytest.importorskip("cyclonedds")
pytest.importorskip("rosbags")

from cyclonedds.core import Policy  # noqa: E402
from cyclonedds.util import duration  # noqa: E402
from ros2_client import (  # noqa: E402
    TYPESTORE,
    BridgeProcess,
    Ros2Client,
    StateTiming,
    domain_for_tests,
    encode_joint_state,
    not_utf8,
)

from dexwheel.bridge.app import run_bridge  # noqa: E402
from dexwheel.bridge.config import ISAACLAB_REFUSED, BridgeConfig, Topics, ros_domain_id  # noqa: E402
from dexwheel.bridge.diagnostics import RateLimitedCounter  # noqa: E402
from dexwheel.bridge.loopback import LOOPBACK_CONFIG, use_loopback  # noqa: E402
from dexwheel.bridge.mujoco_sim import check_model  # noqa: E402
from dexwheel.bridge.node import G20Bridge  # noqa: E402
from dexwheel.bridge.ros2_types import (  # noqa: E402
    JOINT_STATE_TYPE,
    JOINT_STATE_TYPE_HASH,
    JointState,
    dds_topic_name,
    type_hash_user_data,
)
from dexwheel.bridge.transport import CycloneTransport  # noqa: E402
from dexwheel.control import G20SdkMapping  # noqa: E402
from dexwheel.fields import ConfigFieldError  # noqa: E402
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, G20_HALF_FIST_CMD, G20_OPEN_CMD  # noqa: E402
from dexwheel.sim.model_checks import ModelError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bridge.py"
TOPICS = Topics.for_hand("left")
HALF_FIST = G20SdkMapping("left")(G20_HALF_FIST_CMD).copy()  # all 21 joints, radians
OPEN = G20SdkMapping("left")(G20_OPEN_CMD).copy()
#: The composer carries float32, so a jump lands within float32 rounding of the goal.
TRACK_TOL = 1e-4
#: The vendor bridge's track-test criterion (tracking error <= 0.02 rad).
SEED_TOL = 0.02
#: Generous: a first run compiles the env's kernels (~10 s, more on a loaded 2-core machine).
READY_S = 300.0
#: Malformed SDK commands: empty, NaN, +inf, above 255, below 0, not an integer.
MALFORMED_SDK = [[], [float("nan")] * 20, [float("inf")], [256.0], [-1.0], [80.5] * 20]


# -- DDS on loopback only ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bridge(dds, client):
    """A track-test bridge (the hand jumps to each goal) logging every rejected message."""
    proc = BridgeProcess(domain_for_tests(), "track_test=true", "warn_interval_s=0")
    try:
        states = client.reader(TOPICS.state)
        client.wait_for(states, lambda m: True, READY_S)
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def io(bridge, client):
    """(command writer, state reader), both matched with the bridge's endpoints."""
    writer, states = client.writer(TOPICS.command), client.reader(TOPICS.state)
    client.wait_matched(writer, 30)
    client.wait_matched(states, 30)
    time.sleep(0.3)  # the bridge's side of the discovery too, so the first command is not dropped
    client.take(states)
    return writer, states


def reach(client, writer, states, cmd, expected, tol=TRACK_TOL, timeout=30.0):
    """Send ``cmd`` once; the state messages until one is within ``tol`` of ``expected`` (that one last)."""
    client.send(writer, encode_joint_state(position=cmd))
    seen, _ = client.wait_for(states, lambda m: np.abs(m.position - expected).max() <= tol, timeout)
    return seen


@pytest.mark.slow
def test_half_fist_command_reaches_the_expected_radians(io, client, record_property):
    writer, states = io
    reach(client, writer, states, G20_OPEN_CMD, OPEN)
    seen = reach(client, writer, states, G20_HALF_FIST_CMD, HALF_FIST)
    cycles = len(seen)
    record_property("half_fist_cycles", int(cycles))
    print(f"\nhalf fist (track_test): reached within {TRACK_TOL} rad after {cycles} state message(s)")
    assert cycles <= 10
    last = seen[-1].msg
    assert list(last.name) == list(ALL_JOINTS)
    assert np.abs(last.position - HALF_FIST).max() <= min(TRACK_TOL, SEED_TOL)


def test_state_decodes_with_rosbags_and_carries_the_type_hash(io, client):
    writer, states = io
    _, got = client.wait_for(states, lambda m: True, 30)
    assert got.wire[:4] == b"\x00\x01\x00\x00"  # plain little-endian CDR, what ROS 2 uses
    msg = got.msg  # decoded by rosbags
    assert list(msg.name) == list(ALL_JOINTS)
    assert msg.position.shape == msg.velocity.shape == (len(ALL_JOINTS),)
    assert msg.effort.size == 0
    assert abs(got.stamp - time.time()) < 30
    assert bytes(TYPESTORE.serialize_cdr(msg, JOINT_STATE_TYPE)) == bytes(got.wire)  # byte for byte
    # the constant is what an independent implementation of REP-2011 computes
    assert TYPESTORE.hash_rihs01(JOINT_STATE_TYPE) == JOINT_STATE_TYPE_HASH
    expected = f"typehash={JOINT_STATE_TYPE_HASH};".encode()
    assert len(expected) == 81 and type_hash_user_data() == expected
    for entity, data_of, topic in (
        (states, states.get_matched_publication_data, TOPICS.state),  # the bridge's state writer
        (writer, writer.get_matched_subscription_data, TOPICS.command),  # its command reader
    ):
        handles = entity.get_matched_publications() if entity is states else entity.get_matched_subscriptions()
        endpoints = [data_of(h) for h in handles]
        assert endpoints, f"no bridge endpoint on {topic}"
        for ep in endpoints:
            assert ep.topic_name == dds_topic_name(topic)
            assert ep.type_name == "sensor_msgs::msg::dds_::JointState_"
            assert ep.qos[Policy.Userdata].data == expected
            assert ep.qos[Policy.Reliability] == Policy.Reliability.Reliable(
                ep.qos[Policy.Reliability].max_blocking_time
            )
            assert ep.qos[Policy.History] == Policy.History.KeepLast(10)
            assert ep.qos[Policy.Durability] == Policy.Durability.Volatile


@pytest.mark.slow
def test_state_is_published_at_50_hz(io, client, record_property):
    """The schedule, from the stamps' median interval: a stall of a busy machine thins the mean rate (printed)
    but moves only the intervals it spans."""
    _, states = io
    timing = StateTiming.of(client.collect(states, 2.2), 2.0)
    record_property("state_rate_hz", timing.rate_hz)
    print(f"\nstate over 2 s: {timing}")
    assert timing.median_interval_s == pytest.approx(0.020, rel=0.1)


@pytest.mark.slow
def test_malformed_burst_changes_nothing_and_is_counted(io, client, bridge):
    writer, states = io
    reach(client, writer, states, G20_HALF_FIST_CMD, HALF_FIST)
    counted = [int(m) for m in re.findall(r"\((\d+) in all\)", bridge.output)]
    before = max(counted, default=0)
    client.take(states)
    for cmd in MALFORMED_SDK + MALFORMED_SDK:
        client.send(writer, encode_joint_state(position=cmd))
        time.sleep(0.01)  # below the readers' keep-last 10 even on a slow machine
    after = client.collect(states, 1.0)
    assert len(after) >= 25, f"the bridge stopped publishing: {len(after)} state messages in 1 s"
    worst = max(np.abs(s.msg.position - HALF_FIST).max() for s in after)
    assert worst <= TRACK_TOL, f"a malformed message moved the hand by {worst} rad"
    total = before + 2 * len(MALFORMED_SDK)
    bridge.wait_for_line(rf"\({total} in all\)", 30)
    time.sleep(0.2)
    assert max(int(m) for m in re.findall(r"\((\d+) in all\)", bridge.output)) == total  # each one, once
    assert re.search(r"SDK channel 0 \(\w+\) = nan is not finite", bridge.output)
    assert re.search(r"= 80\.5 is not an integer", bridge.output)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
@pytest.mark.slow
def test_signal_stops_the_bridge_cleanly_within_2s(dds, sig, record_property):
    proc = BridgeProcess(domain_for_tests(1), "max_lag_s=1.0")
    try:
        proc.wait_for_line(r"G20 bridge \(", READY_S)
        time.sleep(0.5)  # in its loop, publishing
        group = proc.group()
        assert proc.proc.pid in group
        start = time.monotonic()
        proc.proc.send_signal(sig)
        rc = proc.proc.wait(timeout=10)
        took = time.monotonic() - start
        proc._reader.join(timeout=5)
        record_property("shutdown_s", float(took))
        print(f"\n{sig.name}: exit {rc} after {took:.3f} s")
        assert rc == 0, proc.output
        assert took <= 2.0
        assert "G20 bridge stopped" in proc.output
        assert not re.search(r"Traceback|Abort|Fatal|Segmentation", proc.output), proc.output
        left = proc.group()  # the bridge itself is reaped: anything here is a process it left behind
        assert not left, f"processes left behind: {left}"
    finally:
        proc.stop()


def test_viewer_window_shows_the_hand_and_closes_cleanly(dds, x_display):
    proc = BridgeProcess(domain_for_tests(1), headless=False, display=x_display)
    try:
        proc.wait_for_line(r"G20 bridge \(", READY_S)
        time.sleep(1.0)  # the window is up and synced
        start = time.monotonic()
        proc.proc.send_signal(signal.SIGTERM)
        rc = proc.proc.wait(timeout=30)
        took = time.monotonic() - start
        proc._reader.join(timeout=5)
        print(f"\nviewer: SIGTERM -> exit {rc} after {took:.3f} s")
        assert rc == 0, proc.output
        assert took <= 2.0
        assert not re.search(r"Traceback|Abort|Fatal|Segmentation", proc.output), proc.output
    finally:
        proc.stop()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["headless=true", "hand=middle"], "hand='middle' is not allowed"),
        (
            ["headless=false"],
            "the bridge's viewer opens a window, and there is no display (DISPLAY is not set): run it under a virtual screen (xvfb-run -a python ...), or run with headless=true",
        ),
        (["backend=isaaclab", "collision_projection=true"], "bridge: collision_projection=true: the hard-write"),
        (
            ["headless=true", "loopback_only=true", "max_steps=50", "control_hz=300"],
            "error: bridge: control_hz=300 must be (1 / timestep) / k for an integer k >= 1; the timestep is 0.002 s, "
            "so e.g. 500, 250, 50",
        ),
        (["pd_drive=true", "collision_projection=true"], "error: bridge: collision_projection=true does nothing with"),
    ],
    ids=["bad-setting", "no-display", "isaaclab-projection", "control-hz", "ignored-override"],
)
@pytest.mark.slow
def test_the_script_stops_at_once_naming_the_problem(dds, overrides, message):
    env = os.environ.copy()
    use_loopback(env)
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    cmd = [sys.executable, str(SCRIPT), f"domain_id={domain_for_tests(1)}", *overrides]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr  # one line, no traceback
    assert message in done.stderr


def test_run_bridge_in_process_leaves_no_thread(dds):
    """run_bridge on a real DDS transport: afterwards no Python thread and no OS thread it started is left."""
    from dexwheel.bridge.app import run_bridge

    watcher = Ros2Client(domain_for_tests(1))
    states = watcher.reader(TOPICS.state)
    tasks = lambda: len(os.listdir("/proc/self/task"))  # noqa: E731
    before_threads, before_tasks = set(threading.enumerate()), tasks()
    stop = threading.Event()
    cfg = BridgeConfig(domain_id=domain_for_tests(1), headless=True, track_test=True)
    runner = threading.Thread(target=run_bridge, args=(cfg, stop))
    runner.start()
    try:
        watcher.wait_for(states, lambda m: True, READY_S)  # running: publishing its state
    finally:
        stop.set()
        runner.join(timeout=30)
    assert not runner.is_alive()
    assert set(threading.enumerate()) == before_threads
    deadline = time.monotonic() + 10
    while tasks() > before_tasks and time.monotonic() < deadline:  # DDS threads end with their domain
        time.sleep(0.05)
    assert tasks() <= before_tasks
    watcher.close()


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy, pickle.dumps], ids=["copy", "deepcopy", "pickle"])
def test_a_transport_refuses_to_be_copied_and_keeps_working(dds, how):
    """A copy would share the DDS participant's handle, and collecting it would delete the original's: refused
    before anything is touched; the original still publishes, makes endpoints and closes."""
    transport = CycloneTransport(domain_for_tests(1), name="test-copy")
    try:
        publish = transport.publisher("/dexwheel_test/copy_a")
        with pytest.raises(
            TypeError, match=r"'test-copy': a DDS transport cannot be copied or pickled.*create another"
        ):
            how(transport)
        gc.collect()
        publish(JointState(position=[1.0]))
        transport.publisher("/dexwheel_test/copy_b")(JointState(position=[2.0]))
    finally:
        transport.close()


def wait_until(predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not done after {timeout} s")
        time.sleep(0.01)


def test_an_undecodable_sample_is_dropped_alone_and_the_commands_around_it_arrive_in_order(dds, caplog):
    """The transport takes several samples per read: one that cannot be decoded (here a frame_id that is not
    UTF-8) is counted and dropped; the valid commands of the same read, and of every later one, all reach
    the handler, in the order sent."""
    topic = "/dexwheel_test/transport_decode"
    domain = domain_for_tests(1)
    transport = CycloneTransport(domain, warn_interval_s=0, name="test-transport")
    received: list[float] = []
    transport.subscribe(topic, lambda msg: received.append(msg.position[0]))
    sender = Ros2Client(domain)
    try:
        writer = sender.writer(topic)
        sender.wait_matched(writer, 30)
        sender.wait_matched(transport._readers[0][1], 30)  # both sides of the discovery: nothing sent is lost
        # a burst that fills the reader's history (keep-last 10) before the receive thread runs: one read
        burst = [1, None, 2, 3, None, 4, None, 5, 6, 7]  # None: a malformed sample
        for value in burst:
            sender.send(writer, not_utf8([0.0]) if value is None else encode_joint_state(position=[float(value)]))
        writer.wait_for_acks(duration(seconds=10))  # all 10 are in the transport's reader now
        with caplog.at_level(logging.WARNING, logger="dexwheel.bridge.transport"):
            transport.start()
            wait_until(lambda: len(received) >= 7 and transport.errors.total >= 3, 10)
            assert received == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
            assert transport.errors.counts == {topic: 3}
            assert "UnicodeDecodeError" in caplog.text and f"on {topic}" in caplog.text
            # a stream over many reads: 60 samples, every third one malformed, in bursts of 10
            expected = [float(v) for v in range(100, 160) if v % 3]
            for start in range(100, 160, 10):
                for v in range(start, start + 10):
                    sender.send(writer, not_utf8([float(v)]) if v % 3 == 0 else encode_joint_state(position=[float(v)]))
                writer.wait_for_acks(duration(seconds=10))
                wait_until(lambda s=start: len(received) >= 7 + sum(1 for v in range(100, s + 10) if v % 3), 10)
        time.sleep(0.2)  # nothing more arrives
        assert received[7:] == expected
        assert transport.errors.counts == {topic: 3 + 20}
    finally:
        transport.close()
        sender.close()


# -- in process: handlers, timeouts, drives, pacing -------------------------------------------------------------
class FakeTransport:
    """Handlers and publishers without a middleware: tests call the handlers themselves."""

    def __init__(self) -> None:
        self.handlers: dict[str, object] = {}
        self.sent: dict[str, list[JointState]] = defaultdict(list)

    def subscribe(self, topic, handler) -> None:
        self.handlers[topic] = handler

    def publisher(self, topic):
        return self.sent[topic].append

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def make_bridge(clock=None, **overrides):
    cfg = BridgeConfig.from_mapping({"domain_id": 0, "headless": True, **overrides})
    fake = FakeTransport()
    bridge = G20Bridge(cfg, fake, clock=clock) if clock else G20Bridge(cfg, fake)
    return bridge, fake.handlers[cfg.source_topic], fake


def joints(bridge) -> np.ndarray:
    return np.array(bridge.joint_state().position)


def test_an_out_of_range_command_is_rejected_naming_what_the_bridge_does(caplog):
    bridge, send, _ = make_bridge(FakeClock(), track_test=True)
    caplog.set_level(logging.WARNING, logger="dexwheel.bridge")
    send(JointState(position=[256.0]))
    bridge.step()
    warned = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert len(warned) == 1 and "= 256" in warned[0], warned
    assert "out_of_range" not in warned[0]  # no bridge setting has that name
    assert "the bridge rejects such a command (it never clips one): send values in range" in warned[0]


def test_malformed_commands_are_rejected_counted_and_rate_limited(caplog):
    clock = FakeClock()
    bridge, send, _ = make_bridge(clock, track_test=True)
    send(JointState(position=list(G20_HALF_FIST_CMD)))
    bridge.step()
    assert np.abs(joints(bridge) - HALF_FIST).max() <= TRACK_TOL
    writes = bridge.slot.write_count
    caplog.set_level(logging.WARNING, logger="dexwheel.bridge")
    bad = [JointState(position=p) for p in MALFORMED_SDK] + [JointState(position=["a", "b"])]
    for msg in bad * 3:
        send(msg)
    for _ in range(5):
        bridge.step()
    assert bridge.slot.write_count == writes  # nothing reached the goal
    assert np.abs(joints(bridge) - HALF_FIST).max() <= TRACK_TOL
    assert bridge.stats.rejected == 3 * len(bad) and bridge.stats.accepted == 1
    warned = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert len(warned) == 1, warned  # the first at once, the rest folded into the next report
    assert "(1 in all)" in warned[0]
    clock.t += 5.0
    bridge.rejections.flush()
    warned = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert len(warned) == 2 and f"({3 * len(bad)} in all)" in warned[1]
    # a shorter command is padded with 255
    send(JointState(position=[80.0] * 5))
    bridge.step()
    expected = G20SdkMapping("left")([80] * 5)
    assert np.abs(joints(bridge) - expected).max() <= TRACK_TOL
    bridge.close()


@pytest.mark.parametrize("extra", [[7.0, 7.0], [float("nan"), 1e9, -5.0]], ids=["valid-values", "bad-values"])
def test_an_sdk_command_longer_than_20_values_is_rejected_naming_its_length(extra, caplog):
    """The protocol has 20 channels: a longer message (a misrouted one) is refused whole, never cut to 20."""
    bridge, send, _ = make_bridge(FakeClock(), track_test=True, warn_interval_s=0.0)
    before, writes = joints(bridge), bridge.slot.write_count
    caplog.set_level(logging.WARNING, logger="dexwheel.bridge")
    send(JointState(position=[*G20_HALF_FIST_CMD, *extra]))
    bridge.step()
    assert bridge.slot.write_count == writes and np.array_equal(joints(bridge), before)
    assert (bridge.stats.accepted, bridge.stats.rejected) == (0, 1)
    assert f"position has {20 + len(extra)} values; the G20 SDK protocol has 20 channels (0..255)" in caplog.text
    bridge.close()


def test_nominal_goals_by_joint_name(caplog):
    bridge, send, _ = make_bridge(plan_nominal=True, track_test=True)
    send(JointState(name=["index_pip", "thumb_mcp"], position=[1.0, 0.5]))
    bridge.step()
    q = dict(zip(ALL_JOINTS, joints(bridge), strict=True))
    assert q["index_pip"] == pytest.approx(1.0, abs=TRACK_TOL)
    assert q["index_dip"] == pytest.approx(0.89, abs=TRACK_TOL)  # mimic completed
    assert q["thumb_ip"] == pytest.approx(0.51, abs=TRACK_TOL)
    assert q["middle_pip"] == pytest.approx(OPEN[ALL_JOINTS.index("middle_pip")], abs=TRACK_TOL)  # not named
    before = joints(bridge)
    caplog.set_level(logging.WARNING, logger="dexwheel.bridge")
    bad = [
        JointState(name=["index_pipp"], position=[1.0]),  # unknown joint
        JointState(name=["index_dip"], position=[0.5]),  # a mimic joint follows its source
        JointState(name=["index_pip"], position=[float("nan")]),
        JointState(name=["index_pip"], position=[2.0]),  # beyond 1.74
        JointState(name=["index_pip", "ring_pip"], position=[1.0]),
        JointState(name=["index_pip", "index_pip"], position=[1.0, 1.2]),
        JointState(),
    ]
    for msg in bad:
        send(msg)
    bridge.step()
    assert np.array_equal(joints(bridge), before)
    assert bridge.stats.rejected == len(bad)
    assert "unknown joint names ['index_pipp']" in caplog.text


def half_way(bridge, send, steps=20):
    send(JointState(position=list(G20_HALF_FIST_CMD)))
    for _ in range(steps):
        bridge.step()
    return joints(bridge)


@pytest.mark.parametrize("policy", ["hold_last", "fixed_target", "raise"])
def test_a_silent_source_follows_the_timeout_policy(policy, caplog):
    clock = FakeClock()
    bridge, send, _ = make_bridge(clock, timeout={"policy": policy, "timeout_s": 0.5})
    if policy == "raise":  # no goal yet: a fault from the start, the hand stays where it is
        bridge.step()
        assert np.abs(joints(bridge) - OPEN).max() <= TRACK_TOL
    moving = half_way(bridge, send)  # slew 5 rad/s: part of the way
    assert np.abs(moving - HALF_FIST).max() > 0.5
    clock.t += 1.0
    caplog.set_level(logging.INFO, logger="dexwheel.bridge")
    for _ in range(400):
        bridge.step()
    expected = {"hold_last": HALF_FIST, "fixed_target": OPEN, "raise": moving}[policy]
    assert np.abs(joints(bridge) - expected).max() <= TRACK_TOL
    assert bridge.stats.stale_steps >= 400
    assert "silent" in caplog.text
    send(JointState(position=list(G20_HALF_FIST_CMD)))  # the source is back
    for _ in range(400):
        bridge.step()
    assert np.abs(joints(bridge) - HALF_FIST).max() <= TRACK_TOL
    assert "receiving goals" in caplog.text


def test_default_drive_slews_and_projects_to_the_half_fist():
    bridge, send, _ = make_bridge()  # hard-write, slew 5 rad/s, collision projection on
    send(JointState(position=list(G20_HALF_FIST_CMD)))
    steps = 0
    while np.abs(joints(bridge) - HALF_FIST).max() > TRACK_TOL:
        bridge.step()
        steps += 1
        assert steps < 1000
    # the largest move (the pips, ~1.2 rad) at 5 rad/s in 2 ms steps
    largest = np.abs(HALF_FIST - OPEN)[[ALL_JOINTS.index(j) for j in ACTIVE_JOINTS]].max()
    assert steps == pytest.approx(largest / (5.0 * 0.002), abs=2)


def test_pd_drive_tracks_the_half_fist():
    bridge, send, _ = make_bridge(pd_drive=True, track_test=True)
    send(JointState(position=list(G20_HALF_FIST_CMD)))
    for _ in range(250):  # 0.5 s simulated
        bridge.step()
    assert np.abs(joints(bridge) - HALF_FIST).max() <= SEED_TOL
    bridge.close()


@pytest.mark.slow
def test_loop_keeps_real_time_and_publishes_the_state():
    bridge, send, fake = make_bridge(max_lag_s=1.0)
    stop = threading.Event()
    runner = threading.Thread(target=bridge.run, args=(stop,))
    runner.start()
    send(JointState(position=list(G20_HALF_FIST_CMD)))
    time.sleep(1.0)
    stop.set()
    runner.join(timeout=30)
    s = bridge.stats
    sim = s.steps * bridge.dt
    print(f"\nloop: {s.steps} steps, {sim:.3f} s simulated in {s.wall_s:.3f} s (x{sim / s.wall_s:.3f}), "
          f"{s.published} state messages, {s.dropped_steps} dropped")  # fmt: skip
    # every step the schedule owed was taken or, late, dropped: simulated time = speed x wall time
    assert (s.steps + s.dropped_steps) * bridge.dt / 1.35 == pytest.approx(s.wall_s, abs=0.05)
    assert s.published == pytest.approx(50 * s.wall_s, rel=0.1, abs=2)
    msgs = fake.sent[TOPICS.state]
    assert len(msgs) == s.published and list(msgs[-1].name) == list(ALL_JOINTS)
    bridge.close()


def test_max_steps_ends_the_run():
    bridge, _, _ = make_bridge(max_steps=100, speed=5.0)
    stats = bridge.run(threading.Event())
    assert stats.steps == 100
    bridge.close()


def test_startup_check_names_missing_joints_and_actuators():
    model = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><joint name='thumb_cmc_yaw'/><geom size='0.01'/></body></worldbody>"
        "<actuator><position name='thumb_cmc_yaw_pos' joint='thumb_cmc_yaw'/></actuator></mujoco>"
    )
    with pytest.raises(
        ModelError, match=r"missing joint\(s\) \['pinky_mcp_roll'.*'thumb_ip'\]; the model has \['thumb_cmc_yaw'\]"
    ):
        check_model(model)
    chain = "".join(f"<body><joint name='{j}'/><geom size='0.01'/>" for j in ALL_JOINTS) + "</body>" * len(ALL_JOINTS)
    model = mujoco.MjModel.from_xml_string(f"<mujoco><worldbody>{chain}</worldbody></mujoco>")
    with pytest.raises(ModelError, match=r"missing actuator\(s\) \['pinky_mcp_roll_pos'.*'thumb_ip_pos'\]"):
        check_model(model)
    bridge, _, _ = make_bridge()
    assert check_model(bridge.sim.model).shape == (len(ALL_JOINTS),)


# -- configuration ----------------------------------------------------------------------------------------------
def test_config_defaults_right_hand_topics_and_domain(monkeypatch):
    monkeypatch.setenv("ROS_DOMAIN_ID", "17")
    cfg = BridgeConfig()
    assert (cfg.domain_id, cfg.speed, cfg.slew_rad_s, cfg.collision_projection, cfg.track_test) == (
        17,
        1.35,
        5.0,
        True,
        False,
    )
    assert (cfg.drive, cfg.state_hz, cfg.timeout.policy) == ("hard_write", 50.0, "hold_last")
    assert cfg.source_topic == "/g20/cb_left_hand_control_cmd"
    right = BridgeConfig(hand="right", plan_nominal=True)
    assert right.topics == Topics("/g20/cb_right_hand_control_cmd", "/retarget/g20/right/joint_target_nominal",
                                  "/sim/mujoco/g20/right/joint_state")  # fmt: skip
    assert right.source_topic == "/retarget/g20/right/joint_target_nominal"
    monkeypatch.delenv("ROS_DOMAIN_ID")
    assert ros_domain_id() == 0 and BridgeConfig().domain_id == 0
    assert BridgeConfig().headless is False


def test_isaac_lab_backend_defaults_and_refusals():
    """The vendor's Isaac hand simulation: slew 0, no collision projection, its own state topic; headless."""
    cfg = BridgeConfig(backend="isaaclab", domain_id=0)
    assert (cfg.slew_rad_s, cfg.collision_projection, cfg.headless, cfg.drive) == (0.0, False, True, "hard_write")
    assert cfg.topics == Topics("/g20/cb_left_hand_control_cmd", "/retarget/g20/left/joint_target_nominal",
                                "/sim/isaac/g20/left/joint_state")  # fmt: skip
    configured = BridgeConfig(backend="isaaclab", domain_id=0, slew_rad_s=3.0, pd_drive=True, hand="right")
    assert (configured.slew_rad_s, configured.drive) == (3.0, "pd")
    assert configured.topics.state == "/sim/isaac/g20/right/joint_state"  # type: ignore[union-attr]
    # projection=true with PD or the track test is refused as ignored (both backends); with hard-write as missing
    for ignored_by in ({"pd_drive": True}, {"track_test": True}):
        with pytest.raises(ConfigFieldError, match=r"collision_projection=true does nothing with"):
            BridgeConfig(backend="isaaclab", domain_id=0, collision_projection=True, **ignored_by)
    with pytest.raises(ConfigFieldError) as err:
        BridgeConfig(backend="isaaclab", domain_id=0, collision_projection=True)
    assert str(err.value).endswith(ISAACLAB_REFUSED["collision_projection"])
    assert BridgeConfig(backend="isaaclab", domain_id=0, headless=False).headless is False  # Newton's GL visualizer
    with pytest.raises(ConfigFieldError, match=r"backend='gazebo' is not allowed"):
        BridgeConfig(backend="gazebo", domain_id=0)
    given = BridgeConfig.from_mapping({"domain_id": 0, "backend": {"name": "isaaclab"},
                                       "topics": {"command": "/c", "nominal": "/n", "state": None}})  # fmt: skip
    assert given.topics == Topics("/c", "/n", "/sim/isaac/g20/left/joint_state")
    assert dds_topic_name("/sim/mujoco/g20/left/joint_state") == "rt/sim/mujoco/g20/left/joint_state"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"hand": "middle"}, "hand='middle' is not allowed"),
        ({"drive": "pd"}, "pd_drive=true"),
        ({"pd_drive": "yes"}, "pd_drive: expected true or false"),
        ({"speed": 0.0}, "speed must be finite and > 0"),
        ({"domain_id": 300}, "domain_id must be between 0 and 232"),
        ({"timeout": {"policy": "retry"}}, "timeout.policy='retry' is not allowed"),
        ({"timeout": {"timeout_s": -1.0}}, "timeout.timeout_s must be finite and > 0"),
        ({"timeout": {"wait": 1}}, "unknown settings ['timeout.wait']"),
        ({"sped": 1.0}, "unknown settings ['sped']"),
        ({"state_hz": "fast"}, "state_hz: expected a number"),
        ({"topics": {"command": "/", "nominal": "/n", "state": "/s"}}, "topics.command must be a ROS 2 topic name"),
        ({"control_hz": 300.0}, "control_hz=300.0 must be (1 / timestep) / k for an integer k >= 1"),
        (
            {"control_hz": 1000.0},
            "control_hz=1000.0 must be (1 / timestep) / k for an integer k >= 1; the timestep is 0.002 s",
        ),
        (
            {"pd_drive": True, "collision_projection": True},
            "collision_projection=true does nothing with pd_drive=true (the projection is the hard-write drive's",
        ),
        (
            {"track_test": True, "collision_projection": True},
            "collision_projection=true does nothing with track_test=true (the track test turns the projection off)",
        ),
        ({"track_test": True, "slew_rad_s": 3.0}, "slew_rad_s=3 does nothing with track_test=true"),
        (
            {"topics": {"command": "/g20/x", "nominal": "/n", "state": "g20/x"}},
            "topics.state='g20/x' is the topic goals come from (topics.command='/g20/x'): the bridge would read its "
            "own joint state as commands",
        ),
        (
            {"plan_nominal": True, "topics": {"command": "/c", "nominal": "/n", "state": "/n"}},
            "topics.state='/n' is the topic goals come from (topics.nominal='/n')",
        ),
    ],
)
def test_bad_settings_fail_naming_the_field(values, message):
    with pytest.raises(ConfigFieldError) as err:
        BridgeConfig.from_mapping({"domain_id": 0, **values})
    assert message in str(err.value)


def test_settings_that_agree_with_the_drive_and_track_test_are_taken():
    """Only a typed value that would be ignored is refused: the defaults, and typed values that say what runs."""
    agree = [{"pd_drive": True}, {"track_test": True}, {"pd_drive": True, "collision_projection": False},
             {"track_test": True, "slew_rad_s": 0.0, "collision_projection": False}, {"control_hz": 250.0},
             {"pd_drive": True, "slew_rad_s": 3.0}, {"backend": "isaaclab", "pd_drive": True}]  # fmt: skip
    for values in agree:
        cfg = BridgeConfig.from_mapping({"domain_id": 0, **values})
        assert cfg.projection is False or values == {"control_hz": 250.0}, values
    assert BridgeConfig(domain_id=0, track_test=True).slew == 0.0 and BridgeConfig(domain_id=0).slew == 5.0


def test_startup_line_names_the_projection_timeout_policy_and_network(monkeypatch, caplog):
    """In process on a fake transport: the startup line says what runs, typed or not."""
    monkeypatch.setenv("CYCLONEDDS_URI", LOOPBACK_CONFIG)  # loopback_only sets it: restored afterwards
    caplog.set_level(logging.INFO, logger="dexwheel.bridge")
    cases = [
        ({}, "slew 5 rad/s, collision projection on, headless) on DDS domain 0 (CYCLONEDDS_URI's interfaces): "
             "goals from /g20/cb_left_hand_control_cmd (SDK 0..255; silent 0.5 s: hold_last (open before the first "
             "goal)), state on"),
        ({"pd_drive": True, "loopback_only": True, "timeout": {"policy": "fixed_target", "fixed_target": "half_fist",
          "timeout_s": 0.25}},
         "(left hand on MuJoCo, pd, slew 5 rad/s, collision projection off, headless) on DDS domain 0 (loopback "
         "only): goals from /g20/cb_left_hand_control_cmd (SDK 0..255; silent 0.25 s: fixed_target half_fist)"),
        ({"track_test": True, "timeout": {"policy": "raise"}},
         "(left hand on MuJoCo, hard_write, track test, slew 0 rad/s, collision projection off, headless)"),
    ]  # fmt: skip
    for values, expected in cases:
        caplog.clear()
        cfg = BridgeConfig.from_mapping({"domain_id": 0, "headless": True, "max_steps": 1, **values})
        run_bridge(cfg, transport=FakeTransport())
        line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("G20 bridge ("))
        assert expected in line, line
    assert "silent 0.5 s: raise (hold the pose)" in line


def test_loopback_only_says_when_it_replaces_the_users_cyclone_config(caplog):
    caplog.set_level(logging.WARNING, logger="dexwheel.bridge.loopback")
    env = {"CYCLONEDDS_URI": "file:///etc/my-cyclone.xml"}
    assert use_loopback(env) == LOOPBACK_CONFIG and env["CYCLONEDDS_URI"] == LOOPBACK_CONFIG
    assert [r.getMessage() for r in caplog.records] == [
        "loopback only: CYCLONEDDS_URI='file:///etc/my-cyclone.xml' is replaced by the loopback-only config"
    ]
    caplog.clear()
    use_loopback(env)  # already loopback: nothing replaced
    use_loopback({})  # unset: nothing replaced
    assert not caplog.records


def test_a_rate_limited_report_names_the_latest_problem(caplog):
    """docs/how-to/bridge.md: the first event of a quiet source is logged at once; a later report counts what came since
    and names the latest one."""
    clock = FakeClock()
    counter = RateLimitedCounter(logging.getLogger("dexwheel.bridge.test"), "rejected", 5.0, clock=clock)
    caplog.set_level(logging.WARNING, logger="dexwheel.bridge.test")
    for reason in ("first", "second", "third"):
        counter.count("/t", reason)
    clock.t += 5.0
    counter.flush()
    assert [r.getMessage() for r in caplog.records] == [
        "rejected: 1 on /t since the last report (1 in all); latest: first",
        "rejected: 2 on /t since the last report (3 in all); latest: third",
    ]


@pytest.mark.parametrize("doc", ["scripts/bridge.py", "docs/how-to/bridge.md"])
def test_the_documented_commands_compose_to_a_bridge_config(doc, monkeypatch):
    """Every ``python scripts/bridge.py ...`` example of the script's docstring and the docs is a valid command."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    monkeypatch.delenv("ROS_DOMAIN_ID", raising=False)
    text = (ROOT / doc).read_text(encoding="utf-8")
    commands = re.findall(r"^`?python scripts/bridge\.py([^#`\n]*)", text, re.M)
    assert len(commands) >= 5, commands
    for overrides in commands:
        with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
            raw = compose(config_name="bridge", overrides=overrides.split())
        BridgeConfig.from_mapping(OmegaConf.to_container(raw, resolve=True))  # type: ignore[arg-type]


def test_hydra_config_composes_to_the_seed_defaults(monkeypatch):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    monkeypatch.setenv("ROS_DOMAIN_ID", "42")
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        raw = compose(config_name="bridge", overrides=["hand=right", "pd_drive=true", "timeout.policy=raise"])
    cfg = BridgeConfig.from_mapping(OmegaConf.to_container(raw, resolve=True))
    assert (cfg.domain_id, cfg.hand, cfg.drive, cfg.timeout.policy) == (42, "right", "pd", "raise")
    assert cfg.topics == Topics.for_hand("right")
    assert (cfg.speed, cfg.slew_rad_s, cfg.collision_projection, cfg.track_test, cfg.plan_nominal) == (
        1.35, 5.0, True, False, False)  # fmt: skip
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        raw = compose(config_name="bridge", overrides=["backend=isaaclab"])
    isaac = BridgeConfig.from_mapping(OmegaConf.to_container(raw, resolve=True))
    assert (isaac.backend, isaac.slew_rad_s, isaac.collision_projection, isaac.headless) == (
        "isaaclab",
        0.0,
        False,
        True,
    )
    assert isaac.topics == Topics.for_hand("left", "isaaclab")
    assert "127.0.0.1" in LOOPBACK_CONFIG and "<AllowMulticast>false</AllowMulticast>" in LOOPBACK_CONFIG
    env: dict[str, str] = {}
    assert use_loopback(env) == LOOPBACK_CONFIG and env == {"CYCLONEDDS_URI": LOOPBACK_CONFIG}


def test_the_suite_runs_where_loopback_is_the_only_interface():
    """``make test`` runs pytest through ``tests/loopback_only.sh``: Cyclone's receive sockets bind the wildcard
    address whatever its config says, so a network namespace with ``lo`` alone keeps them off every network."""
    if os.environ.get("DEXWHEEL_LOOPBACK_NETNS") != "1":
        pytest.skip("not run through tests/loopback_only.sh (make test-core and make isaaclab-test use it)")
    import socket

    assert [name for _, name in socket.if_nameindex()] == ["lo"]
