"""The step benchmark: one fixed protocol any wheel-leg policy is scored on, on any backend.

Defined once here, backend-neutral (numpy only): the scenes as :class:`~dexwheel.terrain.TerrainDescription`
(every backend builds the same geometry from them, as it builds the rough task's terrain), each trial's
start pose and command (seeded), and the rules that turn a trial's base trajectory into an outcome. The
MuJoCo runner is :mod:`dexwheel.rl.step_benchmark` (``scripts/evaluate.py benchmark=steps``);
docs/how-to/train-on-terrain.md ("Score a policy on steps") has the protocol in words and the table format.

The scenes run along x; the robot drives along the path (``x``), the path is ``path_width`` wide (``y``):

* ``step`` at height ``h``: flat ground at z = 0 for x < 0 and a raised floor at z = h for x >= 0 (one
  vertical edge across the path at x = 0). ``up`` trials start ``start_distance`` before the edge on the low
  side facing +x; ``down`` trials start as far before it on the high side facing -x.
* ``stairs`` at each riser of ``stairs_risers``: a flight of ``stairs_steps`` risers, ``stairs_tread`` m apart
  (riser to riser), between two landings across the whole path: the ground (z = 0) for x < 0, the first riser at
  x = 0, ``stairs_steps - 1`` treads, the last riser at x = ``(stairs_steps - 1) * stairs_tread`` and the top landing
  (z = ``stairs_steps * riser``) past it. Each landing reaches ``max(start_distance, success_distance) + 2.5`` m
  from the flight. ``up`` trials start ``start_distance`` before the first riser on the bottom landing, ``down``
  trials as far before the last riser on the top landing. The default flight is real stairs (building codes: treads
  0.25-0.32 m, risers 0.15-0.18 m): five 0.15 m risers, 0.30 m treads, so the robot (0.77 m over its wheels at
  the stance) stands on two or three steps at once; the terrain's stairs tiles have the same treads
  (:data:`~dexwheel.terrain.config.ROUGH_SUB_TERRAINS`).

A trial's heading is the path direction plus a uniform offset in +-``yaw_range`` rad, its start is offset
sideways uniformly in +-``lateral_range`` m; the command is ``command`` m/s forward and no turning, held for
the whole trial. Trial ``k`` draws from ``numpy.random.default_rng([seed, k])``, so trial ``k`` starts the
same way at every height and direction (paired comparisons), and ``reset_seed + k`` seeds the backend's own
reset (its start-pose noise).

Outcome of a trial, judged every control step (:class:`TrialJudge`): **success** when the base is
``success_distance`` past the last edge in the direction of travel (measured along the path) before any
fall and within the trial's time limit. On a flight that is reaching the far landing (the top one going up, the
bottom one going down): the base ``success_distance`` past the last riser it crosses, so with the default 1 m the
whole robot (its 1 m footprint, :data:`~dexwheel.terrain.config.ROBOT_FOOTPRINT_M`, centred on the base) is on the
landing; ``start_distance`` and ``success_distance`` are at least half that footprint, so a trial starts and ends
with the robot wholly on a landing. **fall** when the backend ended the episode first (the task's
terminations: the base touching the ground, a tilt past its limit, leaving the scene); **timeout** when
the time limit passes first. The time limit is ``time_limit_s`` for the single step's path (``start_distance +
success_distance``) and grows with a flight's longer path (its treads added): every scene asks for the same
average speed (0.25 m/s by default), so a flight's steps count does not decide its outcome by the clock
(:func:`time_limit`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from dexwheel.fields import ConfigFieldError
from dexwheel.terrain.config import MAX_HEIGHT_M, MIN_STEP_WIDTH_M, ROBOT_FOOTPRINT_M
from dexwheel.terrain.description import TerrainDescription

DIRECTIONS = ("up", "down")
#: protocol fields that changed name: refused naming the new one
RENAMED = {"stairs_riser": "stairs_risers"}
OUTCOMES = ("success", "fall", "timeout")
#: The default heights: 0.05 to 0.25 m in 0.025 m increments (9 heights).
DEFAULT_HEIGHTS = tuple(round(0.05 + 0.025 * k, 3) for k in range(9))
#: Ground beyond the start and the finish line (m): room for the robot (1 m footprint) plus the out-of-bounds
#: buffer of the rough task (1 m), so no trial ends at the scene's edge before it is judged.
END_MARGIN_M = 2.5
#: The boxes' solid depth below the lowest surface (m), as the terrain generator's.
BOTTOM_MARGIN_M = 0.5


@dataclass(frozen=True)
class StepBenchmarkCfg:
    """The protocol's numbers (``steps.*`` on ``scripts/evaluate.py``'s command line)."""

    heights: tuple[float, ...] = DEFAULT_HEIGHTS  # m, the single step's heights
    directions: tuple[str, ...] = DIRECTIONS
    trials: int = 20  # per height and direction
    stairs: bool = True  # also a flight of stairs per riser, up and down
    stairs_risers: tuple[float, ...] = (0.15,)  # m, one flight each (real stairs: 0.15-0.18 m)
    stairs_tread: float = 0.3  # m, riser to riser (real stairs: 0.25-0.32 m)
    stairs_steps: int = 5  # risers per flight, between the bottom and the top landing
    start_distance: float = 1.5  # m before the (first) edge, base position
    success_distance: float = 1.0  # m past the (last) edge
    yaw_range: float = 0.1  # rad, +- heading offset
    lateral_range: float = 0.1  # m, +- sideways offset
    command: float = 0.5  # m/s forward
    time_limit_s: float = 10.0  # s for the single step's path; a flight's in proportion to its path (time_limit)
    path_width: float = 6.0  # m, the scene across the path
    seed: int = 0  # the start poses
    reset_seed: int = 20000  # the backend's reset of trial k: reset_seed + k


@dataclass(frozen=True)
class Scene:
    """One benchmark scene: its geometry and where its edges are (x of each riser, ascending)."""

    name: str  # "step" or "stairs"
    height: float  # the step's height, or the stairs' riser
    edges: tuple[float, ...]
    description: TerrainDescription

    @property
    def label(self) -> str:
        return f"{self.name} {self.height:.3f}"


@dataclass(frozen=True)
class TrialSpec:
    """One trial: its scene and direction, start pose (world x, y, yaw), command and the backend's reset seed."""

    scene: Scene
    direction: str
    index: int
    x: float
    y: float
    yaw: float
    command: tuple[float, float]  # forward m/s, yaw rate rad/s
    reset_seed: int
    finish_x: float  # the x the base must pass: success_distance past the last edge in the direction of travel
    time_limit_s: float  # the scene's (time_limit)

    @property
    def sign(self) -> int:
        """+1 when the trial drives toward +x (up), -1 toward -x (down)."""
        return 1 if self.direction == "up" else -1


def _bad(key: str, detail: str) -> ConfigFieldError:
    return ConfigFieldError(key, f"{key}: {detail}")


def _number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def validate(cfg: StepBenchmarkCfg, prefix: str = "steps") -> None:
    """Refuse a protocol that cannot be built or judged, in one line naming the key (``steps.heights``)."""
    heights = cfg.heights
    if not (isinstance(heights, Sequence) and not isinstance(heights, str)) or not all(_number(h) for h in heights):
        raise _bad(f"{prefix}.heights", f"expected a list of heights in m, got {heights!r}")
    if not heights and not cfg.stairs:
        raise _bad(f"{prefix}.heights", "no heights and no stairs: nothing to run")
    risers = cfg.stairs_risers
    if not (isinstance(risers, Sequence) and not isinstance(risers, str)) or not all(_number(h) for h in risers):
        raise _bad(f"{prefix}.stairs_risers", f"expected a list of risers in m, got {risers!r}")
    if cfg.stairs and not risers:
        raise _bad(f"{prefix}.stairs_risers", "stairs = true and no risers: give one or more, or stairs = false")
    for key, values in (("heights", heights), ("stairs_risers", risers if cfg.stairs else ())):
        for h in values:
            if not 0.0 < h <= MAX_HEIGHT_M:
                raise _bad(
                    f"{prefix}.{key}", f"{h!r} m is outside the terrain's range: 0 < height <= {MAX_HEIGHT_M:g} m"
                )
    bad = [d for d in cfg.directions if d not in DIRECTIONS]
    if bad or not cfg.directions:
        raise _bad(f"{prefix}.directions", f"expected a non-empty list of {list(DIRECTIONS)}, got {cfg.directions!r}")
    for name in ("trials", "stairs_steps", "seed", "reset_seed"):
        v = getattr(cfg, name)
        low = 1 if name in ("trials", "stairs_steps") else 0
        if not (isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= low):
            raise _bad(f"{prefix}.{name}", f"expected an integer >= {low}, got {v!r}")
    for name in ("start_distance", "success_distance", "command", "time_limit_s", "path_width"):
        v = getattr(cfg, name)
        if not (_number(v) and v > 0):
            raise _bad(f"{prefix}.{name}", f"expected a number > 0, got {v!r}")
    for name in ("start_distance", "success_distance"):  # the robot wholly on the near / far landing
        v = getattr(cfg, name)
        if v < ROBOT_FOOTPRINT_M / 2:
            raise _bad(f"{prefix}.{name}", f"expected >= {ROBOT_FOOTPRINT_M / 2:g} m (half the robot's "
                                           f"{ROBOT_FOOTPRINT_M:g} m footprint: the whole robot on a landing), "
                                           f"got {v!r}")  # fmt: skip
    for name in ("yaw_range", "lateral_range"):
        v = getattr(cfg, name)
        if not (_number(v) and v >= 0):
            raise _bad(f"{prefix}.{name}", f"expected a number >= 0, got {v!r}")
    if not (_number(cfg.stairs_tread) and cfg.stairs_tread >= MIN_STEP_WIDTH_M):
        raise _bad(f"{prefix}.stairs_tread", f"expected >= {MIN_STEP_WIDTH_M:g} m (the terrain's narrowest tread: two "
                                             f"wheel radii), got {cfg.stairs_tread!r}")  # fmt: skip
    top = max(risers, default=0.0)
    if cfg.stairs and cfg.stairs_steps * top > MAX_HEIGHT_M:
        raise _bad(f"{prefix}.stairs_steps", f"{cfg.stairs_steps} risers of {top:g} m climb past the terrain's "
                                             f"range (<= {MAX_HEIGHT_M:g} m): at most {int(MAX_HEIGHT_M / top)} "
                                             f"steps")  # fmt: skip
    if cfg.lateral_range >= cfg.path_width / 4:
        raise _bad(f"{prefix}.lateral_range", f"expected < path_width / 4 = {cfg.path_width / 4:g} m, "
                                              f"got {cfg.lateral_range!r}")  # fmt: skip


def make_cfg(changes: dict | None = None, prefix: str = "steps") -> StepBenchmarkCfg:
    """The default protocol with ``changes`` (a dict of fields) applied and checked."""
    changes = dict(changes or {})
    names = [f.name for f in dataclasses.fields(StepBenchmarkCfg)]
    for old, new in RENAMED.items():
        if old in changes:
            raise _bad(f"{prefix}.{old}", f"renamed {prefix}.{new} (a list: one flight per riser, m)")
    unknown = [k for k in changes if k not in names]
    if unknown:
        raise _bad(prefix, f"unknown field(s) {unknown}; valid: {names}")
    for key in ("heights", "directions", "stairs_risers"):
        if key in changes and isinstance(changes[key], Sequence) and not isinstance(changes[key], str):
            changes[key] = tuple(changes[key])
    cfg = dataclasses.replace(StepBenchmarkCfg(), **changes)
    validate(cfg, prefix)
    return cfg


# -- scenes ----------------------------------------------------------------------------------------------------
def _scene(name: str, height: float, rects: list[tuple[float, float, float]], edges: tuple[float, ...],
           cfg: StepBenchmarkCfg) -> Scene:  # fmt: skip
    """A scene from floor strips ``(x0, x1, top)`` across the whole path width, each a box down to a common
    bottom; its one origin (where a reset without a start pose stands the robot) is the ``up`` trials' start
    on the ground, ``start_distance`` before the first edge."""
    hy = cfg.path_width / 2
    bottom = min(0.0, *(t for *_, t in rects)) - BOTTOM_MARGIN_M
    boxes = np.array([((x0 + x1) / 2, 0.0, (top + bottom) / 2, (x1 - x0) / 2, hy, (top - bottom) / 2, 0.0)
                      for x0, x1, top in rects], dtype=np.float64)  # fmt: skip
    xmin, xmax = rects[0][0], rects[-1][1]
    desc = TerrainDescription(boxes=boxes, heightfields=(), origins=np.array([[[edges[0] - cfg.start_distance, 0.0, 0.0]]]),
                              tile_types=(name,), difficulty=np.zeros((1, 1)), bounds=(xmin, xmax, -hy, hy),
                              tile_size=(xmax - xmin, 2 * hy))  # fmt: skip
    return Scene(name, float(height), edges, desc)


def step_scene(height: float, cfg: StepBenchmarkCfg = StepBenchmarkCfg()) -> Scene:
    """A single step of ``height`` across the path at x = 0: ground (z = 0) before, z = ``height`` after."""
    reach = cfg.start_distance + END_MARGIN_M
    reach = max(reach, cfg.success_distance + END_MARGIN_M)
    return _scene("step", height, [(-reach, 0.0, 0.0), (0.0, reach, float(height))], (0.0,), cfg)


def stairs_scene(riser: float, cfg: StepBenchmarkCfg = StepBenchmarkCfg()) -> Scene:
    """A flight of ``stairs_steps`` risers of ``riser``, ``stairs_tread`` apart, from the bottom landing (the ground,
    x < 0) up to the top landing (past the last riser), each landing as long as a single step's floor."""
    n, r, w = cfg.stairs_steps, float(riser), cfg.stairs_tread
    reach = max(cfg.start_distance, cfg.success_distance) + END_MARGIN_M
    edges = tuple(k * w for k in range(n))
    rects = [(-reach, 0.0, 0.0)]
    rects += [(edges[k], edges[k + 1], (k + 1) * r) for k in range(n - 1)]
    rects.append((edges[-1], edges[-1] + reach, n * r))
    return _scene("stairs", r, rects, edges, cfg)


def scenes(cfg: StepBenchmarkCfg) -> list[Scene]:
    """The protocol's scenes in table order: each step height ascending, then the stairs by riser ascending."""
    out = [step_scene(h, cfg) for h in sorted(cfg.heights)]
    return out + ([stairs_scene(r, cfg) for r in sorted(cfg.stairs_risers)] if cfg.stairs else [])


def time_limit(scene: Scene, cfg: StepBenchmarkCfg) -> float:
    """A trial's time limit on ``scene`` (s): ``time_limit_s`` per ``start_distance + success_distance`` of its path
    from the start to the finish line (the single step's path; a flight's adds its treads)."""
    base = cfg.start_distance + cfg.success_distance
    return cfg.time_limit_s * (base + scene.edges[-1] - scene.edges[0]) / base


def longest_time_limit(cfg: StepBenchmarkCfg) -> float:
    """The longest trial's time limit of the protocol (s): what a backend's episodes must outlast."""
    return max(time_limit(s, cfg) for s in scenes(cfg))


# -- trials ----------------------------------------------------------------------------------------------------
def trials(scene: Scene, direction: str, cfg: StepBenchmarkCfg) -> Iterator[TrialSpec]:
    """The ``cfg.trials`` trials of ``scene`` driven ``direction``: start poses from trial ``k``'s own generator."""
    sign = 1 if direction == "up" else -1
    first, last = (scene.edges[0], scene.edges[-1]) if sign > 0 else (scene.edges[-1], scene.edges[0])
    heading = 0.0 if sign > 0 else math.pi
    limit = time_limit(scene, cfg)
    for k in range(cfg.trials):
        yaw_u, lat_u = np.random.default_rng([cfg.seed, k]).random(2)
        yaw = heading + (2.0 * yaw_u - 1.0) * cfg.yaw_range
        yaw = math.atan2(math.sin(yaw), math.cos(yaw))
        lateral = (2.0 * lat_u - 1.0) * cfg.lateral_range
        yield TrialSpec(scene, direction, k, first - sign * cfg.start_distance, lateral, yaw,
                        (float(cfg.command), 0.0), cfg.reset_seed + k, last + sign * cfg.success_distance, limit)  # fmt: skip


def all_trials(cfg: StepBenchmarkCfg) -> list[TrialSpec]:
    """Every trial of the protocol, in table order (scene, direction, trial)."""
    return [t for s in scenes(cfg) for d in cfg.directions for t in trials(s, d, cfg)]


class TrialJudge:
    """A trial's outcome from its base positions, one control step at a time: :meth:`step` returns the outcome
    once it is decided (None while running)."""

    def __init__(self, spec: TrialSpec, dt: float) -> None:
        self.spec = spec
        self.dt = float(dt)
        self.max_steps = max(1, round(spec.time_limit_s / self.dt))
        self.steps = 0
        self.outcome: str | None = None

    def step(self, x: float, fell: bool) -> str | None:
        """After control step ``steps + 1``: the base is at world ``x``; ``fell``: the episode ended by a
        termination in this step. Success counts before a fall in the same step (the base got there)."""
        if self.outcome is not None:
            return self.outcome
        self.steps += 1
        if self.spec.sign * (x - self.spec.finish_x) >= 0.0:
            self.outcome = "success"
        elif fell:
            self.outcome = "fall"
        elif self.steps >= self.max_steps:
            self.outcome = "timeout"
        return self.outcome

    @property
    def time_s(self) -> float:
        return self.steps * self.dt


def judge(spec: TrialSpec, dt: float, xs: Sequence[float], fell: Sequence[bool]) -> tuple[str, float]:
    """The outcome and its time (s) of a recorded trajectory: base x and the fall flag per control step (a
    trajectory that ends undecided, e.g. truncated by the backend, is a timeout)."""
    j = TrialJudge(spec, dt)
    for x, f in zip(xs, fell, strict=True):
        if j.step(float(x), bool(f)) is not None:
            return j.outcome, j.time_s  # type: ignore[return-value]
    return "timeout", j.time_s


# -- the table ---------------------------------------------------------------------------------------------------
def summarize(outcomes: dict[tuple[str, float, str], list[tuple[str, float]]]) -> list[dict]:
    """Table rows from outcomes by ``(scene, height, direction)``: trials, successes, falls, timeouts, the success
    rate and the mean time of the successes (s; None without one)."""
    rows = []
    for (scene, height, direction), results in outcomes.items():
        n = len(results)
        count = {o: sum(r == o for r, _ in results) for o in OUTCOMES}
        times = [t for r, t in results if r == "success"]
        rows.append({"scene": scene, "height": height, "direction": direction, "trials": n,
                     "successes": count["success"], "falls": count["fall"], "timeouts": count["timeout"],
                     "success_rate": count["success"] / n if n else 0.0,
                     "mean_success_time_s": round(float(np.mean(times)), 6) if times else None})  # fmt: skip
    return rows


def format_table(rows: Sequence[dict], title: str = "") -> str:
    """``scene  height  dir  trials  success  falls  timeouts  time_s`` as plain text, one row per line."""
    head = (
        f"{'scene':<7} {'height':>7} {'dir':<5} {'trials':>6} {'success':>8} {'falls':>6} {'timeouts':>8} {'time_s':>7}"
    )
    lines = [title] if title else []
    lines += [head, "-" * len(head)]
    for r in rows:
        t = r["mean_success_time_s"]
        lines.append(f"{r['scene']:<7} {r['height']:>7.3f} {r['direction']:<5} {r['trials']:>6d} "
                     f"{r['success_rate']:>8.2f} {r['falls']:>6d} {r['timeouts']:>8d} "
                     f"{'-' if t is None else f'{t:.2f}':>7}")  # fmt: skip
    return "\n".join(lines)
