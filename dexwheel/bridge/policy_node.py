"""An exported G20 in-hand policy as a node on the hand's SDK topics: what a user runs against the real hand.

The in-hand policies read proprioception only (their run's ``policy`` observation group: the joint positions with
their history, the last action; the rolling task's a clock too, ``gait_phase``), which the hand's joint-state topic
carries (the clock: the node's own count of its control steps since it started). Each control step (the export's
``control_hz``, of wall time) the node:

1. takes the latest joint state (every hinge, by name);
2. computes the run's own observation terms on it (:class:`~dexwheel.tasks.manager.TermRunner` over the task's
   ``policy`` terms: for the same joint positions, the env's observation columns bit for bit);
3. runs the ONNX graph and clips its action to the export's ``action.clip``;
4. maps the action through the run's action path, as the env does (:class:`~dexwheel.tasks.hand.action.G20ActionMap`
   with the run's mapping and scale, then the composer, :class:`~dexwheel.tasks.hand.action_path.HandActionPath`)
   to the commanded active joints;
5. sends them as the SDK's 20 values 0..255 (:meth:`~dexwheel.control.G20SdkMapping.to_sdk`) on the command topic:
   the wire the real hand takes, and the bridge's (``scripts/bridge.py``).

Two training options are not applied: observation noise (a real sensor has its own) and the action latency (so has
the wire). The node stops when the joint state goes silent for ``state_timeout_s``: the hand then holds its last
command (the bridge: its timeout policy).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dexwheel.bridge.config import MAX_DOMAIN_ID, Topics, ros_domain_id
from dexwheel.bridge.diagnostics import RateLimitedCounter
from dexwheel.bridge.loopback import use_loopback
from dexwheel.bridge.ros2_types import Header, JointState, stamp
from dexwheel.bridge.transport import CycloneTransport, Transport
from dexwheel.control import G20_MIMIC, G20SdkMapping
from dexwheel.fields import ConfigFieldError, check_types
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS
from dexwheel.tasks.hand.action import G20ActionMap
from dexwheel.tasks.hand.action_path import HandActionPath
from dexwheel.tasks.in_hand.config import InHandCfg
from dexwheel.tasks.manager import TermRunner
from dexwheel.tasks.registry import record_of_env, resolve, tasks

log = logging.getLogger(__name__)


def bridge_env_ids() -> tuple[str, ...]:
    """The exports the node plays: of the tasks whose record says so (their policies read proprioception only)."""
    return tuple(dict.fromkeys(i for r in tasks().values() if r.bridge for i in r.envs.values()))


_G = "dexwheel.tasks.mdp:"  # the generic terms the wire feeds
#: The observation terms a joint-state topic feeds: what the hand reports, and what the node itself sent and counts
#: (its last action, its control steps since it started: the rolling task's clock).
WIRE_TERMS = {_G + "joint_pos": "position", _G + "joint_vel": "velocity", _G + "last_action": None,
              "dexwheel.tasks.in_hand.observations:gait_phase": None}  # fmt: skip
_ACTIVE_IDX = G20_MIMIC.layout.indices(ACTIVE_JOINTS)


class NodeError(RuntimeError):
    """The node cannot start or go on: one line naming the setting, the topic or the file."""


def _bad(name: str, detail: str) -> ConfigFieldError:
    return ConfigFieldError(name, detail, "policy_node")


@dataclass(frozen=True)
class WireTopics:
    """The hand's command topic (SDK values 0..255 out) and its joint-state topic (in); None: the bridge's."""

    command: str | None = None
    state: str | None = None


@dataclass(frozen=True)
class PolicyNodeConfig:
    """Every setting of ``scripts/policy_node.py`` (``configs/policy_node.yaml``)."""

    #: The export (``scripts/export.py``'s ``policy.onnx``, its ``policy.json`` beside it) of an in-hand run.
    onnx: str = ""
    #: DDS domain (ROS 2's ROS_DOMAIN_ID); None: ``ROS_DOMAIN_ID`` from the environment, else 0.
    domain_id: int | None = None
    topics: WireTopics = field(default_factory=WireTopics)
    #: Stop after this many policy steps (0: run until stopped).
    max_steps: int = 0
    #: How long to wait for the hand's first joint state (s).
    wait_s: float = 30.0
    #: Stop when the newest joint state is older than this (s).
    state_timeout_s: float = 0.5
    #: At most one warning per this many seconds about rejected state messages (each one is counted).
    warn_interval_s: float = 5.0
    #: Bind Cyclone DDS to the loopback interface with multicast off (``dexwheel.bridge.loopback``).
    loopback_only: bool = False

    def __post_init__(self) -> None:
        if self.domain_id is None:
            object.__setattr__(self, "domain_id", ros_domain_id())
        check_types(self, env="policy_node")
        if not self.onnx:
            raise _bad("onnx", "onnx: give the export to play, onnx=<run>/export/policy.onnx (scripts/export.py)")
        for name in ("wait_s", "state_timeout_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise _bad(name, f"{name} must be finite and > 0, got {value!r}")
        if self.max_steps < 0:
            raise _bad("max_steps", f"max_steps must be >= 0 (0: no limit), got {self.max_steps!r}")
        if not 0 <= self.domain_id <= MAX_DOMAIN_ID:  # type: ignore[operator]
            raise _bad("domain_id", f"domain_id must be between 0 and {MAX_DOMAIN_ID}, got {self.domain_id!r}")

    def topics_for(self, hand: str) -> Topics:
        """The hand's topics: the typed ones, else the bridge's defaults for ``hand`` (state: its MuJoCo scene's)."""
        default = Topics.for_hand(hand)
        command, state = self.topics.command or default.command, self.topics.state or default.state
        if command.strip().lstrip("/") == state.strip().lstrip("/"):
            raise _bad("topics.state", f"topics.state={state!r} is the command topic: the node would read its own "
                                       "commands as the hand's state; choose another")  # fmt: skip
        return Topics(command=command, nominal=default.nominal, state=state)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> PolicyNodeConfig:
        """From a resolved Hydra config: unknown keys fail, naming them and the known ones."""
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise _bad(unknown[0], f"unknown settings {unknown}; known: {known}")
        kwargs = dict(values)
        topics = kwargs.get("topics") or {}
        extra = sorted(set(topics) - {"command", "state"})
        if extra:
            raise _bad(f"topics.{extra[0]}", f"unknown settings {[f'topics.{k}' for k in extra]}; known: "
                                             "['command', 'state']")  # fmt: skip
        kwargs["topics"] = WireTopics(**topics)
        return cls(**kwargs)


class WireHand:
    """What the policy's observation terms read, from the wire: the joints (ALL_JOINTS order), the last action, the
    control steps since the node started (``elapsed``, of ``dt`` seconds each: the env's episode clock)."""

    def __init__(self, action_dim: int, dt: float) -> None:
        self.qpos = np.zeros((1, len(ALL_JOINTS)))
        self.qvel = np.zeros((1, len(ALL_JOINTS)))
        self.last_action = np.zeros((1, action_dim))
        self.elapsed = np.zeros(1, dtype=np.int64)
        self.dt = dt


def _func_name(func: Any) -> str:
    return func if isinstance(func, str) else f"{func.__module__}:{func.__qualname__}"


class HandPolicy:
    """An in-hand run's export with its run's observation terms and action path, without a simulation.

    :meth:`start` at the hand's measured joints (the env's reset: the command is where the hand is), then
    :meth:`act` once per control step: joint state in, the SDK command out.
    """

    def __init__(self, exported: Any, task: InHandCfg) -> None:
        self.exported, self.task = exported, task
        self.hand = task.hand
        self.control_hz = float(exported.metadata["control_hz"])
        self.sdk = G20SdkMapping(task.hand)
        a = task.actions
        self.actions = G20ActionMap(a.kind, task.hand, G20_MIMIC, 1, out_of_range=a.out_of_range,
                                    delta_scale=a.delta_scale)  # fmt: skip
        hold = self.actions.preset(task.composer.hold_pose)
        self.command_path = HandActionPath(task.composer.layers, task.composer.hold_joints, hold,
                                            (G20_MIMIC.active_lower, G20_MIMIC.active_upper), 1)  # fmt: skip
        table = {}
        for name, term in task.observations.items():
            if term.group != "policy":
                continue
            if _func_name(term.func) not in WIRE_TERMS:
                raise NodeError(f"observations.{name}: the policy reads {_func_name(term.func)}, which the hand's joint "
                                f"state does not carry; the node plays policies of {sorted(WIRE_TERMS)} only")  # fmt: skip
            table[name] = dataclasses.replace(term, noise=None)  # a real sensor has its own
        self.state = WireHand(self.actions.dim, 1.0 / self.control_hz)
        self.terms = TermRunner(self.state, 1, table, {}, {})
        self.reads_velocity = any(_func_name(t.func) == _G + "joint_vel" for t in table.values())
        self._check_layout()
        self._run = exported.raw()
        self._low, self._high = (np.asarray(b, dtype=np.float32) for b in exported.metadata["action"]["clip"])
        self._integer = bool(exported.metadata["action"].get("integer", False))
        self.obs = np.zeros((1, self.terms.layout.dim), dtype=np.float32)
        self.command = np.zeros((1, len(ACTIVE_JOINTS)))
        self.raw_action = np.zeros((1, self.actions.dim))
        self._started = False

    @classmethod
    def load(cls, onnx: str | Path) -> HandPolicy:
        """The export at ``onnx`` (checked against its digest) and its run's task config."""
        from dexwheel.rl.env_factory import env_kwargs
        from dexwheel.rl.export import ExportedPolicy
        from dexwheel.rl.run_config import run_config

        exported = ExportedPolicy.load(onnx)
        env_id = exported.metadata.get("env_id")
        if env_id not in bridge_env_ids():
            raise NodeError(f"onnx: {onnx} is an export of {env_id}; the node plays the in-hand tasks' policies "
                            f"({list(bridge_env_ids())}), which read proprioception only")  # fmt: skip
        record, robot = record_of_env(env_id)
        make = resolve(record.make_config)
        return cls(exported, make(record.default_config(robot), **env_kwargs(run_config(exported.run))))

    def _check_layout(self) -> None:
        """The run's policy terms must be the export's columns (a run whose config changed after its export is not)."""
        mine = [{"name": k, "start": s.start, "stop": s.stop} for k, s in self.terms.layout.slices.items()]
        theirs = self.exported.metadata["observation"]["layout"]
        if mine != theirs or self.terms.layout.dim != self.exported.obs_size:
            raise NodeError(f"onnx: {self.exported.path} reads the columns {theirs}, its run's config gives {mine}; "
                            "export the run again (scripts/export.py overwrite=true)")  # fmt: skip

    def start(self, qpos: np.ndarray) -> None:
        """A new episode at the hand's joints ``qpos`` (ALL_JOINTS order): the command is where the hand is, the
        previous action the one that holds it (the env's reset)."""
        q0 = np.clip(np.asarray(qpos, dtype=np.float64)[_ACTIVE_IDX], G20_MIMIC.active_lower, G20_MIMIC.active_upper)
        self.command[0] = q0
        self.raw_action[0] = self.actions.hold_action(q0)
        self.state.last_action[0] = self.actions.normalize(self.raw_action[0])
        self.state.elapsed[0] = 0
        self.terms.reset(0)
        self._started = False

    def observe(self, qpos: np.ndarray, qvel: np.ndarray | None = None) -> np.ndarray:
        """The policy's observation at the hand's joints now (ALL_JOINTS order): the next control step's, a copy."""
        if self._started:  # a control step has passed since the last one: the history and the clock move on
            self.terms.advance()
            self.state.elapsed += 1
        self._started = True
        self.state.qpos[0] = qpos
        self.state.qvel[0] = 0.0 if qvel is None else qvel
        return self.terms.compute_obs(self.obs).copy()

    def step(self) -> np.ndarray:
        """The policy's action on the current observation through the action path: the new command (active joints,
        radians; the env's ``command``)."""
        a = np.clip(self._run(self.obs[:, : self.exported.obs_size]), self._low, self._high)
        if self._integer:
            a = np.rint(a)
        goals, raw, _ = self.actions.map(a, self.command)
        self.command[:] = self.command_path(goals)
        self.raw_action[:] = raw
        self.state.last_action[:] = self.actions.normalize(raw)  # the last_action term's value, as the env's
        return self.command[0].copy()

    def act(self, qpos: np.ndarray, qvel: np.ndarray | None = None) -> np.ndarray:
        """One control step: the joint state in, the SDK's 20 values out."""
        self.observe(qpos, qvel)
        return self.sdk.to_sdk(self.step())


class LatestState:
    """The newest joint state from the hand's topic, in ALL_JOINTS order (the transport's thread writes it)."""

    def __init__(self, needs_velocity: bool, counter: RateLimitedCounter, topic: str, clock: Callable[[], float]):
        self.needs_velocity, self._counter, self._topic, self._clock = needs_velocity, counter, topic, clock
        self._lock = threading.Lock()
        self._arrived = threading.Event()
        self._latest: tuple[np.ndarray, np.ndarray, float] | None = None
        self.received = self.rejected = 0

    def on_state(self, msg: JointState) -> None:
        names = list(msg.name)
        position, velocity = np.asarray(msg.position, dtype=np.float64), np.asarray(msg.velocity, dtype=np.float64)
        missing = [j for j in ALL_JOINTS if j not in names]
        why = (f"names lack {missing}" if missing else
               f"name has {len(names)} entries but position has {len(position)}" if len(position) != len(names) else
               "velocity is not one per name (the policy reads joint_vel)" if self.needs_velocity and
               len(velocity) != len(names) else "a position is not finite" if not np.isfinite(position).all() else "")  # fmt: skip
        if why:
            self.rejected += 1
            self._counter.count(self._topic, why)
            return
        idx = [names.index(j) for j in ALL_JOINTS]
        qvel = velocity[idx] if len(velocity) == len(names) else np.zeros(len(ALL_JOINTS))
        with self._lock:
            self._latest = (position[idx], qvel, self._clock())
        self.received += 1
        self._arrived.set()

    def wait(self, timeout_s: float, stop: threading.Event) -> bool:
        """Wait for the first state (or ``stop``); whether one came."""
        end = self._clock() + timeout_s
        while not stop.is_set() and self._clock() < end:
            if self._arrived.wait(0.05):
                return True
        return self._arrived.is_set()

    def get(self) -> tuple[np.ndarray, np.ndarray, float]:
        with self._lock:
            assert self._latest is not None
            return self._latest


@dataclass
class NodeStats:
    steps: int = 0
    states: int = 0
    rejected: int = 0
    late_steps: int = 0  # control steps started a period or more behind the wall clock
    wall_s: float = 0.0
    #: Why it stopped: "max_steps", "stopped" or "state silent".
    reason: str = ""


def run_policy_node(cfg: PolicyNodeConfig, stop: threading.Event | None = None,
                    transport: Transport | None = None, clock: Callable[[], float] = time.monotonic) -> NodeStats:  # fmt: skip
    """Play ``cfg.onnx`` on the hand's topics until ``stop``, ``max_steps`` or a silent state topic (a
    :class:`NodeError` after it has sent what it sent). ``transport``: default a :class:`CycloneTransport` on
    ``cfg.domain_id``, created and closed here."""
    stop = stop if stop is not None else threading.Event()
    policy = HandPolicy.load(cfg.onnx)  # every refusal before a DDS entity exists
    topics = cfg.topics_for(policy.hand)
    if cfg.loopback_only:
        use_loopback()
    own = transport is None
    if transport is None:
        transport = CycloneTransport(cfg.domain_id, warn_interval_s=cfg.warn_interval_s, name="dexwheel-policy")  # type: ignore[arg-type]
    counter = RateLimitedCounter(log, "rejected joint states", cfg.warn_interval_s, clock=clock)
    latest = LatestState(policy.reads_velocity, counter, topics.state, clock)
    stats = NodeStats()
    try:
        transport.subscribe(topics.state, latest.on_state)
        publish = transport.publisher(topics.command)
        transport.start()
        log.info("policy node: %s (%s, %s hand, %g Hz) on DDS domain %d%s: state from %s, SDK commands on %s",
                 cfg.onnx, policy.exported.metadata["env_id"], policy.hand, policy.control_hz, cfg.domain_id,
                 " (loopback only)" if cfg.loopback_only else "", topics.state, topics.command)  # fmt: skip
        if not latest.wait(cfg.wait_s, stop):
            if stop.is_set():
                stats.reason = "stopped"
                return stats
            raise NodeError(f"no joint state on {topics.state} within wait_s={cfg.wait_s:g} s: is the hand (or "
                            f"scripts/bridge.py) on DDS domain {cfg.domain_id}? (topics.state names another topic)")  # fmt: skip
        policy.start(latest.get()[0])
        period = 1.0 / policy.control_hz
        t0 = next_t = clock()
        while not stop.is_set():
            q, qd, arrived = latest.get()
            now = clock()
            if now - arrived > cfg.state_timeout_s:
                stats.reason = "state silent"
                raise NodeError(f"the joint state on {topics.state} has been silent for {now - arrived:.2f} s "
                                f"(state_timeout_s={cfg.state_timeout_s:g}); stopped after {stats.steps} steps")  # fmt: skip
            sdk = policy.act(q, qd)
            header = Header(stamp=stamp(time.time_ns()))
            publish(JointState(header=header, position=[float(v) for v in sdk]))
            stats.steps += 1
            if cfg.max_steps and stats.steps >= cfg.max_steps:
                stats.reason = "max_steps"
                break
            next_t += period
            if clock() - next_t >= period:  # a period or more behind: start again from now, not in a burst
                stats.late_steps += 1
                next_t = clock()
            stop.wait(max(0.0, next_t - clock()))
        else:
            stats.reason = "stopped"
        stats.wall_s = clock() - t0
        return stats
    finally:
        stats.states, stats.rejected = latest.received, latest.rejected
        counter.flush(force=True)
        if own:
            transport.close()
