"""JointState topics over DDS, as a ROS 2 node would see them, behind a small :class:`Transport` interface.

:class:`CycloneTransport` uses the ``cyclonedds`` Python package (PyPI, ships its own library: no ROS
install). ROS 2 conventions: DDS topic ``rt/<topic>``, the ``sensor_msgs::msg::dds_::JointState_`` type
(:mod:`dexwheel.bridge.ros2_types`), ROS 2's default QoS (reliable, volatile, keep-last 10) and the type
hash in every endpoint's USER_DATA (ROS 2 Iron+ warns about endpoints without it).

Incoming samples are taken on one receive thread owned by the transport (a DDS wait set, woken by a guard
condition on :meth:`CycloneTransport.close`), so handlers never run on Cyclone's internal threads and
closing joins every thread the transport started. Samples are taken and decoded one at a time: one that
cannot be decoded is counted (``CycloneTransport.errors``) and dropped alone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from cyclonedds.core import (
    DDSException,
    GuardCondition,
    InstanceState,
    Policy,
    Qos,
    ReadCondition,
    SampleState,
    ViewState,
    WaitSet,
)
from cyclonedds.domain import DomainParticipant
from cyclonedds.internal import InvalidSample
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from dexwheel.bridge.diagnostics import RateLimitedCounter
from dexwheel.bridge.ros2_types import JOINT_STATE_TYPE_HASH, JointState, dds_topic_name, type_hash_user_data
from dexwheel.uncopyable import Uncopyable

log = logging.getLogger(__name__)

Handler = Callable[[JointState], None]
Publish = Callable[[JointState], None]

#: ROS 2's default topic QoS (rmw_qos_profile_default): reliable, volatile, keep-last 10.
HISTORY_DEPTH = 10
#: How long a reliable write may block on a full writer history (ROS 2's default max_blocking_time).
MAX_BLOCKING_MS = 100


class Transport(Protocol):
    """What the bridge needs from a middleware: JointState subscriptions and publishers.

    Handlers run on the transport's own thread, one sample at a time, in arrival order.
    """

    def subscribe(self, topic: str, handler: Handler) -> None: ...

    def publisher(self, topic: str) -> Publish: ...

    def start(self) -> None: ...

    def close(self) -> None: ...


def ros2_qos(type_hash: str = JOINT_STATE_TYPE_HASH, depth: int = HISTORY_DEPTH) -> Qos:
    """ROS 2's default topic QoS, plain CDR, and the type hash in USER_DATA."""
    return Qos(
        Policy.Reliability.Reliable(duration(milliseconds=MAX_BLOCKING_MS)),
        Policy.Durability.Volatile,
        Policy.History.KeepLast(depth),
        Policy.DataRepresentation(use_cdrv0_representation=True),  # encapsulation 0x0001, what ROS 2 uses
        Policy.Userdata(type_hash_user_data(type_hash)),
    )


class CycloneTransport(Uncopyable):
    """One DDS participant on ``domain_id`` with JointState readers and writers (see the module doc).

    ``errors`` counts samples that could not be taken or decoded and handler failures, rate-limited in
    the log like the bridge's rejected messages. Copying or pickling one is refused: the copy would share the
    participant's handle, and collecting it would delete the original's participant.
    """

    def __init__(self, domain_id: int, *, warn_interval_s: float = 5.0, name: str = "dexwheel-bridge") -> None:
        self.domain_id = int(domain_id)
        self.name = name
        self._qos = ros2_qos()
        self._participant: DomainParticipant | None = DomainParticipant(self.domain_id)
        self._topics: dict[str, Topic] = {}
        self._readers: list[tuple[str, DataReader, Handler]] = []
        self._writers: list[DataWriter] = []
        self._waitset: WaitSet | None = WaitSet(self._participant)
        self._wake: GuardCondition | None = GuardCondition(self._participant)
        self._waitset.attach(self._wake)
        self._conditions: list[ReadCondition] = []
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()
        self.errors = RateLimitedCounter(log, "DDS receive errors", warn_interval_s)

    def _copy_refusal(self) -> str:
        return (
            f"{type(self).__name__} {self.name!r}: a DDS transport cannot be copied or pickled (a copy would share "
            "its DDS participant, and dropping the copy would delete it); create another"
        )

    def _topic(self, ros_topic: str) -> Topic:
        dds_name = dds_topic_name(ros_topic)
        if dds_name not in self._topics:
            self._topics[dds_name] = Topic(self._live(), dds_name, JointState, qos=self._qos)
        return self._topics[dds_name]

    def _live(self) -> DomainParticipant:
        if self._participant is None:
            raise RuntimeError(f"{self.name}: the transport is closed")
        return self._participant

    def subscribe(self, topic: str, handler: Handler) -> None:
        """Deliver every JointState sample on ``topic`` to ``handler`` (on the receive thread)."""
        if self._thread is not None:
            raise RuntimeError(f"{self.name}: subscribe before start()")
        reader = DataReader(self._live(), self._topic(topic), qos=self._qos)
        condition = ReadCondition(reader, SampleState.NotRead | ViewState.Any | InstanceState.Any)
        assert self._waitset is not None
        self._waitset.attach(condition)
        self._conditions.append(condition)
        self._readers.append((topic, reader, handler))

    def publisher(self, topic: str) -> Publish:
        """A function that writes one JointState sample on ``topic`` (RuntimeError once closed)."""
        index = len(self._writers)
        self._writers.append(DataWriter(self._live(), self._topic(topic), qos=self._qos))

        def publish(msg: JointState) -> None:
            # look the writer up each time: holding it here would keep it (and the participant) alive
            if index >= len(self._writers):
                raise RuntimeError(f"{self.name}: the transport is closed")
            self._writers[index].write(msg)

        return publish

    def start(self) -> None:
        """Start the receive thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._receive, name=f"{self.name}-receive", daemon=True)
            self._thread.start()

    def _receive(self) -> None:
        waitset = self._waitset
        assert waitset is not None
        while not self._closing.is_set():
            waitset.wait(duration(seconds=1))
            if self._closing.is_set():
                break
            for topic, reader, handler in self._readers:
                self._drain(topic, reader, handler)

    def _drain(self, topic: str, reader: DataReader, handler: Handler) -> None:
        """Deliver every sample waiting in ``reader``, in arrival order, taken and decoded one at a time: a
        sample that cannot be decoded (a string that is not UTF-8, a truncated sequence) is counted and
        dropped alone, never the valid ones around it (cyclonedds decodes a whole ``take(N)`` at once, and
        one bad sample would lose the batch)."""
        while not self._closing.is_set():
            try:
                samples = reader.take(N=1)
            except DDSException as exc:  # the take itself failed: nothing was taken, try at the next wake-up
                self.errors.count(topic, f"could not take a sample: {exc!r}")
                return
            except Exception as exc:  # taken but undecodable: this sample only is lost
                self.errors.count(topic, f"dropped a sample that could not be decoded: {exc!r}")
                continue
            if not samples:
                return
            sample = samples[0]
            if isinstance(sample, InvalidSample):  # a dispose/unregister notification, not data
                continue
            try:
                handler(sample)
            except Exception as exc:  # a handler bug must not kill the receive thread
                self.errors.count(topic, f"handler {getattr(handler, '__name__', handler)} failed: {exc!r}")

    def close(self) -> None:
        """Stop and join the receive thread, then delete every DDS entity (children before the participant)."""
        if self._participant is None:
            return
        self._closing.set()
        if self._wake is not None:
            self._wake.set(True)  # wakes the receive thread's wait at once
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.errors.flush(force=True)
        # cyclonedds deletes an entity when its Python object goes: drop them leaves first
        self._waitset = None
        self._conditions.clear()
        self._readers.clear()
        self._writers.clear()
        self._topics.clear()
        self._wake = None
        self._participant = None

    def __enter__(self) -> CycloneTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
