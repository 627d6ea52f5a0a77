"""Why real stairs are hard for Solenopsis: the quasi-static climb of one wheel pair on a flight, side view.

python scripts/stairs_statics.py                          # docs/solenopsis_stairs_statics.png and the numbers
python scripts/stairs_statics.py --riser 0.15 --tread 0.3 --out /tmp/statics.png

A wheel meets a riser higher than its axle (0.15 m against a 0.0988 m radius) and cannot roll over it: it climbs the
riser's face, driven, on the face's friction, while the other pair's wheels push (or pull) the robot against the
riser on their tread's friction. For a rigid robot (arms held at ``(q_front, q_hind)``) that is a planar statics
problem: the climbing wheel's contact on the face (normal ``N``, friction ``f <= mu N`` up), the other pair's on
its tread (traction ``<= mu`` times its load) and the weight at the centre of mass, in balance. The script gives the
least friction coefficient ``mu`` that balances it (``inf`` where no ``mu`` does: the robot would tip over, or the
pose does not fit the flight: the other wheel on no tread, the body on a nosing) for

* the **front climb**: the front wheels against riser ``k``, the hind wheels on their tread (0-2 risers lower);
* the **hind climb**: the hind wheels against riser ``k``, the front wheels on theirs (1-3 risers higher);

over the arms' angles, and marks the box the rough task's actions reach (the stance +-``knee_scale``) and the
model's friction (1.0, ``dexwheel.robots.wheel_leg.CONTACT``). Every number comes from the robot's description
(``dexwheel/robots/wheel_leg/solenopsis.py``); a pair of wheels is one wheel of twice the mass (the robot is
symmetric about its x-z plane). Quasi-static: momentum, which the climbing gait uses, can do more than this.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from dexwheel.cli import Parser, refuse
from dexwheel.robots.wheel_leg import CONTACT
from dexwheel.robots.wheel_leg.solenopsis import SOLENOPSIS as P
from dexwheel.tasks.velocity.config import ActionCfg

R = P.wheel_radius
ARM = -P.knee_to_axle[2]
HIP_X, HIP_Z = P.hip_xyz[0], P.hip_xyz[2]
MASS = P.base.mass + 4 * P.knee_left.mass + 4 * P.wheel_left.mass
MU = CONTACT.friction[0]
BOX_HALF_X, BOX_BOTTOM = P.base_box_size[0] / 2, P.base_box_center[2] - P.base_box_size[2] / 2
RISERS_BACK = 4  # the riser met (any one inside a long flight: the index only places the scene)


def body_points(qf: float, qh: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Base frame (x, z): the front and the hind wheel centre and the centre of mass, arms at ``(qf, qh)``."""
    kf, kh = np.array([HIP_X, HIP_Z]), np.array([-HIP_X, HIP_Z])
    uf, uh = np.array([math.sin(qf), -math.cos(qf)]), np.array([math.sin(qh), -math.cos(qh)])
    wf, wh = kf + ARM * uf, kh + ARM * uh
    arm_com = -P.knee_left.com[2]
    com = (P.base.mass * np.array([P.base.com[0], P.base.com[2]])
           + 2 * P.knee_left.mass * (kf + arm_com * uf + kh + arm_com * uh) + 2 * P.wheel_left.mass * (wf + wh)) / MASS  # fmt: skip
    return wf, wh, com


def rotate(pitch: float, v) -> np.ndarray:
    """Base to world: ``pitch`` nose-up (rad)."""
    c, s = math.cos(pitch), math.sin(pitch)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def pose(qf: float, qh: float, rise: float):
    """The pitch that puts the front wheel centre ``rise`` above the hind one, the two centres' horizontal
    distance and the centre of mass from the hind wheel centre (world); None if the arms cannot span it."""
    wf, wh, com = body_points(qf, qh)
    d = wf - wh
    length, phi = math.hypot(*d), math.atan2(d[1], d[0])
    if abs(rise) > length:
        return None
    pitch = math.asin(rise / length) - phi
    return pitch, float(rotate(pitch, d)[0]), rotate(pitch, com - wh), wh


def least_mu(dx_face: float, dz_face: float, dx_com: float) -> float:
    """The least friction coefficient for a wheel to climb a riser face: the face contact at ``(dx_face, dz_face)``
    from the other pair's tread contact, the centre of mass ``dx_com`` ahead of it (m). Per unit weight, with ``N``
    the face's normal force: the moment about the tread contact gives the face friction ``f = (dx_com - dz_face N) /
    dx_face``; it needs ``0 <= f <= mu N`` and ``N <= mu (1 - f)`` (the tread's traction pushes the wheel against the
    face) with ``f <= 1``. Bisection on ``mu`` over ``N`` in [0, 3] (inf: none up to 5)."""
    n = np.linspace(0.0, 3.0, 3001)
    f = (dx_com - dz_face * n) / dx_face

    def ok(mu: float) -> bool:
        return bool(np.any((f >= 0.0) & (f <= 1.0) & (f <= mu * n) & (n <= mu * (1.0 - f))))

    if not ok(5.0):
        return math.inf
    lo, hi = 0.0, 5.0
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def stairs_height(x, riser: float, tread: float) -> np.ndarray:
    """A long flight's surface: risers at x = 0, tread, 2 tread, ...; the ground (0) before the first."""
    return np.maximum(np.floor(np.asarray(x) / tread) + 1.0, 0.0) * riser


def body_clears(pitch: float, base: np.ndarray, riser: float, tread: float) -> bool:
    xs = np.linspace(-BOX_HALF_X, BOX_HALF_X, 29)
    bottom = np.array([rotate(pitch, (x, BOX_BOTTOM)) for x in xs]) + base
    return bool(np.all(bottom[:, 1] > stairs_height(bottom[:, 0], riser, tread) + 0.005))


def climb(event: str, qf: float, qh: float, riser: float, tread: float) -> tuple[float, dict | None]:
    """``event`` ``front`` or ``hind`` at arms ``(qf, qh)``: the least ``mu`` over the flight's fitting poses
    (the other pair ``m`` risers apart) and that pose (None: none fits)."""
    best, where = math.inf, None
    xk, k = RISERS_BACK * tread, RISERS_BACK
    for m in (0, 1, 2, 3):
        p = pose(qf, qh, m * riser)
        if p is None:
            continue
        pitch, dx, com, wh = p
        if event == "hind":
            if m == 0:
                continue
            xh, zh = xk - R, k * riser + R  # hind wheel centre against riser k (its tread at height k riser)
            xf, j = xh + dx, k + m - 1  # the front wheel on tread j (height (k + m) riser)
            if not (j * tread - 0.02 <= xf <= (j + 1) * tread - R + 1e-9):
                continue
            base = np.array([xh, zh]) - rotate(pitch, wh)
            mu = least_mu(xk - xf, zh - (k + m) * riser, xh + com[0] - xf)
            pts = {
                "hind": (xh, zh),
                "front": (xf, (k + m) * riser + R),
                "contact": (xk, zh),
                "support": (xf, (k + m) * riser),
            }
        else:
            xf, zf = xk - R, k * riser + R  # front wheel centre against riser k
            xh, zh, j = xf - dx, (k - m) * riser + R, k - m - 1  # the hind wheel on tread j
            if not (j * tread - 0.02 <= xh <= (j + 1) * tread - R + 1e-9):
                continue
            base = np.array([xh, zh]) - rotate(pitch, wh)
            mu = least_mu(xk - xh, zf - (zh - R), com[0])
            pts = {"hind": (xh, zh), "front": (xf, zf), "contact": (xk, zf), "support": (xh, zh - R)}
        if not body_clears(pitch, base, riser, tread) or mu >= best:
            continue
        best, where = mu, {"m": m, "pitch": pitch, "base": base, "com": np.array([xh, zh]) + com, **pts}
    return best, where


def action_box(scale: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """The front and hind knee angles the rough task's actions reach: the stance +- ``knee_scale`` (rad)."""
    f, h = P.stance[0], P.stance[2]
    return (f - scale, f + scale), (h - scale, h + scale)


def draw(ax, riser: float, tread: float, qf: float, qh: float, where: dict, title: str) -> None:
    import matplotlib.patches as patches

    xs = np.linspace(where["hind"][0] - 0.9, where["front"][0] + 0.8, 800)
    ax.fill_between(xs, stairs_height(xs, riser, tread), -0.2, step=None, color="0.75")
    ax.plot(xs, stairs_height(xs, riser, tread), color="0.3", lw=1)
    pitch, base = where["pitch"], where["base"]
    corners = [rotate(pitch, c) + base for c in ((-BOX_HALF_X, BOX_BOTTOM), (BOX_HALF_X, BOX_BOTTOM),
                                                  (BOX_HALF_X, BOX_BOTTOM + P.base_box_size[2]),
                                                  (-BOX_HALF_X, BOX_BOTTOM + P.base_box_size[2]))]  # fmt: skip
    ax.add_patch(patches.Polygon(corners, closed=True, color="tab:blue", alpha=0.35))
    for sx, wheel in ((1, where["front"]), (-1, where["hind"])):
        knee = rotate(pitch, (sx * HIP_X, HIP_Z)) + base
        ax.plot([knee[0], wheel[0]], [knee[1], wheel[1]], color="tab:orange", lw=3)
        ax.add_patch(patches.Circle(wheel, R, fill=False, color="k", lw=1.5))
    ax.plot(*where["com"], "o", color="tab:red")
    ax.plot(
        [where["com"][0]] * 2, [where["com"][1], stairs_height(where["com"][0], riser, tread)], ":", color="tab:red"
    )
    ax.plot(*where["contact"], "x", color="tab:red", ms=9, mew=2)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def simulated_trial(riser: float, tread: float, stairs: bool) -> dict[str, np.ndarray]:
    """The climbing gait (``stairs``: with its stairs mode) up the step benchmark's flight (trial 0, MuJoCo): per
    control step the time, the base pitch (deg, nose-up) and each pair's rim distance to the next riser ahead (m;
    left wheels), and the outcome."""
    import gymnasium as gym

    import dexwheel  # noqa: F401  (registers the ids)
    from dexwheel.protocols import steps
    from dexwheel.rl.step_benchmark import benchmark_env_kwargs
    from dexwheel.tasks.velocity.teacher import ClimbingTeacher

    bench = steps.make_cfg({"heights": [], "stairs_risers": [riser], "stairs_tread": tread, "trials": 1,
                            "directions": ["up"]})  # fmt: skip
    scene = steps.scenes(bench)[0]
    spec = next(steps.trials(scene, "up", bench))
    env = gym.make("Solenopsis-Rough-v0", terrain=scene.description, **benchmark_env_kwargs(bench))
    try:
        env.reset(seed=spec.reset_seed, options={"base_pose": (spec.x, spec.y, spec.yaw), "command": spec.command})
        task, judge = env.unwrapped.task, steps.TrialJudge(spec, float(env.unwrapped.dt))
        teacher = ClimbingTeacher(task, stairs=stairs)
        edges = np.array(scene.edges)
        rows = []
        while True:
            _, _, terminated, truncated, _ = env.step(teacher()[0])
            x = teacher.wheel_xy()[0][0]
            gaps = [float(np.min(np.where(edges > xw, edges - xw, np.inf))) - R for xw in (x[0], x[2])]
            rows.append((judge.steps * judge.dt, math.degrees(math.asin(float(task.world_z_in_base[0, 0]))), *gaps))
            outcome = judge.step(float(task.physics.qpos[0, 0]), bool(terminated))
            if outcome is None and truncated:
                outcome = "timeout"
            if outcome is not None:
                break
    finally:
        env.close()
    t, pitch, front, hind = np.array(rows).T
    return {"t": t, "pitch": pitch, "front": front, "hind": hind, "outcome": outcome}


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--riser", type=float, default=0.15)
    parser.add_argument("--tread", type=float, default=0.30)
    parser.add_argument("--out", type=Path, default=Path("docs/solenopsis_stairs_statics.png"))
    args = parser.parse_args(argv)
    if not 0.0 < args.riser <= 0.3:
        refuse(f"--riser: expected 0 < riser <= 0.3 m, got {args.riser}")
    if not 0.2 <= args.tread <= 1.5:
        refuse(f"--tread: expected 0.2 <= tread <= 1.5 m, got {args.tread}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scale = ActionCfg().knee_scale
    (f0, f1), (h0, h1) = action_box(scale)
    qfs, qhs = np.linspace(-0.6, 2.2, 57), np.linspace(-2.2, 0.6, 57)
    maps = {e: np.array([[climb(e, qf, qh, args.riser, args.tread)[0] for qf in qfs] for qh in qhs])
            for e in ("front", "hind")}  # fmt: skip
    inside = (
        (qfs[None, :] >= f0 - 1e-9)
        & (qfs[None, :] <= f1 + 1e-9)
        & (qhs[:, None] >= h0 - 1e-9)
        & (qhs[:, None] <= h1 + 1e-9)
    )
    stance = (P.stance[0], P.stance[2])
    print(
        f"Solenopsis on {args.riser:g} m risers, {args.tread:g} m treads; friction {MU:g}; the actions' box "
        f"front {f0:.2f}..{f1:.2f}, hind {h0:.2f}..{h1:.2f} rad (stance +- {scale:g})"
    )
    for e, mu in maps.items():
        i = np.unravel_index(np.argmin(mu), mu.shape)
        print(
            f"{e} climb: least mu {mu.min():.2f} (arms {qfs[i[1]]:+.2f}, {qhs[i[0]]:+.2f} rad); in the box "
            f"{mu[inside].min():.2f}; at the stance {climb(e, *stance, args.riser, args.tread)[0]:.2f}"
        )
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    for ax, (e, mu) in zip(axes[0], maps.items(), strict=True):
        shown = np.where(np.isfinite(mu), np.minimum(mu, 2.0), np.nan)
        im = ax.pcolormesh(qfs, qhs, shown, cmap="viridis_r", vmin=0.0, vmax=2.0, shading="nearest")
        ax.contour(qfs, qhs, np.where(np.isfinite(mu), mu, 9.0), levels=[MU], colors="w", linewidths=1.5)
        ax.add_patch(plt.Rectangle((f0, h0), f1 - f0, h1 - h0, fill=False, color="tab:red", lw=2))
        ax.plot(*stance, "+", color="tab:red", ms=10)
        ax.set_xlabel("front knee angle (rad; + swings the wheel forward)")
        ax.set_ylabel("hind knee angle (rad)")
        ax.set_title(f"{e} climb: least friction coefficient\n(white: the model's {MU:g}; red box: the actions' "
                     f"reach; grey: no pose)", fontsize=9)  # fmt: skip
        fig.colorbar(im, ax=ax, shrink=0.85)
    mu, where = climb("hind", *stance, args.riser, args.tread)
    if where is not None:
        draw(axes[1, 0], args.riser, args.tread, *stance, where, f"hind climb at the stance: pitch "
             f"{math.degrees(where['pitch']):.0f} deg, front wheels {where['m']} risers up, least mu {mu:.2f}\n"
             f"(red x: the face contact; dotted: the centre of mass)")  # fmt: skip
    else:
        axes[1, 0].set_title("hind climb at the stance: no pose fits the flight", fontsize=9)
        axes[1, 0].axis("off")
    traces = {m: simulated_trial(args.riser, args.tread, m) for m in (False, True)}
    ax = axes[1, 1]
    for stairs_mode, color in ((False, "k"), (True, "tab:green")):
        tr = traces[stairs_mode]
        ax.plot(tr["t"], tr["pitch"], color=color, label=f"{'with' if stairs_mode else 'without'} the stairs mode: "
                f"{tr['outcome']}")  # fmt: skip
    tr = traces[False]
    for key, color, level in (("front", "tab:blue", -5.0), ("hind", "tab:orange", -10.0)):
        touching = tr[key] < 0.01
        ax.plot(tr["t"][touching], np.full(touching.sum(), level), "|", color=color, ms=8,
                label=f"{key} wheels at a riser (without)")  # fmt: skip
    ax.axhline(math.degrees(1.0), color="tab:red", ls="--", lw=1, label="the tilt limit (1 rad)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("base pitch, nose up (deg)")
    ax.set_title("the climbing gait up the benchmark's flight (trial 0, MuJoCo)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"Solenopsis climbing a flight of {args.riser:g} m risers, {args.tread:g} m treads (quasi-static)")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    for stairs_mode, tr in traces.items():
        both = (tr["front"] < 0.01) & (tr["hind"] < 0.01)
        print(
            f"the gait {'with' if stairs_mode else 'without'} its stairs mode, trial 0 up: {tr['outcome']} at "
            f"{tr['t'][-1]:.2f} s, peak pitch {tr['pitch'].max():.0f} deg; both pairs at a riser in {both.sum()} "
            f"control steps"
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
