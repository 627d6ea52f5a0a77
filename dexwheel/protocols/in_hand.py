"""The in-hand benchmark: one fixed protocol any G20 object policy is scored on (``scripts/evaluate.py
benchmark=rotation`` on ``task=in_hand_rotate``, ``benchmark=reorient`` on ``task=in_hand_reorient``).

Each object of ``objects`` (default :func:`held_out`: the task's training object, held-out sizes +-1 cm, masses 50 and
200 g and another shape; a shape and size needs a grasp cache, ``python scripts/sample_grasps.py``) gets ``trials`` trials of ``seconds`` each: the policy's own env with that
object, reset with seed ``reset_seed + k`` for trial ``k`` (a grasp of the object's cache), the policy stepped until
the object drops or the time is up. Per trial: the object's total turn about the axis (rad), its mean angular velocity
over the trial's whole time (the turn divided by ``seconds``: a drop counts the time it no longer turns), a drop
(the episode ended by a termination), the goals reached (reorientation). Per object, the table's row: the mean and
spread over its trials.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dexwheel.fields import ConfigFieldError
from dexwheel.tasks.in_hand import grasp_cache
from dexwheel.tasks.in_hand.objects import SIZE_RANGE, ObjectSpec, validate_object

KINDS = ("rotation", "reorient")
#: Held-out masses (kg) and the shape each training shape is scored against besides itself.
HELD_OUT_MASSES = (0.05, 0.2)
OTHER_SHAPE = {"cube": "cylinder", "cylinder": "sphere", "sphere": "cube", "capsule": "sphere"}


def held_out(training: ObjectSpec) -> tuple[dict[str, Any], ...]:
    """The protocol's objects for a task trained on ``training``: it first, then held-out sizes (+-1 cm, within what
    the hand holds; their own grasp caches), masses (:data:`HELD_OUT_MASSES`, its cache) and another shape of its size
    (:data:`OTHER_SHAPE`, resting as the training object does: a sphere across is laid in the hooked fingers)."""
    base = {k: v for k, v in dataclasses.asdict(training).items() if k != "friction"}
    lo, hi = SIZE_RANGE
    sizes = [round(min(max(training.size + d, lo), hi), 3) for d in (-0.01, 0.01)]
    other = {"shape": OTHER_SHAPE[training.shape], "size": training.size, "mass": training.mass}
    if training.orientation == "across":  # laid in the hooked fingers as the training object is
        other["orientation"] = "across"
    return (base, *({**base, "size": s} for s in sizes if s != training.size),
            *({**base, "mass": m} for m in HELD_OUT_MASSES if m != training.mass), other)  # fmt: skip


#: The 6 cm cube's protocol (the palm-normal and reorientation tasks' object).
DEFAULT_OBJECTS = held_out(ObjectSpec())


@dataclass(frozen=True)
class InHandBenchmarkCfg:
    """The protocol (see the module docstring); ``hand`` is the policy's."""

    objects: tuple[dict[str, Any], ...] = DEFAULT_OBJECTS  # make_cfg's default: held_out(the task's object)
    trials: int = 50
    seconds: float = 20.0
    reset_seed: int = 20000
    hand: str = "left"
    specs: tuple[ObjectSpec, ...] = field(default=(), repr=False)  # the objects as specs, filled by make_cfg


def _bad(key: str, detail: str) -> ConfigFieldError:
    return ConfigFieldError(key, f"{key}: {detail}")


def make_cfg(
    changes: dict | None = None, prefix: str = "in_hand", training: ObjectSpec | None = None
) -> InHandBenchmarkCfg:
    """The default protocol with ``changes`` applied, checked: one line naming the key for a bad value, an object
    the hand cannot hold, or one without a grasp cache. ``training``: the task's object (the default ``objects`` are
    :func:`held_out` of it; None: the 6 cm cube)."""
    changes = dict(changes or {})
    if changes.get("objects") is None:
        changes["objects"] = held_out(training or ObjectSpec())
    names = [f.name for f in dataclasses.fields(InHandBenchmarkCfg) if f.name != "specs"]
    unknown = [k for k in changes if k not in names]
    if unknown:
        raise _bad(prefix, f"unknown field(s) {unknown}; valid: {names}")
    cfg = dataclasses.replace(InHandBenchmarkCfg(), **changes)
    t = cfg.trials
    if not isinstance(t, numbers.Integral) or isinstance(t, bool) or t < 1:
        raise _bad(f"{prefix}.trials", f"expected an integer >= 1, got {t!r}")
    s = cfg.seconds
    if not (isinstance(s, numbers.Real) and not isinstance(s, bool) and math.isfinite(s) and s > 0):
        raise _bad(f"{prefix}.seconds", f"expected a number of seconds > 0, got {s!r}")
    objects = cfg.objects
    if isinstance(objects, (str, dict)) or not isinstance(objects, Sequence) or not objects:
        raise _bad(f"{prefix}.objects", f"expected a list of objects ({{shape, size, mass}}), got {objects!r}")
    specs = []
    for k, o in enumerate(objects):
        where = f"{prefix}.objects[{k}]"
        if not isinstance(o, dict):
            raise _bad(where, f"expected {{shape, size, mass}}, got {o!r}")
        try:
            spec = ObjectSpec(**o)
        except TypeError:
            raise _bad(
                where, f"{o!r}: an object has the keys {[f.name for f in dataclasses.fields(ObjectSpec)]}"
            ) from None
        validate_object(spec, where)
        if not grasp_cache.path_for(cfg.hand, spec).exists():
            made = sorted(p.stem for p in grasp_cache.GRASP_DIR.glob(f"{cfg.hand}_*.npz"))
            raise _bad(where, f"no grasp cache for the {cfg.hand} hand and {grasp_cache.describe(spec)}; caches: "
                              f"{made}; make one with {grasp_cache.COMMAND} --hand {cfg.hand} "
                              f"{grasp_cache.options(spec)}")  # fmt: skip
        specs.append(spec)
    return dataclasses.replace(cfg, objects=tuple(dict(o) for o in objects), specs=tuple(specs))


#: The event terms that change the object: a trial scores the protocol's object, so they are left out of its env.
OBJECT_EVENTS = (
    "dexwheel.tasks.in_hand.events:randomize_object_size",
    "dexwheel.tasks.in_hand.events:randomize_object_mass",
)


def trial_env_kwargs(spec: ObjectSpec, seconds: float, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """What a trial's env takes on top of the policy's env keywords ``env_kwargs``: the object (its own grasp
    cache), the trial's length, and the events less :data:`OBJECT_EVENTS` (both backends)."""
    out: dict[str, Any] = {"object": dataclasses.asdict(spec), "grasps": None, "episode_length_s": seconds}
    events = env_kwargs.get("events")
    if isinstance(events, dict):
        out["events"] = {
            k: e for k, e in events.items() if not (isinstance(e, dict) and e.get("func") in OBJECT_EVENTS)
        }
    return out


def label(spec: ObjectSpec) -> str:
    """``cube 60 mm 100 g``, ``cylinder 45x80 mm 100 g``."""
    size = f"{spec.size * 1000:.0f}" + (f"x{spec.length * 1000:.0f}" if spec.length is not None else "")
    return f"{spec.shape} {size} mm {spec.mass * 1000:.0f} g"


#: Runs ``trials`` episodes of one object and returns each episode's metrics (:class:`~dexwheel.rl.metrics.
#: InHandMetrics`); ``video``: the MP4 the first episode goes to (None: none).
TrialRunner = Callable[[ObjectSpec, Path | None], list[dict[str, float]]]


def run(cfg: InHandBenchmarkCfg, run_trials: TrialRunner, video: Path | None = None) -> dict[str, Any]:
    """Every object's trials (the first object's first trial rendered to ``video``); the table's rows."""
    rows = []
    for k, spec in enumerate(cfg.specs):
        episodes = run_trials(spec, video if k == 0 else None)
        rows.append(row(spec, episodes, cfg.seconds))
    return {"rows": rows}


def row(spec: ObjectSpec, episodes: list[dict[str, float]], seconds: float) -> dict[str, Any]:
    """One object's row: the mean and the spread (standard deviation) over its trials."""
    angle = np.array([e["rotation_angle"] for e in episodes])
    rate = angle / seconds
    return {"object": label(spec), **dataclasses.asdict(spec), "trials": len(episodes),
            "rate_mean": float(rate.mean()), "rate_std": float(rate.std()), "rotation_mean": float(angle.mean()),
            "drop_rate": float(np.mean([e["drop"] for e in episodes])),
            "successes_mean": float(np.mean([e["successes"] for e in episodes]))}  # fmt: skip


def format_table(rows: Sequence[dict], title: str = "") -> str:
    """``object  trials  rad/s  +-  rotation_rad  drops  successes`` as plain text, one row per object."""
    head = f"{'object':<22} {'trials':>6} {'rad/s':>7} {'+-':>6} {'turn_rad':>9} {'drops':>6} {'successes':>9}"
    lines = [title] if title else []
    lines += [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['object']:<22} {r['trials']:>6d} {r['rate_mean']:>7.3f} {r['rate_std']:>6.3f} "
                     f"{r['rotation_mean']:>9.2f} {r['drop_rate']:>6.2f} {r['successes_mean']:>9.2f}")  # fmt: skip
    return "\n".join(lines)
