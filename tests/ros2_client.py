"""A plain-DDS ROS 2 client for the bridge tests, that checks the wire format independently.

Its samples are encoded and decoded by ``rosbags`` (an independent ROS 2 CDR implementation that knows the
ROS 2 message definitions), not by ``dexwheel.bridge.ros2_types``: Cyclone DDS only carries the bytes.
Every participant here binds to the loopback interface with multicast off (``use_loopback`` before the
first participant of the process). No ``from __future__ import annotations``: cyclonedds reads the IDL
struct's field types at runtime.
"""

import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import float64, sequence
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from rosbags.typesys import Stores, get_typestore

from dexwheel.bridge.ros2_types import Header, dds_topic_name
from dexwheel.bridge.transport import ros2_qos

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
