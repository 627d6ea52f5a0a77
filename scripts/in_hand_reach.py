"""How far each G20 joint moves its fingertip about each candidate rotation axis of an object on the palm.

python scripts/in_hand_reach.py                      # the 6 cm cube's centre on the palm, the cube cache's mean grasp
python scripts/in_hand_reach.py --shape capsule --size 0.045 --length 0.08 --orientation across --json /tmp/reach.json

Per active joint: its finger's tip point (the distal capsule's end) is swept over the joint's whole range (every other
joint at the reference pose: the mean grasp of the object's cache, or ``--pose``), and the angle it turns about each
world axis through the object's centre is recorded (deg; ``x``: along the fingers, ``y``: the flexion axis, across the
fingers, ``z``: the palm normal), with the tip's path length (mm). A contact point a fingertip carries that far about
an axis is the most one stroke can turn the object about it (docs/how-to/in-hand.md, "The hand's reach").
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import mujoco
import numpy as np

from dexwheel.cli import Parser, refuse
from dexwheel.control import G20_MIMIC
from dexwheel.fields import ConfigFieldError
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS, DISTAL_TIP, THUMB_DISTAL_TIP
from dexwheel.tasks.in_hand import grasp_cache
from dexwheel.tasks.in_hand.objects import ORIENTATIONS, SHAPES, ObjectSpec, validate_object
from dexwheel.tasks.in_hand.scene import build_scene

AXES = {"x": np.array([1.0, 0.0, 0.0]), "y": np.array([0.0, 1.0, 0.0]), "z": np.array([0.0, 0.0, 1.0])}
SAMPLES = 41


def tip_of(joint: str) -> tuple[str, np.ndarray]:
    """The body whose tip ``joint`` moves, and the tip point in that body's frame."""
    finger = joint.split("_")[0]
    return f"{finger}_distal", np.array(THUMB_DISTAL_TIP if finger == "thumb" else DISTAL_TIP)


def swept_angle(points: np.ndarray, centre: np.ndarray, axis: np.ndarray) -> float:
    """The angle (deg) ``points`` ``(k, 3)`` sweep about ``axis`` through ``centre``, unwrapped along the path."""
    r = points - centre
    r = r - np.outer(r @ axis, axis)
    ref = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = ref - (ref @ axis) * axis
    u /= math.hypot(*u)
    v = np.cross(axis, u)
    angle = np.unwrap(np.arctan2(r @ v, r @ u))
    return float(np.degrees(angle.max() - angle.min()))


def carried_turn(points: np.ndarray, centre: np.ndarray, axis: np.ndarray, radius: float) -> float:
    """The turn (deg) about ``axis`` through ``centre`` of an object of ``radius`` (m) whose surface point moves with
    ``points`` ``(k, 3)`` without slipping: the tip's net displacement along the circle about the axis, over the
    radius."""
    mid = 0.5 * (points[1:] + points[:-1]) - centre
    tangent = np.cross(axis, mid)
    tangent /= np.maximum(np.linalg.norm(tangent, axis=1, keepdims=True), 1e-9)
    net = float(np.sum(np.einsum("ij,ij->i", np.diff(points, axis=0), tangent)))
    return abs(math.degrees(net / radius))


def reach(hand: str, obj: ObjectSpec, pose: np.ndarray, centre: np.ndarray) -> list[dict]:
    """One row per active joint: its tip's sweep about each axis (deg), the turn it carries an object's surface through
    about each (deg) and its tip's path (mm)."""
    model = build_scene(hand, obj)
    data = mujoco.MjData(model)
    qadr = model.jnt_qposadr[[model.joint(j).id for j in ALL_JOINTS]]
    rows = []
    for k, joint in enumerate(ACTIVE_JOINTS):
        body, tip = tip_of(joint)
        bid = model.body(body).id
        lo, hi = G20_MIMIC.active_lower[k], G20_MIMIC.active_upper[k]
        points = []
        for value in np.linspace(lo, hi, SAMPLES):
            q = pose.copy()
            q[k] = value
            data.qpos[qadr] = G20_MIMIC.complete(q, clip_mimic=True)
            mujoco.mj_kinematics(model, data)
            points.append(data.xpos[bid] + data.xmat[bid].reshape(3, 3) @ tip)
        points = np.array(points)
        path = float(np.sum(np.linalg.norm(np.diff(points, axis=0), axis=1)))
        rows.append({"joint": joint, "range_rad": [float(lo), float(hi)], "path_mm": 1000 * path,
                     **{f"about_{a}_deg": swept_angle(points, centre, v) for a, v in AXES.items()},
                     **{f"turn_{a}_deg": carried_turn(points, centre, v, obj.size / 2) for a, v in AXES.items()}})  # fmt: skip
    return rows


def format_table(rows: list[dict]) -> str:
    head = (f"{'joint':<18} {'range rad':>12} {'tip about x':>11} {'y':>6} {'z':>6} {'object turn x':>13} {'y':>6} "
            f"{'z':>6} {'tip path mm':>11}")  # fmt: skip
    lines = [head, "-" * len(head)]
    for r in rows:
        lo, hi = r["range_rad"]
        lines.append(f"{r['joint']:<18} {lo:>5.2f}..{hi:<5.2f} {r['about_x_deg']:>11.1f} {r['about_y_deg']:>6.1f} "
                     f"{r['about_z_deg']:>6.1f} {r['turn_x_deg']:>13.1f} {r['turn_y_deg']:>6.1f} {r['turn_z_deg']:>6.1f} "
                     f"{r['path_mm']:>11.1f}")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hand", choices=("left", "right"), default="left")
    parser.add_argument("--shape", choices=SHAPES, default="cube")
    parser.add_argument("--size", type=float, default=0.06)
    parser.add_argument("--length", type=float, default=None, help="m: a cylinder's or capsule's length")
    parser.add_argument("--orientation", choices=ORIENTATIONS, default="upright")
    parser.add_argument("--pose", type=float, nargs=16, help="the reference pose (16 active joints, rad); default: "
                        "the mean grasp of the object's cache")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    obj = ObjectSpec(args.shape, args.size, length=args.length, orientation=args.orientation)
    try:
        validate_object(obj, "--object")
        cache = grasp_cache.load_for(args.hand, obj) if args.pose is None else None
    except ConfigFieldError as e:
        refuse(str(e).replace("--object.", "--"))
    pose = np.array(args.pose) if args.pose is not None else cache.joints.mean(axis=0)
    if cache is not None:
        centre = cache.object_pose[:, :3].mean(axis=0)
    else:
        from dexwheel.tasks.in_hand.objects import DROP_POINT, PALM_NORMAL

        centre = DROP_POINT + PALM_NORMAL * obj.half_height
    rows = reach(args.hand, obj, pose, centre)
    print(f"the {args.hand} hand's reach about axes through {np.round(centre, 4).tolist()} (m), "
          f"the {obj.shape} of {obj.size:g} m:")  # fmt: skip
    print(format_table(rows))
    if args.json:
        args.json.write_text(json.dumps({"centre": centre.tolist(), "pose": pose.tolist(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
