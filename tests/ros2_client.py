"""A plain-DDS ROS 2 client for the bridge tests, that checks the wire format independently.

Its samples are encoded and decoded by ``rosbags`` (an independent ROS 2 CDR implementation that knows the
ROS 2 message definitions), not by ``dexwheel.bridge.ros2_types``: Cyclone DDS only carries the bytes.
Every participant here binds to the loopback interface with multicast off (``use_loopback`` before the
first participant of the process). No ``from __future__ import annotations``: cyclonedds reads the IDL
struct's field types at runtime.
"""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import float64, sequence
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from rosbags.typesys import Stores, get_typestore

from dexwheel.bridge.loopback import use_loopback
from dexwheel.bridge.ros2_types import Header, dds_topic_name
from dexwheel.bridge.transport import ros2_qos

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "bridge.py"
TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
JOINT_STATE = "sensor_msgs/msg/JointState"


def domain_for_tests(offset: int = 0) -> int:
    """A domain id of this test process (so parallel test runs do not see each other's bridges)."""
    return 100 + (os.getpid() % 60) * 2 + offset


class Wire(bytes):
    """The raw CDR bytes of one sample (a bytes that cyclonedds may annotate with its sample_info)."""


@dataclass
class WireJointState(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    """sensor_msgs/JointState's DDS type, but read and written as raw CDR bytes."""

    header: Header = field(default_factory=Header)
    name: sequence[str] = field(default_factory=list)
    position: sequence[float64] = field(default_factory=list)
    velocity: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)

    def serialize(self, **kwargs: Any) -> bytes:
        return self.__dict__.get("wire") or super().serialize(**kwargs)

    @classmethod
    def deserialize(cls, data: bytes, **kwargs: Any) -> Wire:  # type: ignore[override]
        return Wire(data)


def encode_joint_state(name=(), position=(), velocity=(), effort=(), sec: int = 0, nanosec: int = 0,
                       frame_id: str = "") -> bytes:  # fmt: skip
    """A sensor_msgs/JointState as ROS 2 CDR bytes, by rosbags."""
    t = TYPESTORE.types
    stamp = t["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)
    msg = t[JOINT_STATE](
        header=t["std_msgs/msg/Header"](stamp=stamp, frame_id=frame_id),
        name=list(name),
        position=np.asarray(position, dtype=np.float64),
        velocity=np.asarray(velocity, dtype=np.float64),
        effort=np.asarray(effort, dtype=np.float64),
    )
    return bytes(TYPESTORE.serialize_cdr(msg, JOINT_STATE))


def not_utf8(position: list[float]) -> bytes:
    """A well-formed JointState whose header.frame_id is 4 bytes that are not UTF-8 (ROS 2 strings must be)."""
    wire = encode_joint_state(position=position, frame_id="@@@@")
    assert wire.count(b"@@@@") == 1
    return wire.replace(b"@@@@", b"\xff\xfe\xc3\x28")


def decode_joint_state(wire: bytes) -> Any:
    return TYPESTORE.deserialize_cdr(wire, JOINT_STATE)


@dataclass
class Received:
    wire: Wire
    msg: Any
    arrival: float  # time.monotonic() when taken

    @property
    def stamp(self) -> float:
        return self.msg.header.stamp.sec + 1e-9 * self.msg.header.stamp.nanosec


@dataclass
class StateTiming:
    """The spacing of received states by their stamps, over the first ``seconds`` of them."""

    rate_hz: float  # messages per second: what a consumer gets, thinned by any stall of the publisher
    median_interval_s: float  # the publisher's schedule: a stall moves only the intervals it spans
    min_interval_s: float
    max_interval_s: float

    @classmethod
    def of(cls, samples: list[Received], seconds: float) -> "StateTiming":
        stamps = np.array(sorted(s.stamp for s in samples))
        window = stamps[stamps <= stamps[0] + seconds]
        gaps = np.diff(window)
        rate = (window.size - 1) / (window[-1] - window[0])
        return cls(float(rate), float(np.median(gaps)), float(gaps.min()), float(gaps.max()))

    def __str__(self) -> str:
        return (f"{self.rate_hz:.2f} Hz, median interval {1e3 * self.median_interval_s:.1f} ms "
                f"({1e3 * self.min_interval_s:.1f}..{1e3 * self.max_interval_s:.1f} ms)")  # fmt: skip


class Ros2Client:
    """One participant with raw JointState writers and readers on ROS 2 topic names."""

    def __init__(self, domain_id: int) -> None:
        self.participant = DomainParticipant(domain_id)
        self.qos = ros2_qos()
        self._topics: dict[str, Topic] = {}

    def close(self) -> None:
        """Delete the participant (and with it every entity of this client)."""
        self._topics.clear()
        self.participant = None  # type: ignore[assignment]

    def _topic(self, name: str) -> Topic:
        if name not in self._topics:
            self._topics[name] = Topic(self.participant, dds_topic_name(name), WireJointState, qos=self.qos)
        return self._topics[name]

    def writer(self, topic: str) -> DataWriter:
        return DataWriter(self.participant, self._topic(topic), qos=self.qos)

    def reader(self, topic: str) -> DataReader:
        return DataReader(self.participant, self._topic(topic), qos=self.qos)

    @staticmethod
    def send(writer: DataWriter, wire: bytes) -> None:
        sample = WireJointState()
        sample.wire = wire
        writer.write(sample)

    @staticmethod
    def take(reader: DataReader) -> list[Received]:
        now = time.monotonic()
        return [Received(w, decode_joint_state(w), now) for w in reader.take(N=256) if isinstance(w, Wire)]

    @staticmethod
    def wait_matched(entity: DataWriter | DataReader, timeout: float) -> None:
        """Until ``entity`` has a matched peer endpoint (discovery done), so no first sample is lost."""
        matched = (
            entity.get_matched_subscriptions if isinstance(entity, DataWriter) else entity.get_matched_publications
        )
        deadline = time.monotonic() + timeout
        while not matched():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no matched endpoint for {entity} after {timeout} s")
            time.sleep(0.02)

    def collect(self, reader: DataReader, seconds: float) -> list[Received]:
        out: list[Received] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            out += self.take(reader)
            time.sleep(0.005)
        return out

    def wait_for(self, reader: DataReader, predicate, timeout: float) -> tuple[list[Received], Received]:
        """Samples until one satisfies ``predicate`` (all of them, and that one); TimeoutError otherwise."""
        seen: list[Received] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for r in self.take(reader):
                seen.append(r)
                if predicate(r.msg):
                    return seen, r
            time.sleep(0.002)
        raise TimeoutError(f"no matching sample in {timeout} s ({len(seen)} samples seen)")


class BridgeProcess:
    """``scripts/bridge.py`` in its own session (process group), its output collected on a thread."""

    def __init__(self, domain: int, *overrides: str, headless: bool | None = True, display: str | None = None,
                 python: str = sys.executable) -> None:  # fmt: skip
        """``headless`` None: the backend's default; ``python``: the interpreter (default: this test's)."""
        env = os.environ.copy()
        use_loopback(env)
        env.pop("ROS_DOMAIN_ID", None)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        if display is not None:
            env["DISPLAY"] = display
        shown = [] if headless is None else [f"headless={str(headless).lower()}"]
        cmd = [python, str(SCRIPT), *shown, f"domain_id={domain}", *overrides]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for_line(self, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                m = re.search(pattern, line)
                if m:
                    return m
            if self.proc.poll() is not None:
                self._reader.join(timeout=5)
                raise AssertionError(f"bridge exited ({self.proc.returncode}) before {pattern!r}:\n{self.output}")
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r} in {timeout} s:\n{self.output}")

    def group(self) -> list[int]:
        """Live processes in the bridge's process group (itself and anything it started)."""
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                fields = stat[stat.rindex(")") + 2 :].split()
                if fields[0] != "Z" and int(fields[2]) == self.proc.pid:  # state, ppid, pgrp
                    pids.append(int(entry.name))
        return pids

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
