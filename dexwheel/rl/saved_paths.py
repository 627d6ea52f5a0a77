"""Import paths that moved, old -> today's: the one table through which a saved run's config still loads.

A run's ``config.yaml`` names functions by import path (each term's ``func``,
``dexwheel.tasks.velocity.rewards:track_lin_vel_x_exp``). When a module or a name moves, its old path goes in
:data:`MOVED` instead of a module kept at the old place; :func:`dexwheel.rl.run_config.load_run_config` rewrites
each such value of a saved config to today's path and names it in a warning. CHANGELOG.md names each move.
"""

from __future__ import annotations

import re
from typing import Any

#: old path -> today's: a module (every ``module:name`` in it moves with it) or one ``module:name``
MOVED: dict[str, str] = {
    # compatibility modules removed (issue 56): their contents live at the paths they re-exported
    "dexwheel.envs.g20_cfg": "dexwheel.tasks.hand_pose.config",
    "dexwheel.envs.g20_command": "dexwheel.tasks.hand.action_path",
    "dexwheel.envs.g20_command:HandCommandPath": "dexwheel.tasks.hand.action_path:HandActionPath",
    "dexwheel.envs.g20_kernels": "dexwheel.tasks.hand_pose.kernels",
    "dexwheel.envs.wheel_leg_cfg": "dexwheel.tasks.velocity.config",
    "dexwheel.envs.wheel_leg_task": "dexwheel.tasks.velocity.task",
    "dexwheel.sim.wheel_leg_physics": "dexwheel.sim.physics",
    "dexwheel.tasks.hand_pose.command": "dexwheel.tasks.hand.action_path",
    "dexwheel.tasks.hand_pose.command:HandCommandPath": "dexwheel.tasks.hand.action_path:HandActionPath",
    "dexwheel.rl.symmetry": "dexwheel.rl.rsl.symmetry",  # rsl_rl's data_augmentation_func, mirrored
    # moved below the layers that use them (issue 56: no import runs back up)
    "dexwheel.envs.gym_api:IntegerBox": "dexwheel.tasks.spaces:IntegerBox",
    "dexwheel.envs.gym_api:reset_options": "dexwheel.tasks.spaces:reset_options",
    "dexwheel.isaaclab.support": "dexwheel.rl.isaaclab_support",
    "dexwheel.rl.policies:run_config": "dexwheel.rl.run_config:run_config",
    # each task's scene in its own scene.py (issue 56)
    "dexwheel.sim.wheel_leg_model": "dexwheel.tasks.velocity.scene",
    "dexwheel.sim.wheel_leg_model:build_wheel_leg_model": "dexwheel.tasks.velocity.scene:build_scene",
    "dexwheel.sim.wheel_leg_model:build_wheel_leg_spec": "dexwheel.tasks.velocity.scene:scene_spec",
    # one task runtime, one registry (issue 69): the hand layer, the protocols' home, the generic terms
    "dexwheel.tasks.hand_pose.action": "dexwheel.tasks.hand.action",
    "dexwheel.tasks.hand_pose.action_path": "dexwheel.tasks.hand.action_path",
    "dexwheel.benchmarks.steps": "dexwheel.protocols.steps",
    "dexwheel.tasks.in_hand.benchmark": "dexwheel.protocols.in_hand",
    **{f"dexwheel.tasks.{task}.rewards:{name}": f"dexwheel.tasks.mdp:{name}"
       for task in ("velocity", "hand_pose", "in_hand") for name in ("action_rate_l2", "joint_torques_l2", "is_terminated")},
    **{f"dexwheel.tasks.{task}.observations:{name}": f"dexwheel.tasks.mdp:{name}"
       for task in ("velocity", "hand_pose", "in_hand") for name in ("last_action", "joint_pos", "joint_vel")},
}  # fmt: skip

#: a ``package.module:name`` text, as a term's ``func`` holds it
_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def today(path: str) -> str:
    """Today's path of ``path`` (``module`` or ``module:name``): its own entry, else its module's, else itself."""
    if path in MOVED:
        return MOVED[path]
    module, sep, name = path.partition(":")
    return MOVED[module] + sep + name if module in MOVED else path


def translate(node: Any, prefix: str = "") -> list[tuple[str, str, str]]:
    """Rewrite in place each ``module:name`` text of ``node`` (a saved config's dicts and lists) whose path moved;
    ``(dotted key, old, new)`` for each."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    out = []
    for key, value in list(items):
        path = f"{prefix}{key}"
        if isinstance(value, str) and _PATH.fullmatch(value) and (new := today(value)) != value:
            node[key] = new
            out.append((path, value, new))
        else:
            out += translate(value, f"{path}.")
    return out
