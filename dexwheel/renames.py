"""Config names that changed: the one table through which old Hydra keys, typed on a command line, and old saved
run configs (``config.yaml``) still load, each use named in a warning. CHANGELOG.md names each rename.

One name per task (issue 56): a task's folder, Hydra option, Hydra key and Isaac Lab id use the same word. The
task options ``hand_pose_tracking``, ``velocity_tracking`` and ``rough`` are ``hand_pose``, ``velocity`` and
``velocity_rough``; the task group's env section was the robot family (``task.hand.*``, ``task.wheel_leg.*``) and is
the task's name (``task.hand_pose.*``, ``task.velocity.*``, ``task.velocity_rough.*``).

One config for every hand task (issue 69): the hand keys live in the sections of :mod:`dexwheel.tasks.hand.config`
(``drive.hand.slew_rad_s`` is ``drive.hand.drive.slew_rad_s``, ``action.hand.action`` is
``action.hand.actions.kind``, ``task.hand_pose.out_of_range`` is ``task.hand_pose.actions.out_of_range``:
:data:`HAND_KEYS`). MuJoCo-free (the scripts read it before anything imports MuJoCo).
"""

from __future__ import annotations

import re
from typing import Any

#: task option, old -> today's
TASKS = {"hand_pose_tracking": "hand_pose", "velocity_tracking": "velocity", "rough": "velocity_rough"}
#: the task group's old env section (a robot family) -> the task it means when no task option is typed
FAMILY_SECTIONS = {"hand": "hand_pose", "wheel_leg": "velocity"}

#: The hand tasks' sections (issue 69: one sectioned config for every hand task): a hand key, old -> today's.
HAND_KEYS = {
    "drive.hand.drive": "drive.hand.drive.kind",
    "drive.hand.slew_rad_s": "drive.hand.drive.slew_rad_s",
    "drive.hand.track_test": "drive.hand.drive.track_test",
    "action.hand.action": "action.hand.actions.kind",
    "action.hand.action_delay_steps": "action.hand.actions.delay_steps",
    "collision.hand.collision_projection": "collision.hand.collision.projection",
    **{f"collision.hand.{k}": f"collision.hand.collision.{k}"
       for k in ("penetration_tol", "projection_iters", "projection_group_free", "contact_excludes")},
    "composer.hand.composer_layers": "composer.hand.composer.layers",
    **{f"composer.hand.{k}": f"composer.hand.composer.{k}" for k in ("hold_joints", "hold_pose")},
    "task.hand_pose.out_of_range": "task.hand_pose.actions.out_of_range",
    "task.hand_pose.delta_scale": "task.hand_pose.actions.delta_scale",
}  # fmt: skip

_OVERRIDE = re.compile(r"(?P<prefix>[+~]{0,2})(?P<key>[\w./@-]+)(?P<rest>=.*)?", re.S)


def override_task(lines: list[str]) -> str | None:
    """The task option the overrides select (today's name), if any."""
    for line in lines:
        m = _OVERRIDE.fullmatch(line)
        if m and m["key"] == "task" and m["rest"]:
            value = m["rest"][1:]
            return TASKS.get(value, value)
    return None


def translate_overrides(lines: list[str]) -> tuple[list[str], list[str]]:
    """``lines`` with old task options and keys renamed, and a note per rename."""
    task = override_task(lines)
    out, notes = [], []
    for line in lines:
        m = _OVERRIDE.fullmatch(line)
        new = line
        if m and m["key"] == "task" and m["rest"] and m["rest"][1:] in TASKS:
            new = f"{m['prefix']}task={TASKS[m['rest'][1:]]}"
        elif m:
            parts = m["key"].split(".")
            if len(parts) > 2 and parts[0] == "task" and parts[1] in FAMILY_SECTIONS:
                key = ".".join(["task", task or FAMILY_SECTIONS[parts[1]], *parts[2:]])
                new = f"{m['prefix']}{key}{m['rest'] or ''}"
        m = _OVERRIDE.fullmatch(new)
        if m and m["key"] in HAND_KEYS and not (m["rest"] or "").startswith("={"):  # (a dict: today's section)
            new = f"{m['prefix']}{HAND_KEYS[m['key']]}{m['rest'] or ''}"
        if new != line:
            notes.append(f"{line} is now {new} (renamed: one name per task, one config per hand task; CHANGELOG.md)")
        out.append(new)
    return out, notes


def translate_saved(saved: dict[str, Any]) -> list[str]:
    """Rename, in place, a saved run config's old task option and task section; a note per rename."""
    task = saved.get("task")
    if not isinstance(task, dict):
        return []
    notes = []
    old = task.get("name")
    if old in TASKS:
        task["name"] = TASKS[old]
        notes.append(f"task.name={old} is now {task['name']}")
    for family in FAMILY_SECTIONS:
        if family in task and task.get("name") not in FAMILY_SECTIONS:
            task[task["name"]] = task.pop(family)
            task.setdefault("family", family)
            notes.append(f"task.{family}.* is now task.{task['name']}.*")
    return notes + _move_hand_keys(saved)


def _move_hand_keys(saved: dict[str, Any]) -> list[str]:
    """Move, in place, a saved config's old hand keys (:data:`HAND_KEYS`) to their sections; a note per key."""
    found = {}
    for old in HAND_KEYS:
        *parents, last = old.split(".")
        node: Any = saved
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and last in node and not isinstance(node[last], dict):
            found[old] = node.pop(last)
    for old, value in found.items():  # every old key out first: drive.hand.drive (a string) becomes a section
        *parents, last = HAND_KEYS[old].split(".")
        node = saved
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return [f"{old} is now {HAND_KEYS[old]}" for old in found]
