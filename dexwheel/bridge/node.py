"""The G20 simulation bridge: SDK (or nominal) commands in, the simulated hand's joint state out, in real time.

One action path whichever simulation runs the hand: a message is checked and mapped by the control mappings
(``G20SdkMapping`` or the nominal mapping; a malformed one raises there and is counted, never reaching the
simulation); the handler only writes the goal into the composer's :class:`~dexwheel.control.LatestValueSlot`. The
simulation loop owns the simulation: each step it copies the slot's snapshot into the command layer's buffer,
composes, and steps the hand with the composed targets as its nominal action. The simulation
(:class:`HandSimulation`) is ``G20Hand-v0`` on MuJoCo (:mod:`dexwheel.bridge.mujoco_sim`: slew, collision
projection, mimic completion and the drives are the env's) or the Isaac Lab G20 pose task
(:mod:`dexwheel.bridge.isaac_sim`: its action term's slew, completion and drives).

Real time: simulated time advances at ``speed`` x the wall clock (the env's ``control_hz`` steps per
simulated second), and the state is published at ``state_hz`` of wall time by its own thread, from the latest
step's snapshot, so a simulation whose steps are slow (Isaac Lab on the CPU) still publishes at that rate.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dexwheel.bridge.config import BridgeConfig
from dexwheel.bridge.diagnostics import RateLimitedCounter
from dexwheel.bridge.ros2_types import Header, JointState, stamp
from dexwheel.bridge.transport import Publish, Transport
from dexwheel.control import (
    G20_MIMIC,
    ActionError,
    G20SdkMapping,
    JointCommandComposer,
    JointCommandLayer,
    JointLayout,
    JointTargetBuffer,
    LatestValueSlot,
    SlotState,
    SourceTimeoutError,
    g20_nominal_mapping,
)
from dexwheel.robots.g20 import ACTIVE_JOINTS, ACTUATOR_KP, ACTUATOR_KV, ALL_JOINTS, GOAL_PRESETS, SDK_CHANNELS

log = logging.getLogger(__name__)

_ACTIVE_IDX = G20_MIMIC.layout.indices(ACTIVE_JOINTS)  # ALL_JOINTS order -> ACTIVE_JOINTS order


class HandSimulation(Protocol):
    """What the bridge steps: the hand on one simulation, started at the open hand (its startup checks done)."""

    #: Its name in the log (``"MuJoCo"``, ``"Isaac Lab"``).
    name: str
    #: Simulated seconds per :meth:`step`.
    dt: float
    #: The active joints' goal it started at (ACTIVE_JOINTS order): the open hand, or the grasp it holds an object in.
    start: np.ndarray

    def step(self, target: np.ndarray) -> None:
        """One control step toward ``target``: the active joints' radians (ACTIVE_JOINTS order), within limits."""

    def positions(self) -> np.ndarray:
        """Every hinge's position (ALL_JOINTS order), radians."""

    def velocities(self) -> np.ndarray:
        """Every hinge's velocity (ALL_JOINTS order), rad/s (hard-write: the joint motion over the last step)."""

    def close(self) -> None: ...


def make_simulation(cfg: BridgeConfig, start: np.ndarray) -> HandSimulation:
    """``cfg.backend``'s simulation, started at ``start`` (active joints; with an object, at the grasp that holds
    it). Each is imported here: the MuJoCo one needs the core venv (mujoco 4), the Isaac Lab one the Isaac Lab venv."""
    if cfg.backend == "isaaclab":
        from dexwheel.bridge.isaac_sim import IsaacLabHand

        return IsaacLabHand(cfg, start)
    from dexwheel.bridge.mujoco_sim import MujocoHand, MujocoInHand

    return MujocoInHand(cfg, start) if cfg.object.shape is not None else MujocoHand(cfg, start)


@dataclass
class BridgeStats:
    """What the bridge did; logged when it stops."""

    steps: int = 0
    published: int = 0
    accepted: int = 0
    rejected: int = 0
    #: Simulation steps dropped because the loop fell more than ``max_lag_s`` behind the wall clock.
    dropped_steps: int = 0
    #: Steps taken while the source was stale (held, fixed target or, policy raise, holding the pose).
    stale_steps: int = 0
    wall_s: float = 0.0


class G20Bridge:
    """The bridge's simulation and its message handlers; :meth:`run` is the real-time loop.

    ``transport`` provides the topics; the bridge subscribes its handler and creates its state publisher
    here, but starting and closing the transport is the caller's (see :func:`run_bridge`). ``make_sim``: default
    ``cfg.backend``'s (:func:`make_simulation`).
    """

    def __init__(
        self,
        cfg: BridgeConfig,
        transport: Transport,
        clock: Callable[[], float] = time.monotonic,
        make_sim: Callable[[BridgeConfig, np.ndarray], HandSimulation] = make_simulation,
    ) -> None:
        self.cfg = cfg
        self._clock = clock
        sdk = G20SdkMapping(cfg.hand)
        # the bridge has no clipping setting (out_of_range is the envs' and the mappings'): it rejects the message
        sdk.raise_hint = "the bridge rejects such a command (it never clips one): send values in range"
        fixed = sdk(GOAL_PRESETS[cfg.timeout.fixed_target])[_ACTIVE_IDX]
        # -- the simulation: at the open hand (or the grasp holding the object), its first step (kernel compiles)
        # taken before real time; the goal until the first command is where it started
        self.sim = make_sim(cfg, sdk(GOAL_PRESETS["open"])[_ACTIVE_IDX])
        self.dt = float(self.sim.dt)
        start = np.asarray(self.sim.start, dtype=np.float64)
        # -- the action path: mapping (in the handler) -> latest-value slot -> command layer -> composer --------
        layout = JointLayout(ACTIVE_JOINTS, "g20_command")
        gains = {"kp": ACTUATOR_KP, "kd": ACTUATOR_KV}  # the actuators' own gains; the env's drives fix them
        self.slot = LatestValueSlot(
            layout,
            timeout_s=cfg.timeout.timeout_s,
            policy=cfg.timeout.policy,
            fixed_target=JointTargetBuffer(layout, position=fixed, **gains),
            name=cfg.source_topic,
            clock=clock,
            **gains,
        )
        self._command = JointTargetBuffer(layout, position=start, **gains)
        self.composer = JointCommandComposer(layout, [JointCommandLayer("command", self._command.view)])
        self._sdk = sdk
        self._nominal = g20_nominal_mapping(initial=dict(zip(ACTIVE_JOINTS, start.tolist(), strict=True)))
        self._nominal.raise_hint = sdk.raise_hint
        self._lower, self._upper = G20_MIMIC.active_lower, G20_MIMIC.active_upper
        self._target = np.empty(len(ACTIVE_JOINTS))
        self._hold: np.ndarray | None = None  # policy raise: the pose held while the source is stale
        self._slot_state: SlotState | None = None
        self.rejections = RateLimitedCounter(log, "rejected malformed messages", cfg.warn_interval_s, clock=clock)
        self.stats = BridgeStats()
        self._snapshot()
        handler = self.on_nominal if cfg.plan_nominal else self.on_command
        transport.subscribe(cfg.source_topic, handler)
        self._publish: Publish = transport.publisher(cfg.topics.state)  # type: ignore[union-attr]
        self._publish_errors = RateLimitedCounter(log, "failed state writes", cfg.warn_interval_s)

    # -- handlers (transport thread): check, map, store; never touch the simulation ----------------------------
    def on_command(self, msg: JointState) -> None:
        """An SDK command: ``position`` = up to 20 values 0..255 (fewer are padded with 255, more are refused)."""
        try:
            n = len(msg.position)
            if n == 0:
                raise ActionError("position is empty; expected up to 20 SDK values 0..255")
            if n > SDK_CHANNELS:  # a misrouted message (a 21-joint state?), never cut to its first 20 unchecked
                raise ActionError(f"position has {n} values; the G20 SDK protocol has {SDK_CHANNELS} channels (0..255)")
            goal = self._sdk(msg.position)[_ACTIVE_IDX]  # the mapping checks type, range and integers
            self.slot.write(goal)
        except ActionError as exc:
            self._reject(str(exc))
        else:
            self.stats.accepted += 1

    def on_nominal(self, msg: JointState) -> None:
        """A nominal goal: ``name`` and ``position`` (radians) pairwise; joints not named keep their goal."""
        try:
            names, values = list(msg.name), list(msg.position)
            if not names:
                raise ActionError("name is empty; the nominal topic carries radians by joint name")
            if len(names) != len(values):
                raise ActionError(f"name has {len(names)} entries but position has {len(values)}")
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ActionError(f"joint names {repeated} appear more than once")
            goal = self._nominal(dict(zip(names, values, strict=True)))[_ACTIVE_IDX]
            self.slot.write(goal)
        except ActionError as exc:
            self._reject(str(exc))
        else:
            self.stats.accepted += 1

    def _reject(self, reason: str) -> None:
        self.stats.rejected += 1
        self.rejections.count(self.cfg.source_topic, reason)

    # -- simulation (the loop's thread) -----------------------------------------------------------------------
    def step(self) -> None:
        """One simulation step toward the latest goal, as the slot's timeout policy delivers it."""
        try:
            state = self.slot.copy_into(self._command)
            self._hold = None
        except SourceTimeoutError:  # policy raise: the safe state is to stay where the hand is
            state = None
            if self._hold is None:
                self._hold = self.sim.positions()[_ACTIVE_IDX].astype(np.float32)
            self._command.position[:] = self._hold
        if state is not SlotState.FRESH:
            self.stats.stale_steps += 1
        if state is not self._slot_state:
            self._note_source(state)
        frame = self.composer.compose()
        # the composer's float32 can round a goal at a joint limit past it by < 1 ulp; the env's nominal
        # action would reject that, so clamp back (a rounding repair: the goal was checked in the handler)
        np.clip(frame.qpos, self._lower, self._upper, out=self._target)
        self.sim.step(self._target)
        self._snapshot()
        self.stats.steps += 1

    def _snapshot(self) -> None:
        """The state after the latest step, for the publisher thread (one tuple, replaced whole)."""
        self._state = (
            np.array(self.sim.positions(), dtype=np.float64),
            np.array(self.sim.velocities(), dtype=np.float64),
        )

    def _note_source(self, state: SlotState | None) -> None:
        """Log when the source starts, or stops, sending (not the wait for its first goal)."""
        if self.stats.steps > 0 or state is SlotState.FRESH:
            timeout = self.cfg.timeout
            what = {SlotState.FRESH: "receiving goals",
                    SlotState.HELD: f"silent for {timeout.timeout_s} s, holding its last goal (policy hold_last)",
                    SlotState.FIXED: f"silent, going to {timeout.fixed_target!r} (policy {timeout.policy})",
                    None: f"silent for {timeout.timeout_s} s, holding the current pose (policy raise)"}[state]  # fmt: skip
            log.log(logging.WARNING if state is None else logging.INFO, "source %s: %s", self.cfg.source_topic, what)
        self._slot_state = state

    def joint_state(self) -> JointState:
        """The state message: every hinge's name, position and velocity (ALL_JOINTS order) after the latest step,
        stamped now."""
        position, velocity = self._state
        return JointState(
            header=Header(stamp=stamp(time.time_ns()), frame_id=self.cfg.frame_id),
            name=list(ALL_JOINTS),
            position=position.tolist(),
            velocity=velocity.tolist(),  # hard-write: the joint motion / dt
            effort=[],
        )

    def publish(self) -> None:
        try:
            self._publish(self.joint_state())
            self.stats.published += 1
        except Exception as exc:  # a stalled reader must not stop the simulation
            self._publish_errors.count(self.cfg.topics.state, repr(exc))  # type: ignore[union-attr]

    def run(self, stop: threading.Event, on_publish: Callable[[], bool] | None = None) -> BridgeStats:
        """Step in real time until ``stop`` is set, ``max_steps`` is reached or ``on_publish`` (called at the
        state rate between steps, e.g. a viewer's sync) returns False; the state goes out at ``state_hz`` from
        a thread of its own (joined before this returns)."""
        cfg = self.cfg
        step_wall = self.dt / cfg.speed  # wall seconds per simulation step
        pub_wall = 1.0 / cfg.state_hz
        max_steps = int(cfg.max_steps)
        finished = threading.Event()
        publisher = threading.Thread(target=self._publish_loop, args=(finished,), name="bridge-state", daemon=True)
        t0 = start = self._clock()
        publisher.start()
        done = 0  # steps taken since t0
        next_sync = t0
        try:
            while not stop.is_set():
                now = self._clock()
                due = int((now - t0) / step_wall) - done
                if due * step_wall > cfg.max_lag_s:  # stalled or slow: drop the backlog rather than run it in a burst
                    self.stats.dropped_steps += due - 1
                    t0 += (due - 1) * step_wall
                    due = 1
                for _ in range(due):
                    self.step()
                    done += 1
                    if max_steps and self.stats.steps >= max_steps:
                        stop.set()
                        break
                if on_publish is not None and now >= next_sync:
                    next_sync = max(next_sync + pub_wall, now)
                    if not on_publish():
                        break
                wake = t0 + (done + 1) * step_wall
                if on_publish is not None:
                    wake = min(wake, next_sync)
                delay = wake - self._clock()
                if delay > 0:
                    stop.wait(delay)
        finally:
            finished.set()
            publisher.join()
        self.stats.wall_s = self._clock() - start
        return self.stats

    def _publish_loop(self, finished: threading.Event) -> None:
        """The state at ``state_hz`` of wall time until ``finished``. The ticks a stall missed are not sent in a
        burst: a message a period or more late is followed by one at once, and the schedule restarts from it."""
        pub_wall = 1.0 / self.cfg.state_hz
        next_pub = time.monotonic()
        while not finished.is_set():
            self.publish()
            self.rejections.flush()
            next_pub = max(next_pub + pub_wall, time.monotonic())
            finished.wait(next_pub - time.monotonic())

    def stats_line(self) -> str:
        s = self.stats
        sim = s.steps * self.dt
        return (
            f"{s.steps} steps ({sim:.2f} s simulated in {s.wall_s:.2f} s, x{sim / s.wall_s if s.wall_s else 0:.2f}), "
            f"{s.published} state messages, {s.accepted} goals accepted, {s.rejected} rejected, "
            f"{s.dropped_steps} steps dropped (late), {s.stale_steps} steps with a silent source"
        )

    def close(self) -> None:
        self.rejections.flush(force=True)
        self.sim.close()


__all__ = ["BridgeStats", "G20Bridge", "HandSimulation", "make_simulation"]
