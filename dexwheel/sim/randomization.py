"""Domain randomisation of a MuJoCo model, per env and per episode (off unless enabled).

The ranges default to the vendor's related M20 task (``docs/spec/solenopsis.md``, reference set-up):
friction 0.35-1.5, base mass -1..+3 kg, link masses and inertias x0.85-1.15, base CoM +-3 cm, PD gains
x0.85-1.15, pushes of 0.5 m/s. Any range set to ``None`` leaves that property nominal. All draws come
from the env's own generator in a fixed order and count (ranges set to ``None`` still draw), so a
vector env's env ``i`` draws exactly what a single env with that seed draws; with randomisation off
nothing is drawn. The velocity task's ``randomize_model`` and ``push`` events
(:mod:`dexwheel.tasks.velocity.events`) draw and apply these; the ranges stay here, one place each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from dexwheel.fields import ConfigFieldError

Range = tuple[float, float]


@dataclass(frozen=True)
class DomainRandCfg:
    """What is randomised; ``enabled=False`` (the default) turns everything off at once."""

    enabled: bool = False
    friction: Range | None = (0.35, 1.5)  # sliding friction of every collision geom, floor included
    base_mass_add: Range | None = (-1.0, 3.0)  # kg added to the base (inertia scaled with it)
    link_mass_scale: Range | None = (0.85, 1.15)  # per knee/wheel body: mass and inertia factor
    base_com_offset: float | None = 0.03  # +- m on each axis of the base CoM
    kp_scale: Range | None = (0.85, 1.15)  # per joint
    kd_scale: Range | None = (0.85, 1.15)  # per joint
    push_interval_s: Range | None = (10.0, 15.0)  # time between pushes
    push_velocity: float = 0.5  # +- m/s added to the base x and y velocity

    def validate(self, where: str = "domain_rand") -> None:
        """Raise :class:`~dexwheel.fields.ConfigFieldError` naming ``<where>.<field>``, its value and what is
        allowed: finite ``(low, high)`` ranges with low <= high; friction, mass, inertia and gain scales and
        push intervals > 0; offsets and push velocity >= 0. (That the base keeps a positive mass is checked
        against the model, :class:`ModelRandomizer`.)"""
        positive = ("friction", "link_mass_scale", "kp_scale", "kd_scale", "push_interval_s")
        for name in (*positive, "base_mass_add"):
            r = getattr(self, name)
            if r is None:
                continue
            key = f"{where}.{name}"
            if not (isinstance(r, (tuple, list)) and len(r) == 2 and all(_finite(x) for x in r) and r[0] <= r[1]):
                raise ConfigFieldError(key, f"{key}: expected a finite (low, high) range with low <= high, got {r!r}")
            if name in positive and not r[0] > 0:
                raise ConfigFieldError(key, f"{key}: the range must lie above 0 (low > 0), got {r!r}")
        for name in ("base_com_offset", "push_velocity"):
            value = getattr(self, name)
            key = f"{where}.{name}"
            if value is not None and not (_finite(value) and value >= 0):
                raise ConfigFieldError(key, f"{key}: must be a finite number >= 0, got {value!r}")


def _finite(x: object) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and np.isfinite(x)


@dataclass
class EpisodeParams:
    """One env's draw for one episode (nominal values when randomisation is off)."""

    friction: float
    base_mass_add: float
    link_mass_scale: np.ndarray  # (n_links,)
    base_com_offset: np.ndarray  # (3,)
    kp_scale: np.ndarray  # (n_joints,)
    kd_scale: np.ndarray  # (n_joints,)


def _lerp(u: np.ndarray | float, r: Range | None, nominal: float) -> np.ndarray | float:
    return nominal if r is None else r[0] + (r[1] - r[0]) * u


class ModelRandomizer:
    """Draws :class:`EpisodeParams` and writes them into one env's model (from saved nominal values)."""

    def __init__(self, cfg: DomainRandCfg, model: mujoco.MjModel, base_body: str, link_bodies: Sequence[str],
                 n_joints: int, nominal_friction: float) -> None:  # fmt: skip
        self.cfg = cfg
        self.base = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, base_body)
        self.links = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in link_bodies])
        self.geoms = np.flatnonzero((model.geom_contype != 0) | (model.geom_conaffinity != 0))
        self.n_joints = n_joints
        self.nominal_friction = nominal_friction
        self._mass = model.body_mass.copy()
        add, mass = cfg.base_mass_add, float(self._mass[self.base])
        if add is not None and not add[0] > -mass:
            raise ConfigFieldError(
                "domain_rand.base_mass_add",
                f"domain_rand.base_mass_add: {tuple(add)!r} would leave the base ({base_body}, {mass:g} kg) without "
                f"mass; the low end must be > {-mass:g}",
            )
        self._inertia = model.body_inertia.copy()
        self._ipos = model.body_ipos.copy()
        self._friction = model.geom_friction.copy()
        n = len(self.links)
        self.n_draws = 5 + n + 2 * n_joints  # friction, mass, 3 com, links, kp, kd
        self.nominal = EpisodeParams(nominal_friction, 0.0, np.ones(n), np.zeros(3), np.ones(n_joints),
                                     np.ones(n_joints))  # fmt: skip

    @property
    def active(self) -> bool:
        return self.cfg.enabled

    def draw(self, rng: np.random.Generator) -> EpisodeParams:
        """A fixed number of uniform draws mapped onto the ranges (nominal for ranges set to None)."""
        c, n, nj = self.cfg, len(self.links), self.n_joints
        u = rng.random(self.n_draws)
        com = 0.0 if c.base_com_offset is None else c.base_com_offset
        return EpisodeParams(
            friction=float(_lerp(u[0], c.friction, self.nominal_friction)),
            base_mass_add=float(_lerp(u[1], c.base_mass_add, 0.0)),
            base_com_offset=(2.0 * u[2:5] - 1.0) * com,
            link_mass_scale=np.asarray(_lerp(u[5 : 5 + n], c.link_mass_scale, 1.0)) * np.ones(n),
            kp_scale=np.asarray(_lerp(u[5 + n : 5 + n + nj], c.kp_scale, 1.0)) * np.ones(nj),
            kd_scale=np.asarray(_lerp(u[5 + n + nj :], c.kd_scale, 1.0)) * np.ones(nj),
        )

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData, p: EpisodeParams) -> None:
        """Write ``p`` into ``model`` (from the nominal values) and refresh its derived constants."""
        model.body_mass[:] = self._mass
        model.body_inertia[:] = self._inertia
        model.body_ipos[:] = self._ipos
        model.geom_friction[:] = self._friction
        model.geom_friction[self.geoms, 0] = p.friction
        b = self.base
        ratio = (self._mass[b] + p.base_mass_add) / self._mass[b]
        model.body_mass[b] = self._mass[b] * ratio
        model.body_inertia[b] = self._inertia[b] * ratio
        model.body_ipos[b] = self._ipos[b] + p.base_com_offset
        model.body_mass[self.links] = self._mass[self.links] * p.link_mass_scale
        model.body_inertia[self.links] = self._inertia[self.links] * p.link_mass_scale[:, None]
        mujoco.mj_setConst(model, data)  # invweights etc. depend on the masses

    def push(self, rng: np.random.Generator) -> np.ndarray:
        """A push's change of the base's x and y velocity, uniform in +-``push_velocity`` m/s (two draws)."""
        return (2.0 * rng.random(2) - 1.0) * self.cfg.push_velocity
