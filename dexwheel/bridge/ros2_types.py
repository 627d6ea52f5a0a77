"""ROS 2 message types as Cyclone DDS IDL structs, so plain DDS participants speak ROS 2's wire format.

ROS 2 (rmw_cyclonedds) maps ``pkg/msg/Type`` to the DDS type ``pkg::msg::dds_::Type_`` and a topic ``/a/b``
to the DDS topic ``rt/a/b``. CDR is positional, so the fields below follow the ``.msg`` files' order
exactly (``shared/notes/ros2-over-cyclonedds.md``). Since Iron, each endpoint also announces its type's
REP-2011 hash in USER_DATA (``typehash=RIHS01_<64 hex>;``); ROS 2 tools warn about endpoints without it.

No ``from __future__ import annotations`` here: cyclonedds reads the field types at runtime.
"""

from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import float64, int32, sequence, uint32

JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
#: REP-2011 hash of sensor_msgs/msg/JointState (identical in Iron, Jazzy and later; the tests recompute it
#: with rosbags' independent implementation).
JOINT_STATE_TYPE_HASH = "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e"
#: ROS 2's DDS topic prefix for message topics (services use rq/ and rr/).
TOPIC_PREFIX = "rt"


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@dataclass
class JointState(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    header: Header = field(default_factory=Header)
    name: sequence[str] = field(default_factory=list)
    position: sequence[float64] = field(default_factory=list)
    velocity: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)


def dds_topic_name(ros_topic: str) -> str:
    """A ROS 2 topic name (``/g20/cmd`` or ``g20/cmd``) -> its DDS topic (``rt/g20/cmd``)."""
    name = ros_topic.strip()
    if not name.strip("/") or "//" in name or name.endswith("/") or any(c.isspace() for c in name):
        raise ValueError(f"topic {ros_topic!r} is not a valid ROS 2 topic name (e.g. '/g20/cb_left_hand_control_cmd')")
    return f"{TOPIC_PREFIX}/{name.lstrip('/')}"


def type_hash_user_data(type_hash: str = JOINT_STATE_TYPE_HASH) -> bytes:
    """USER_DATA of an endpoint as ROS 2 Iron+ writes it: ``typehash=RIHS01_<64 hex>;``."""
    return f"typehash={type_hash};".encode("ascii")


def stamp(ns: int) -> Time:
    """A ``builtin_interfaces/Time`` from nanoseconds since the epoch."""
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def stamp_ns(t: Time) -> int:
    return t.sec * 1_000_000_000 + t.nanosec
