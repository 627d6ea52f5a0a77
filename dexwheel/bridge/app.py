"""Wire one bridge together (transport, simulation, optional viewer), run it, and take it apart in order."""

from __future__ import annotations

import logging
import os
import threading

from dexwheel.bridge.config import BridgeConfig
from dexwheel.bridge.loopback import use_loopback
from dexwheel.bridge.node import BridgeStats, G20Bridge
from dexwheel.bridge.ros2_types import dds_topic_name
from dexwheel.bridge.transport import CycloneTransport, Transport

log = logging.getLogger(__name__)


def _network(cfg: BridgeConfig) -> str:
    """Where the bridge's DDS traffic goes, for the startup line."""
    if cfg.loopback_only:
        return "loopback only"
    return "CYCLONEDDS_URI's interfaces" if os.environ.get("CYCLONEDDS_URI") else "Cyclone's default interfaces"


def _timeout(cfg: BridgeConfig) -> str:
    """What a silent source gets, for the startup line."""
    t = cfg.timeout
    then = {"hold_last": f"hold_last ({t.fixed_target} before the first goal)",
            "fixed_target": f"fixed_target {t.fixed_target}", "raise": "raise (hold the pose)"}[t.policy]  # fmt: skip
    return f"silent {t.timeout_s:g} s: {then}"


def run_bridge(
    cfg: BridgeConfig, stop: threading.Event | None = None, transport: Transport | None = None
) -> BridgeStats:
    """Run the bridge until ``stop`` is set (e.g. by a signal handler), ``max_steps`` or the viewer closes.

    ``transport``: default a :class:`CycloneTransport` on ``cfg.domain_id`` (created, and closed, here).
    Shutdown order: the transport first (no handler runs after it), then the viewer (its window thread
    joined), then the simulation; no thread this function started outlives it.
    """
    stop = stop if stop is not None else threading.Event()
    if cfg.loopback_only:
        use_loopback()  # before the first DDS entity of this process
    own = transport is None
    if transport is None:
        transport = CycloneTransport(cfg.domain_id, warn_interval_s=cfg.warn_interval_s)  # type: ignore[arg-type]
    bridge: G20Bridge | None = None
    viewer = None
    sync = None
    try:
        bridge = G20Bridge(cfg, transport)  # Isaac Lab: its viewer, if any, is part of the simulation
        if not cfg.headless:
            sim = bridge.sim
            if cfg.backend == "mujoco":
                from dexwheel.bridge.viewer import PassiveViewer

                viewer = PassiveViewer(sim.model, sim.data, sim.camera())  # type: ignore[attr-defined]
                sync = viewer.sync
            else:
                sync = sim.render  # type: ignore[attr-defined]
        transport.start()
        topics = cfg.topics
        assert topics is not None
        log.info(
            "G20 bridge (%s hand on %s, %s%s, slew %g rad/s, collision projection %s%s) on DDS domain %d (%s): "
            "goals from %s (%s; %s), state on %s (%s) at %g Hz, speed x%g",
            cfg.hand, bridge.sim.name, cfg.drive, ", track test" if cfg.track_test else "", cfg.slew,
            "on" if cfg.projection else "off", ", headless" if cfg.headless else ", viewer", cfg.domain_id,
            _network(cfg), cfg.source_topic, "radians by name" if cfg.plan_nominal else "SDK 0..255", _timeout(cfg),
            topics.state, dds_topic_name(topics.state), cfg.state_hz, cfg.speed,
        )  # fmt: skip
        bridge.run(stop, sync)
        log.info("G20 bridge stopped: %s", bridge.stats_line())
        return bridge.stats
    finally:
        if own:
            transport.close()
        if viewer is not None:
            viewer.close()
        if bridge is not None:
            bridge.close()
