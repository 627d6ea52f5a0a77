"""A Cyclone DDS configuration that keeps all traffic on the loopback interface (tests, CI, one machine).

By default Cyclone DDS discovers peers by multicast on the machine's network interfaces. This config binds
it to ``lo``, turns multicast off and discovers by unicast to 127.0.0.1 only, so nothing is sent to any
other address. Cyclone reads it from ``CYCLONEDDS_URI`` once, when the process creates its first DDS
entity: set it before that.
"""

from __future__ import annotations

import logging
import os
from collections.abc import MutableMapping

log = logging.getLogger(__name__)

LOOPBACK_CONFIG = (
    "<CycloneDDS><Domain>"
    '<General><Interfaces><NetworkInterface name="lo"/></Interfaces><AllowMulticast>false</AllowMulticast></General>'
    '<Discovery><Peers><Peer address="127.0.0.1"/></Peers></Discovery>'
    "</Domain></CycloneDDS>"
)


def use_loopback(environ: MutableMapping[str, str] | None = None) -> str:
    """Set ``CYCLONEDDS_URI`` to :data:`LOOPBACK_CONFIG` in ``environ`` (default: this process's
    environment; pass a copy for a subprocess) and return the config. A different ``CYCLONEDDS_URI`` there
    (the user's own) is replaced, and a warning says so: loopback was asked for, but not silently."""
    target = os.environ if environ is None else environ
    replaced = target.get("CYCLONEDDS_URI", "")
    if replaced.strip() and replaced != LOOPBACK_CONFIG:
        log.warning("loopback only: CYCLONEDDS_URI=%.120r is replaced by the loopback-only config", replaced)
    target["CYCLONEDDS_URI"] = LOOPBACK_CONFIG
    return LOOPBACK_CONFIG
