"""The G20 bridge on Isaac Lab (``scripts/bridge.py backend=isaaclab``), over DDS on the loopback interface.

``scripts/bridge.py backend=isaaclab`` runs here in the Isaac Lab venv (this test's interpreter), kit-less on the
CPU: a client whose samples rosbags encodes and decodes sends SDK commands and reads
``/sim/isaac/g20/left/joint_state``; the state rate from the message stamps, malformed messages and undecodable
samples (counted apart), the real-time factor, the refusals. Side by side: the same SDK command stream into the
MuJoCo bridge (the core venv, ``DEXWHEEL_MUJOCO_PYTHON``) and the Isaac Lab bridge on one domain, track test (slew
0, hard-write, no projection) on both: the settled joint states agree within :data:`FREE_TOL` where the pose is
free and :data:`CONTACT_TOL` where it presses a finger into another (the full fist).

All DDS traffic stays on the loopback interface: the test process and every bridge it starts use the loopback-only
Cyclone config (``CYCLONEDDS_URI``) with multicast off, on a domain id of this process.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cyclonedds")
pytest.importorskip("rosbags")

from ros2_client import (  # noqa: E402
    SCRIPT,
    BridgeProcess,
    Ros2Client,
    StateTiming,
    domain_for_tests,
    encode_joint_state,
    not_utf8,
)

from dexwheel.bridge.config import ISAACLAB_REFUSED, Topics  # noqa: E402
from dexwheel.bridge.loopback import use_loopback  # noqa: E402
from dexwheel.control import G20SdkMapping  # noqa: E402
from dexwheel.robots.g20 import ALL_JOINTS, G20_HALF_FIST_CMD, G20_OPEN_CMD, GOAL_PRESETS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ISAAC = Topics.for_hand("left", "isaaclab")
MUJOCO = Topics.for_hand("left", "mujoco")
SDK = G20SdkMapping("left")
HALF_FIST = SDK(G20_HALF_FIST_CMD).copy()
OPEN = SDK(G20_OPEN_CMD).copy()
#: Isaac Lab's joint state is float32: a written pose reads back within its rounding (6e-8 rad measured).
TRACK_TOL = 1e-6
#: Building the Isaac Lab task (warp kernels cached: ~10-30 s on 2 loaded cores; cold: minutes more).
READY_S = 600.0
MALFORMED_SDK = [[], [float("nan")] * 20, [float("inf")], [256.0], [-1.0], [80.5] * 20]
#: The side-by-side's settled joint states, free poses: both bridges write the same float32 composer target,
#: MuJoCo as float64, Isaac Lab as float32, so they differ by float32 rounding (6e-8 rad measured; bound 1e-6).
FREE_TOL = 1e-6
#: A pose that presses a finger into another (the full fist, thumb into the palm): MuJoCo's hard-write keeps the
#: written pose (no projection under track_test), Isaac Lab's contacts push it for the physics step before the next
#: write (1.9e-3 rad on the thumb, measured here and in docs/how-to/isaaclab.md); bound 1e-2.
CONTACT_TOL = 1e-2
#: The side-by-side's SDK command stream: each preset, then partial and single-finger curls, back to open.
SIDE_BY_SIDE = [
    ("half_fist", GOAL_PRESETS["half_fist"], FREE_TOL),
    ("open", GOAL_PRESETS["open"], FREE_TOL),
    ("curl 170", (170,) * 5 + GOAL_PRESETS["open"][5:15] + (170,) * 5, FREE_TOL),
    ("index only", (255, 0) + (255,) * 13 + (255, 0, 255, 255, 255), FREE_TOL),
    ("full_fist", GOAL_PRESETS["full_fist"], CONTACT_TOL),
    ("open again", GOAL_PRESETS["open"], FREE_TOL),
]


@pytest.fixture(scope="module")
def bridge(client):
    """The Isaac Lab bridge with its defaults (hard-write, slew 0, headless), logging every rejected message."""
    proc = BridgeProcess(domain_for_tests(), "backend=isaaclab", "warn_interval_s=0", headless=None)
    try:
        states = client.reader(ISAAC.state)
        client.wait_for(states, lambda m: True, READY_S)
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def io(bridge, client):
    writer, states = client.writer(ISAAC.command), client.reader(ISAAC.state)
    client.wait_matched(writer, 30)
    client.wait_matched(states, 30)
    time.sleep(0.3)
    client.take(states)
    return writer, states


def reach(client, writer, states, cmd, expected, tol=TRACK_TOL, timeout=30.0):
    client.send(writer, encode_joint_state(position=cmd))
    seen, _ = client.wait_for(states, lambda m: np.abs(m.position - expected).max() <= tol, timeout)
    return seen


def test_sdk_commands_in_joint_states_out(io, client, bridge, record_property):
    writer, states = io
    assert (
        "G20 bridge (left hand on Isaac Lab, hard_write, slew 0 rad/s, collision projection off, headless)"
        in bridge.output
    ), bridge.output
    reach(client, writer, states, G20_OPEN_CMD, OPEN)
    seen = reach(client, writer, states, G20_HALF_FIST_CMD, HALF_FIST)
    record_property("half_fist_messages", len(seen))
    print(f"\nhalf fist on Isaac Lab: within {TRACK_TOL} rad after {len(seen)} state message(s)")
    assert len(seen) <= 10  # slew 0: the next simulation step is there
    last = seen[-1].msg
    assert list(last.name) == list(ALL_JOINTS)
    assert last.velocity.shape == (len(ALL_JOINTS),)
    settled = client.collect(states, 0.3)[-1].msg
    assert np.abs(settled.position - HALF_FIST).max() <= TRACK_TOL
    assert np.abs(settled.velocity).max() == 0.0  # hard-write at rest: no motion per step


def test_state_is_published_at_50_hz(io, client, record_property):
    """The schedule, from the stamps' median interval (as in tests/bridge): a stall of a busy machine thins the
    mean rate (printed) but moves only the intervals it spans."""
    _, states = io
    timing = StateTiming.of(client.collect(states, 3.2), 3.0)
    record_property("state_rate_hz", timing.rate_hz)
    print(f"\nIsaac Lab state over 3 s: {timing}")
    assert timing.median_interval_s == pytest.approx(0.020, rel=0.1)


def test_bad_samples_are_counted_apart_and_change_nothing(io, client, bridge):
    """Malformed commands (rejected by the mapping) and undecodable samples (dropped by the transport) are counted
    on their own lines; neither moves the hand, and the valid command among them arrives."""
    writer, states = io
    reach(client, writer, states, G20_OPEN_CMD, OPEN)
    rejected_before = _last_count(bridge.output, "rejected malformed messages")
    errors_before = _last_count(bridge.output, "DDS receive errors")
    client.take(states)
    for cmd in MALFORMED_SDK:
        client.send(writer, encode_joint_state(position=cmd))
        client.send(writer, not_utf8(list(G20_HALF_FIST_CMD)))
        time.sleep(0.02)  # below the readers' keep-last 10 on a slow machine
    after = client.collect(states, 1.0)
    assert len(after) >= 25, f"the bridge stopped publishing: {len(after)} state messages in 1 s"
    worst = max(np.abs(s.msg.position - OPEN).max() for s in after)
    assert worst <= TRACK_TOL, f"a bad sample moved the hand by {worst} rad"
    n = len(MALFORMED_SDK)
    bridge.wait_for_line(rf"rejected malformed messages: .*\({rejected_before + n} in all\)", 30)
    bridge.wait_for_line(rf"DDS receive errors: .*\({errors_before + n} in all\)", 30)
    time.sleep(0.3)
    assert _last_count(bridge.output, "rejected malformed messages") == rejected_before + n  # each one, once
    assert _last_count(bridge.output, "DDS receive errors") == errors_before + n
    assert re.search(r"SDK channel 0 \(\w+\) = nan is not finite", bridge.output)
    assert "UnicodeDecodeError" in bridge.output
    reach(client, writer, states, G20_HALF_FIST_CMD, HALF_FIST)  # still listening


def _last_count(output: str, what: str) -> int:
    return max((int(m) for m in re.findall(rf"{what}: .*\((\d+) in all\)", output)), default=0)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_runs_and_stops_cleanly_reporting_its_real_time_factor(dds, sig, record_property):
    """Runs 4 s at the default speed (x1.35, which the CPU does not reach: the loop drops its backlog), then a signal
    ends it with exit status 0, no process left; its last line gives the real-time factor it reached."""
    proc = BridgeProcess(domain_for_tests(1), "backend=isaaclab", headless=None)
    try:
        proc.wait_for_line(r"G20 bridge \(", READY_S)
        time.sleep(4.0)
        start = time.monotonic()
        proc.proc.send_signal(sig)
        rc = proc.proc.wait(timeout=30)
        took = time.monotonic() - start
        proc._reader.join(timeout=5)
        assert rc == 0, proc.output
        assert not re.search(r"Traceback|Abort|Fatal|Segmentation", proc.output), proc.output
        m = re.search(r"G20 bridge stopped: (\d+) steps \(([\d.]+) s simulated in ([\d.]+) s, x([\d.]+)\), "
                      r"(\d+) state messages.*?(\d+) steps dropped", proc.output)  # fmt: skip
        assert m, proc.output
        steps, sim_s, wall_s, rtf, published = int(m[1]), float(m[2]), float(m[3]), float(m[4]), int(m[5])
        record_property("real_time_factor", rtf)
        record_property("shutdown_s", took)
        print(f"\n{sig.name}: exit {rc} after {took:.3f} s; {steps} steps, {sim_s} s simulated in {wall_s} s: "
              f"real-time factor x{rtf}, {published} state messages ({published / wall_s:.1f} Hz)")  # fmt: skip
        assert took <= 5.0
        assert rtf > 0.02 and steps > 0
        assert published / wall_s == pytest.approx(50.0, rel=0.15)
        assert not proc.group(), f"processes left behind: {proc.group()}"
    finally:
        proc.stop()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["collision_projection=true"], f"error: bridge: {ISAACLAB_REFUSED['collision_projection']}"),
        (["headless=false"], "error: the Isaac Lab bridge's viewer (Newton's GL visualizer) opens a window, and there "
                             "is no display (DISPLAY is not set): run it under a virtual screen (xvfb-run -a python "
                             "...), or run with headless=true"),
    ],
    ids=["projection", "viewer-without-display"],
)  # fmt: skip
def test_stops_at_once_naming_the_problem_in_one_line(dds, overrides, message):
    env = os.environ.copy()
    use_loopback(env)
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [sys.executable, str(SCRIPT), "backend=isaaclab", f"domain_id={domain_for_tests(1)}", *overrides]
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [message]
    print(f"\n{overrides[0]}: exit 2 after {time.monotonic() - start:.1f} s")


def test_viewer_shows_the_hand_and_closes_cleanly(dds, x_display, record_property):
    """``headless=false``: Newton's GL visualizer on a virtual screen (Mesa's software OpenGL here) beside the
    simulation; the state keeps coming at 50 Hz, and SIGTERM ends it with exit status 0."""
    domain = domain_for_tests(1)
    proc = BridgeProcess(domain, "backend=isaaclab", headless=False, display=x_display)
    watcher = Ros2Client(domain)
    try:
        states = watcher.reader(ISAAC.state)
        proc.wait_for_line(
            r"G20 bridge \(left hand on Isaac Lab, hard_write, slew 0 rad/s, collision projection off, viewer\)",
            READY_S,
        )
        timing = StateTiming.of(watcher.collect(states, 3.0), 3.0)
        start = time.monotonic()
        proc.proc.send_signal(signal.SIGTERM)
        rc = proc.proc.wait(timeout=30)
        took = time.monotonic() - start
        proc._reader.join(timeout=5)
        m = re.search(r"G20 bridge stopped: (\d+) steps \(([\d.]+) s simulated in ([\d.]+) s, x([\d.]+)\)", proc.output)
        assert rc == 0 and m, proc.output
        record_property("viewer_state_rate_hz", timing.rate_hz)
        print(f"\nviewer: state {timing}, real-time factor x{m[4]} ({m[1]} steps in {m[3]} s); SIGTERM -> exit "
              f"{rc} after {took:.2f} s")  # fmt: skip
        assert timing.median_interval_s == pytest.approx(0.020, rel=0.1)  # the viewer does not thin it
        assert took <= 5.0
        assert not re.search(r"Traceback|Abort|Fatal|Segmentation", proc.output), proc.output
    finally:
        watcher.close()
        proc.stop()


# -- side by side: the same SDK stream into the MuJoCo and the Isaac Lab bridge -----------------------------------
def _mujoco_python() -> str:
    python = os.environ.get("DEXWHEEL_MUJOCO_PYTHON", str(ROOT / ".venv" / "bin" / "python"))
    if not Path(python).exists():
        pytest.skip(f"the side-by-side needs the core venv's python (DEXWHEEL_MUJOCO_PYTHON; {python} is missing)")
    return python


def _settled(client, states, expected, tol, timeout=60.0):
    """The state once it is within ``tol`` of ``expected`` and at rest: the position of the message before and zero
    velocity (two messages may carry one step: the state goes out at 50 Hz whatever the step takes)."""
    client.wait_for(states, lambda m: np.abs(m.position - expected).max() <= tol, timeout)
    prev = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for r in client.take(states):
            if prev is not None and np.array_equal(r.msg.position, prev.position) and not np.any(r.msg.velocity):
                return r.msg
            prev = r.msg
        time.sleep(0.005)
    raise TimeoutError("the state did not come to rest")


def test_side_by_side_mujoco_and_isaac_lab_agree(dds, record_property):
    domain = domain_for_tests(1)
    both = [
        BridgeProcess(domain, "track_test=true", "warn_interval_s=0", python=_mujoco_python()),
        BridgeProcess(domain, "backend=isaaclab", "track_test=true", "warn_interval_s=0", headless=None),
    ]
    side = Ros2Client(domain)
    try:
        readers = [side.reader(MUJOCO.state), side.reader(ISAAC.state)]
        for r in readers:
            side.wait_for(r, lambda m: True, READY_S)
        writer = side.writer(MUJOCO.command)  # one topic, both bridges subscribe to it
        deadline = time.monotonic() + 30
        while len(writer.get_matched_subscriptions()) < 2:
            assert time.monotonic() < deadline, "both bridges' command readers must match"
            time.sleep(0.02)
        time.sleep(0.3)
        rows = []
        for name, cmd, tol in SIDE_BY_SIDE:
            expected = SDK(cmd)
            for r in readers:
                side.take(r)
            side.send(writer, encode_joint_state(position=cmd))
            mj, il = (_settled(side, r, expected, max(tol, 1e-4)) for r in readers)
            dq = np.abs(np.asarray(mj.position) - np.asarray(il.position))
            worst = ALL_JOINTS[int(dq.argmax())]
            rows.append((name, float(dq.max()), worst, tol))
        for name, diff, worst, tol in rows:
            print(f"\n{name}: max |q_mujoco - q_isaac| = {diff:.2e} rad ({worst}), tolerance {tol:g}", end="")
            record_property(f"side_by_side {name}", diff)
        print()
        for name, diff, worst, tol in rows:
            assert diff <= tol, f"{name}: {diff} rad on {worst}"
    finally:
        side.close()
        for b in both:
            b.stop()


def test_the_core_venv_relaunches_the_script_in_the_isaac_lab_venv(dds):
    """``python scripts/bridge.py backend=isaaclab`` from the core venv: checked there, then the same command runs in
    the Isaac Lab venv (never built from a test: skipped without ``.venv-isaaclab`` in this checkout)."""
    from dexwheel.rl.isaaclab_launch import STAMP

    if not STAMP.exists():
        pytest.skip(f"no Isaac Lab venv in this checkout ({STAMP} is missing); make isaaclab-venv builds it")
    proc = BridgeProcess(domain_for_tests(1), "backend=isaaclab", "max_steps=20", headless=None,
                         python=_mujoco_python())  # fmt: skip
    try:
        rc = proc.proc.wait(timeout=READY_S)
        proc._reader.join(timeout=5)
        assert rc == 0, proc.output
        assert "G20 bridge (left hand on Isaac Lab" in proc.output
        assert re.search(r"G20 bridge stopped: 20 steps", proc.output), proc.output
    finally:
        proc.stop()


def test_pd_drive_and_the_hold_policy_in_process():
    """In process, without DDS: ``pd_drive=true`` on Isaac Lab tracks the half fist within the vendor bridge's
    0.02 rad in 0.5 s simulated, and policy ``raise`` holds the pose the hand has (the shared handlers and slot)."""
    from dexwheel.bridge.config import BridgeConfig
    from dexwheel.bridge.node import G20Bridge
    from dexwheel.bridge.ros2_types import JointState

    class Fake:
        def __init__(self):
            self.handlers, self.sent = {}, []

        def subscribe(self, topic, handler):
            self.handlers[topic] = handler

        def publisher(self, topic):
            return self.sent.append

    clock = [1000.0]
    cfg = BridgeConfig.from_mapping(
        {"backend": "isaaclab", "domain_id": 0, "pd_drive": True, "timeout": {"policy": "raise"}}
    )
    fake = Fake()
    bridge = G20Bridge(cfg, fake, clock=lambda: clock[0])  # type: ignore[arg-type]
    try:
        assert bridge.sim.name == "Isaac Lab" and bridge.dt == pytest.approx(0.002)
        fake.handlers[cfg.source_topic](JointState(position=list(G20_HALF_FIST_CMD)))
        for _ in range(250):
            bridge.step()
        q = np.array(bridge.joint_state().position)
        print(f"\nPD on Isaac Lab: half fist within {np.abs(q - HALF_FIST).max():.2e} rad after 0.5 s")
        assert np.abs(q - HALF_FIST).max() <= 0.02
        clock[0] += 1.0  # the source goes silent: policy raise holds the current pose
        for _ in range(50):
            bridge.step()
        assert np.abs(np.array(bridge.joint_state().position) - q).max() <= 0.02
        assert bridge.stats.stale_steps >= 50
    finally:
        bridge.close()
