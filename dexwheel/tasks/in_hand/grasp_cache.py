"""The grasp cache's files, without MuJoCo (both backends' tasks read them): a grasp is the G20's 16 active joint
positions and the object's pose (position, quaternion w x y z) at rest in the hand, sampled and verified once by
:mod:`dexwheel.tasks.in_hand.grasps` (``python scripts/sample_grasps.py``).

``grasps/<hand>_<shape>_<size mm>.npz`` holds a cache with what it was made for (hand, object shape, size, mass,
friction, the physics: :class:`~dexwheel.tasks.in_hand.physics.InHandPhysicsCfg`), the sampling seed and count, and
the command that made it; the tasks refuse a cache made for another hand or object, with another contact model or at a
finer step than theirs (:func:`fits`), or an empty one, naming the key. A file that records no physics was made with the spec's (:data:`~dexwheel.tasks.in_hand.physics.LEGACY`).
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import numpy as np

from dexwheel.atomic import atomic_open
from dexwheel.fields import ConfigFieldError
from dexwheel.robots.g20 import ACTIVE_JOINTS
from dexwheel.tasks.in_hand.objects import ObjectSpec
from dexwheel.tasks.in_hand.physics import LEGACY, InHandPhysicsCfg

GRASP_DIR = Path(__file__).with_name("grasps")
COMMAND = "python scripts/sample_grasps.py"


@dataclasses.dataclass(frozen=True)
class GraspCache:
    """Grasps for one hand and object: ``joints`` ``(K, 16)`` active joint positions, ``object_pose`` ``(K, 7)``,
    made with ``physics``."""

    hand: str
    object: ObjectSpec
    joints: np.ndarray
    object_pose: np.ndarray
    seed: int = 0
    tried: int = 0
    physics: InHandPhysicsCfg = dataclasses.field(default_factory=InHandPhysicsCfg)

    def __len__(self) -> int:
        return int(self.joints.shape[0])


def path_for(hand: str, obj: ObjectSpec) -> Path:
    """``<hand>_<shape>_<size mm>[x<length mm>][_across].npz``."""
    length = f"x{round(obj.length * 1000):d}mm" if obj.length is not None else ""
    lying = "_across" if obj.orientation == "across" else ""
    return GRASP_DIR / f"{hand}_{obj.shape}_{round(obj.size * 1000):d}mm{length}{lying}.npz"


def options(obj: ObjectSpec) -> str:
    """The sampler's options that make a cache for ``obj``."""
    out = f"--shape {obj.shape} --size {obj.size:g}"
    if obj.length is not None:
        out += f" --length {obj.length:g}"
    return out + (f" --orientation {obj.orientation}" if obj.orientation != "upright" else "")


def save(cache: GraspCache, path: Path) -> Path:
    """Write ``cache`` (compressed npz, atomically) with what it was made for and the command that made it."""
    meta = {"hand": cache.hand, "object": dataclasses.asdict(cache.object), "seed": cache.seed, "tried": cache.tried,
            "physics": cache.physics.as_dict(), "command": COMMAND}  # fmt: skip
    buf = io.BytesIO()
    np.savez_compressed(buf, meta=np.array(json.dumps(meta, sort_keys=True)), joints=cache.joints,
                        object_pose=cache.object_pose)  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as f:
        f.write(buf.getvalue())
    return path


def load(path: Path, where: str = "grasps") -> GraspCache:
    """A cache, checked on read (its arrays' shapes, finite values); one error naming ``where`` otherwise."""
    try:
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
            joints, pose = z["joints"], z["object_pose"]
    except (OSError, KeyError, ValueError) as e:
        raise ConfigFieldError(where, f"{where}: {path} is no grasp cache ({type(e).__name__}: {e}); make one with "
                                      f"{COMMAND}") from None  # fmt: skip
    na = len(ACTIVE_JOINTS)
    if joints.ndim != 2 or joints.shape[1] != na or pose.shape != (joints.shape[0], 7) or not np.isfinite(joints).all():
        raise ConfigFieldError(where, f"{where}: {path} holds joints {joints.shape} and object poses {pose.shape}; "
                                      f"expected (K, {na}) and (K, 7), finite")  # fmt: skip
    physics = InHandPhysicsCfg(**meta["physics"]) if "physics" in meta else LEGACY
    return GraspCache(meta["hand"], ObjectSpec(**meta["object"]), joints, pose, int(meta["seed"]), int(meta["tried"]),
                      physics)  # fmt: skip


def describe(obj: ObjectSpec) -> str:
    """``a cube of 0.06 m``, ``a cylinder of 0.045 m, 0.08 m long, across``."""
    out = f"a {obj.shape} of {obj.size:g} m"
    if obj.length is not None:
        out += f", {obj.length:g} m long"
    return out + (f", {obj.orientation}" if obj.orientation != "upright" else "")


def check(cache: GraspCache, hand: str, obj: ObjectSpec, where: str = "grasps",
          physics: InHandPhysicsCfg | None = None) -> None:  # fmt: skip
    """Refuse, naming ``where``, a cache made for another hand or object, with other ``physics`` (None: any), or an
    empty one."""
    if not len(cache):
        raise ConfigFieldError(where, f"{where}: the cache holds no grasp; make one with {COMMAND}")
    if cache.hand != hand:
        raise ConfigFieldError(where, f"{where}: the cache was made for the {cache.hand} hand, this task runs the "
                                      f"{hand} one; {COMMAND} --hand {hand}")  # fmt: skip
    c = cache.object
    if (c.shape, c.orientation, c.length) != (obj.shape, obj.orientation, obj.length) or abs(c.size - obj.size) > 1e-9:
        raise ConfigFieldError(where, f"{where}: the cache was made for {describe(c)}, this task's object is "
                                      f"{describe(obj)}; {COMMAND} {options(obj)}")  # fmt: skip
    if physics is not None and not fits(cache.physics, physics):
        raise ConfigFieldError(where, f"{where}: the cache was made with physics {cache.physics.as_dict()}, this task "
                               f"runs {physics.as_dict()}; {COMMAND} --hand {hand} {options(obj)} "
                               f"{physics.options()}")  # fmt: skip


def fits(made: InHandPhysicsCfg, physics: InHandPhysicsCfg) -> bool:
    """Whether grasps made with ``made`` start a task that runs ``physics``: the same contact model and palm friction,
    and a step no coarser (a grasp that holds at a step holds at a finer one: none of 32 cube and 32 capsule grasps
    made at 5 ms failed at 2 ms; the armature goes with the step)."""
    return (made.contact, made.palm_friction) == (physics.contact, physics.palm_friction) and (
        physics.timestep <= made.timestep + 1e-12
    )


def load_for(hand: str, obj: ObjectSpec, path: str | Path | None = None,
             physics: InHandPhysicsCfg | None = None) -> GraspCache:  # fmt: skip
    """The cache of a task's config (``path``: its ``grasps``; None: the one made for ``hand`` and ``obj``), checked
    (``physics``: the task's, None: any)."""
    path = Path(path) if path is not None else path_for(hand, obj)
    if not path.exists():
        raise ConfigFieldError("grasps", f"grasps: no cache at {path} for the {hand} hand and {describe(obj)}; make "
                                         f"one with {COMMAND} --hand {hand} {options(obj)}")  # fmt: skip
    cache = load(path)
    check(cache, hand, obj, physics=physics)
    return cache
