"""ns per compose() / resolve_into() next to a plain numpy fancy-index copy of the same arrays.

Run: ``python benchmarks/bench_composer.py [--iters N]``. Two cases:

* the composer spec's example: a 29-joint policy + 2 head joints, with a "wave" override layer over part of the
  right arm; resolved onto a 31-joint robot (identity) and onto a 29-joint robot (head dropped);
* Solenopsis: 8 joints, a knee layer and a wheel (velocity) layer in policy order (knees then wheels),
  resolved onto the robot's per-leg order (knee, wheel, ...).

Baselines, measured in the same run over the same arrays, with the same index maps the composer uses:

* ``fancy qpos``: one ``dst[idx] = src[sidx]`` per layer/binding, position only (the cheapest naive copy);
* ``fancy 5f``: the same for all five fields (qpos, kp, kd, vel, torque): the same work as compose().

The target is compose() within 3x of ``fancy qpos``. No assertions: timings are machine-dependent.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np

from dexwheel.control import (
    FIELDS,
    FRAME_FIELDS,
    JointCommandComposer,
    JointCommandLayer,
    JointCommandResolver,
    JointLayout,
    JointTargetBuffer,
    MotorFrame,
)
from dexwheel.control.spec_example import HEAD_JOINTS, POLICY_JOINTS, STATE_OUTPUT_JOINTS, WAVE_JOINTS
from dexwheel.robots.wheel_leg import POLICY_JOINT_ORDER, ROBOT_JOINT_ORDER

POLICY = POLICY_JOINTS.select(POLICY_JOINTS.names, "policy29")
HEAD = HEAD_JOINTS
WAVE = WAVE_JOINTS
STATE = STATE_OUTPUT_JOINTS.select(STATE_OUTPUT_JOINTS.names, "state31")
SOL_POLICY = JointLayout(POLICY_JOINT_ORDER, "solenopsis_policy")
SOL_ROBOT = JointLayout(ROBOT_JOINT_ORDER, "solenopsis_robot")


def ns_per_call(fn: Callable[[], object], iters: int, repeats: int = 5) -> float:
    """Best of ``repeats`` runs of ``iters`` calls (least disturbed by the rest of the machine)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter_ns() - t0) / iters)
    return best


def fancy_compose(composer: JointCommandComposer, fields: tuple[str, ...]) -> Callable[[], None]:
    """The naive composer: ``out[dst] = src[sidx]`` per layer (owned joints only) and field."""
    frame = composer.frame
    pairs = []
    for layer in composer.layers:
        owned = [n for n in layer.view.layout.names if composer.owners[n] == layer.name]
        sidx, didx = layer.view.layout.indices(owned), composer.output_layout.indices(owned)
        for f in fields:
            pairs.append((getattr(frame, FRAME_FIELDS[FIELDS.index(f)]), didx, getattr(layer.view, f), sidx))

    def run() -> None:
        for dst, didx, src, sidx in pairs:
            dst[didx] = src[sidx]

    return run


def fancy_resolve(src: MotorFrame, robot: JointLayout, fields: tuple[str, ...]) -> Callable[[], None]:
    out = MotorFrame(robot)
    kept = [n for n in src.layout.names if n in robot]
    sidx, didx = src.layout.indices(kept), robot.indices(kept)
    pairs = [(getattr(out, f), getattr(src, f)) for f in fields]

    def run() -> None:
        for dst, s in pairs:
            dst[didx] = s[sidx]

    return run


def seed_case() -> tuple[JointCommandComposer, dict[str, JointCommandResolver]]:
    policy = JointTargetBuffer(POLICY, position=0.1, kp=50.0, kd=2.0)
    wave = JointTargetBuffer(WAVE, position=0.5, kp=40.0, kd=1.5)
    head = JointTargetBuffer(HEAD, kp=16.747, kd=1.066)
    composer = JointCommandComposer(
        STATE,
        (
            JointCommandLayer("policy", policy.view),
            JointCommandLayer("wave", wave.view, override=True),
            JointCommandLayer("head", head.view),
        ),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the one dropped-joints warning of the 29-joint robot
        resolvers = {
            "robot31 (identity)": JointCommandResolver(JointLayout(STATE.names, "robot31"), sources=[STATE]),
            "robot29 (drop 2)": JointCommandResolver(POLICY, sources=[STATE]),
        }
    return composer, resolvers


def solenopsis_case() -> tuple[JointCommandComposer, dict[str, JointCommandResolver]]:
    knees = JointTargetBuffer(SOL_POLICY.select(SOL_POLICY.names[:4], "knees"), kp=40.0, kd=1.0)
    wheels = JointTargetBuffer(SOL_POLICY.select(SOL_POLICY.names[4:], "wheels"), kp=0.0, kd=0.5)
    wheels.vel[:] = 3.0
    composer = JointCommandComposer(
        SOL_POLICY, (JointCommandLayer("knees", knees.view), JointCommandLayer("wheels", wheels.view))
    )
    return composer, {"robot order": JointCommandResolver(SOL_ROBOT, sources=[SOL_POLICY])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=100_000)
    args = parser.parse_args()
    rows = []
    for name, (composer, resolvers) in (("seed 29+2, wave override", seed_case()), ("solenopsis 8", solenopsis_case())):
        frame = composer.compose()
        t = ns_per_call(composer.compose, args.iters)
        base_q = ns_per_call(fancy_compose(composer, ("position",)), args.iters)
        base_5 = ns_per_call(fancy_compose(composer, FIELDS), args.iters)
        rows.append((f"{name}: compose() [{composer.op_count} ops]", t, base_q, base_5))
        for rname, resolver in resolvers.items():
            resolver.resolve_into(frame)
            t = ns_per_call(lambda r=resolver, f=frame: r.resolve_into(f), args.iters)
            base_q = ns_per_call(fancy_resolve(frame, resolver.robot_layout, ("qpos",)), args.iters)
            base_5 = ns_per_call(fancy_resolve(frame, resolver.robot_layout, FRAME_FIELDS), args.iters)
            rows.append((f"{name}: resolve_into() -> {rname}", t, base_q, base_5))
    width = max(len(r[0]) for r in rows)
    print(f"numpy {np.__version__}, {args.iters} calls per timing, best of 5")
    header = f"{'case':<{width}}  {'ns/call':>8}  {'fancy qpos':>10}  {'ratio':>6}  {'fancy 5f':>9}  {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for label, t, bq, b5 in rows:
        print(f"{label:<{width}}  {t:8.0f}  {bq:10.0f}  {t / bq:6.2f}  {b5:9.0f}  {t / b5:6.2f}")


if __name__ == "__main__":
    main()
