"""Sample and verify the in-hand tasks' grasp cache for one hand and object (dexwheel/tasks/in_hand/grasps.py).

python scripts/sample_grasps.py                                   # the left hand, the 6 cm cube: 256 grasps
python scripts/sample_grasps.py --shape cylinder --size 0.05 --count 128
python scripts/sample_grasps.py --shape cylinder --size 0.045 --length 0.08 --orientation across   # the rolling task
python scripts/sample_grasps.py --hand right --out /tmp/right_cube.npz

Each grasp closes the hand on the object dropped onto the palm and keeps the settled state that has at least two
fingers on the object and holds it for a second at rest. An existing file is refused unless --overwrite.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from dexwheel.cli import Parser, refuse
from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.in_hand import grasp_cache, grasps
from dexwheel.tasks.in_hand.objects import ORIENTATIONS, SHAPES, ObjectSpec, validate_object
from dexwheel.tasks.in_hand.physics import (
    ARMATURE,
    CONTACTS,
    PALM_FRICTION,
    TIMESTEP,
    InHandPhysicsCfg,
    validate_physics,
)


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hand", choices=("left", "right"), default="left")
    parser.add_argument("--shape", choices=SHAPES, default="cube")
    parser.add_argument("--size", type=float, default=0.06, help="m: a cube's edge, a cylinder's or sphere's diameter")
    parser.add_argument("--mass", type=float, default=0.1, help="kg")
    parser.add_argument("--friction", type=float, default=1.0)
    parser.add_argument("--length", type=float, default=None, help="m: a cylinder's length (default: its diameter)")
    parser.add_argument("--orientation", choices=ORIENTATIONS, default="upright", help="how it rests on the palm")
    parser.add_argument("--timestep", type=float, default=TIMESTEP, help="s: the physics step (physics.timestep)")
    parser.add_argument("--armature", type=float, default=ARMATURE, help="kg m^2: the joints' (physics.armature)")
    parser.add_argument("--contact", choices=CONTACTS, default="pads", help="the contact model (physics.contact)")
    parser.add_argument("--palm-friction", type=float, default=PALM_FRICTION, help="physics.palm_friction")
    parser.add_argument("--count", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        help="default: dexwheel/tasks/in_hand/grasps/<hand>_<shape>_<size mm>[x<length mm>][_across].npz",
    )
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    obj = ObjectSpec(args.shape, args.size, args.mass, args.friction, args.length, args.orientation)
    physics = InHandPhysicsCfg(args.timestep, args.armature, args.contact, args.palm_friction)
    try:
        validate_object(obj, "--object")
        validate_physics(physics, where="--physics")
    except ConfigFieldError as e:
        refuse(str(e).replace("--object.", "--").replace("--physics.", "--").replace("palm_friction", "palm-friction"))
    if args.count < 1:
        refuse(f"--count: expected an integer >= 1, got {args.count}")
    out = args.out or grasp_cache.path_for(args.hand, obj)
    if out.exists() and not args.overwrite:
        refuse(f"--out: {out} exists; choose another --out or pass --overwrite")
    start = time.monotonic()

    def progress(kept: int, tried: int) -> None:
        if kept % 16 == 0 or kept == args.count:
            print(f"grasps {kept}/{args.count} kept of {tried} tried ({time.monotonic() - start:.0f} s)", flush=True)

    cache = grasps.sample(args.hand, obj, args.count, args.seed, progress=progress, physics=physics)
    if len(cache) < args.count:
        print(f"warning: {len(cache)} of {args.count} grasps after {cache.tried} tries", file=sys.stderr)
    print(f"wrote {grasp_cache.save(cache, out)}: {len(cache)} grasps of {cache.tried} tries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
