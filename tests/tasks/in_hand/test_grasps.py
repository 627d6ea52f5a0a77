"""The grasp caches: each stored grasp holds, each file is what its command makes, and a cache is checked on read."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.in_hand import grasp_cache, grasps
from dexwheel.tasks.in_hand.objects import ObjectSpec

CACHES = sorted(grasp_cache.GRASP_DIR.glob("*.npz"))


def test_the_caches_cover_both_hands_and_the_benchmark_objects():
    """Every task's object on both hands, and every object of each task's default protocol (protocols.in_hand.held_out),
    made with the tasks' physics."""
    from dexwheel.protocols.in_hand import held_out
    from dexwheel.tasks.in_hand.config import TASK_CFGS
    from dexwheel.tasks.in_hand.physics import InHandPhysicsCfg

    names = {p.stem for p in CACHES}
    for make in TASK_CFGS.values():
        obj = make().object
        assert {grasp_cache.path_for(h, obj).stem for h in ("left", "right")} <= names
        assert {grasp_cache.path_for("left", ObjectSpec(**o)).stem for o in held_out(obj)} <= names
    assert all(grasp_cache.load(p).physics == InHandPhysicsCfg() for p in CACHES)


@pytest.mark.slow
@pytest.mark.parametrize("path", CACHES, ids=lambda p: p.stem)
def test_every_stored_grasp_holds_and_its_file_is_named_after_what_it_was_made_for(path):
    """Started at rest in the grasp with the fingers commanded to it, the object stays within 5 mm and 0.05 rad for a
    second (grasps.holds); every grasp has at least a palm contact and two more (the sampler's rule)."""
    cache = grasp_cache.load(path)
    assert grasp_cache.path_for(cache.hand, cache.object) == path and len(cache) >= 128
    scene = grasps._Scene(cache.hand, cache.object, cache.physics)
    failed = [k for k in range(len(cache)) if not grasps.holds(scene, cache.joints[k], cache.object_pose[k])]
    assert failed == []
    assert np.allclose(np.linalg.norm(cache.object_pose[:, 3:], axis=1), 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("obj", [ObjectSpec(), ObjectSpec("capsule", 0.045, length=0.08, orientation="across")],
                         ids=["cube", "capsule_across"])  # fmt: skip
def test_a_cache_is_what_its_command_makes_from_its_seed(obj):
    """The stored cache's first grasps are the sampler's output for its recorded seed (so the file is the code's, and
    regenerating it on purpose gives it back)."""
    path = grasp_cache.path_for("left", obj)
    stored = grasp_cache.load(path)
    made = grasps.sample("left", stored.object, count=2, seed=stored.seed, physics=stored.physics)
    np.testing.assert_array_equal(made.joints, stored.joints[:2])
    np.testing.assert_array_equal(made.object_pose, stored.object_pose[:2])
    with np.load(path) as z:
        assert json.loads(str(z["meta"]))["command"] == grasp_cache.COMMAND


def test_a_cache_is_checked_on_read(tmp_path):
    cache = grasp_cache.load(grasp_cache.path_for("left", ObjectSpec()))
    with pytest.raises(
        ConfigFieldError, match=r"^grasps: the cache was made for the left hand, this task runs the right"
    ):
        grasp_cache.check(cache, "right", ObjectSpec())
    with pytest.raises(ConfigFieldError, match=r"^grasps: the cache was made for a cube of 0.06 m, this task's object "
                                               r"is a sphere of 0.06 m; python scripts/sample_grasps.py --shape sphere"):  # fmt: skip
        grasp_cache.check(cache, "left", ObjectSpec(shape="sphere"))
    bad = grasp_cache.GraspCache("left", ObjectSpec(), np.zeros((3, 15)), np.zeros((3, 7)))
    path = grasp_cache.save(bad, tmp_path / "bad.npz")
    with pytest.raises(ConfigFieldError, match=r"holds joints \(3, 15\) and object poses \(3, 7\); expected \(K, 16\)"):
        grasp_cache.load(path)


def test_the_script_refuses_an_existing_file_and_a_bad_object(tmp_path):
    import subprocess
    import sys

    script = [sys.executable, str(grasp_cache.GRASP_DIR.parents[3] / "scripts" / "sample_grasps.py")]
    taken = tmp_path / "taken.npz"
    taken.write_bytes(b"mine")
    done = subprocess.run([*script, "--out", str(taken)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip().endswith(f"--out: {taken} exists; choose another --out or pass "
                                                                 "--overwrite")  # fmt: skip
    assert taken.read_bytes() == b"mine"
    done = subprocess.run([*script, "--size", "0.2", "--out", str(tmp_path / "x.npz")], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 2 and "--size: 0.2 m is outside [0.04, 0.08] m" in done.stderr
    assert not (tmp_path / "x.npz").exists()
