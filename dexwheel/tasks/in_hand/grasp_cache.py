"""The grasp cache's files, without MuJoCo (both backends' tasks read them): a grasp is the G20's 16 active joint
positions and the object's pose (position, quaternion w x y z) at rest in the hand, sampled and verified once by
:mod:`dexwheel.tasks.in_hand.grasps` (``python scripts/sample_grasps.py``).

``grasps/<hand>_<shape>_<size mm>.npz`` holds a cache with what it was made for (hand, object shape, size, mass,
friction), the sampling seed and count, and the command that made it; the tasks refuse a cache made for another hand
or object, or an empty one, naming the key.
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

GRASP_DIR = Path(__file__).with_name("grasps")
COMMAND = "python scripts/sample_grasps.py"


@dataclasses.dataclass(frozen=True)
class GraspCache:
    """Grasps for one hand and object: ``joints`` ``(K, 16)`` active joint positions, ``object_pose`` ``(K, 7)``."""

    hand: str
    object: ObjectSpec
    joints: np.ndarray
    object_pose: np.ndarray
    seed: int = 0
    tried: int = 0

    def __len__(self) -> int:
        return int(self.joints.shape[0])


def path_for(hand: str, obj: ObjectSpec) -> Path:
    return GRASP_DIR / f"{hand}_{obj.shape}_{round(obj.size * 1000):d}mm.npz"


def save(cache: GraspCache, path: Path) -> Path:
    """Write ``cache`` (compressed npz, atomically) with what it was made for and the command that made it."""
    meta = {"hand": cache.hand, "object": dataclasses.asdict(cache.object), "seed": cache.seed, "tried": cache.tried,
            "command": COMMAND}  # fmt: skip
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
    return GraspCache(meta["hand"], ObjectSpec(**meta["object"]), joints, pose, int(meta["seed"]), int(meta["tried"]))


def check(cache: GraspCache, hand: str, obj: ObjectSpec, where: str = "grasps") -> None:
    """Refuse, naming ``where``, a cache made for another hand or object, or an empty one."""
    if not len(cache):
        raise ConfigFieldError(where, f"{where}: the cache holds no grasp; make one with {COMMAND}")
    if cache.hand != hand:
        raise ConfigFieldError(where, f"{where}: the cache was made for the {cache.hand} hand, this task runs the "
                                      f"{hand} one; {COMMAND} --hand {hand}")  # fmt: skip
    if cache.object.shape != obj.shape or abs(cache.object.size - obj.size) > 1e-9:
        raise ConfigFieldError(where, f"{where}: the cache was made for a {cache.object.shape} of {cache.object.size:g} "
                                      f"m, this task's object is a {obj.shape} of {obj.size:g} m; {COMMAND} "
                                      f"--shape {obj.shape} --size {obj.size:g}")  # fmt: skip


def load_for(hand: str, obj: ObjectSpec, path: str | Path | None = None) -> GraspCache:
    """The cache of a task's config (``path``: its ``grasps``; None: the one made for ``hand`` and ``obj``), checked."""
    path = Path(path) if path is not None else path_for(hand, obj)
    if not path.exists():
        raise ConfigFieldError("grasps", f"grasps: no cache at {path} for the {hand} hand and a {obj.shape} of "
                                         f"{obj.size:g} m; make one with {COMMAND} --hand {hand} --shape {obj.shape} "
                                         f"--size {obj.size:g}")  # fmt: skip
    cache = load(path)
    check(cache, hand, obj)
    return cache
