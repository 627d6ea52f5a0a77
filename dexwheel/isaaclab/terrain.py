"""The terrain on Isaac Lab, built from the same :class:`~dexwheel.terrain.TerrainDescription` as the MuJoCo scene.

No second terrain: :func:`dexwheel.terrain.generate` makes the description from the task's ``TerrainCfg`` (or the
task holds a fixed :class:`~dexwheel.terrain.TerrainDescription`, as the MuJoCo task takes one: the step benchmark's
scenes, :mod:`dexwheel.protocols.steps`) and this module puts exactly its boxes and height fields into the stage, so Newton hands MuJoCo-Warp the same
geoms :func:`dexwheel.terrain.mujoco.add_terrain` gives the MuJoCo model:

* every box is a ``UsdGeom.Cube`` collider (static: no rigid body), which Newton imports as a box shape
  and exports to MuJoCo-Warp as a box geom: vertical edges stay vertical, and box contacts are MuJoCo's;
* every height field is a ``UsdGeom.Mesh`` of its samples (vertex ``row * ncol + col``, two triangles per cell
  split along the ``(col, row)``-``(col + 1, row + 1)`` diagonal: MuJoCo's split, :mod:`dexwheel.terrain.mesh`)
  tagged ``dexwheel:heightfield:shape``; :class:`NewtonTerrainMJWarpManager` turns each tagged mesh back into its
  sample grid (no rasterisation) and adds it as a Newton heightfield, which MuJoCo-Warp collides as an
  ``hfield`` with the MuJoCo scene's solid base (:data:`~dexwheel.terrain.description.HFIELD_BASE_M`).

Why not one triangle mesh (Isaac Lab's ``terrain_type="generator"``): MuJoCo-Warp, like MuJoCo, collides a
mesh geom as its convex hull, so with MuJoCo's contacts (the setting the flat task matches MuJoCo with) a
terrain mesh would be a solid hull; Newton's own collision pipeline handles triangle meshes, but its contacts
are not MuJoCo's. Isaac Lab's heightfield conversion (``newton:heightfield:resolution``) rasterises a mesh,
which turns every box edge into a one-sample ramp and leaves a 0.1 mm base under the surface.

:class:`DescriptionTerrainImporter` is the scene's terrain (Isaac Lab's ``TerrainImporter``, so
``env.scene.terrain``, its env origins per tile and level and ``update_env_origins`` work as Isaac Lab's): it
generates the description, spawns it and holds it (:attr:`~DescriptionTerrainImporter.description`) and its
height raster (:attr:`~DescriptionTerrainImporter.raster`, the height scan's source, as on MuJoCo).
"""

from __future__ import annotations

import functools
from dataclasses import MISSING

import numpy as np
import warp as wp
from isaaclab.terrains import TerrainImporter, TerrainImporterCfg
from isaaclab.utils import configclass
from isaaclab_newton.physics import NewtonMJWarpManager
from newton import Heightfield
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics, UsdShade

from dexwheel.terrain import HeightRaster, TerrainCfg, TerrainDescription, generate
from dexwheel.terrain.description import HFIELD_BASE_M
from dexwheel.terrain.mesh import heightfield_mesh

#: The attribute that marks a height-field mesh: its sample grid's (nrow, ncol).
HFIELD_SHAPE_ATTR = "dexwheel:heightfield:shape"
#: The solid base under a height field's lowest sample (m), as authored on the mesh.
HFIELD_BASE_ATTR = "dexwheel:heightfield:base"
#: The terrain's friction (static = dynamic), read back by :class:`NewtonTerrainMJWarpManager` for height fields.
FRICTION_ATTR = "dexwheel:friction"


def _material(stage: Usd.Stage, path: str, friction: float) -> UsdShade.Material:
    material = UsdShade.Material.Define(stage, path)
    api = UsdPhysics.MaterialAPI.Apply(material.GetPrim())
    api.CreateStaticFrictionAttr(float(friction))
    api.CreateDynamicFrictionAttr(float(friction))
    api.CreateRestitutionAttr(0.0)
    return material


def spawn_terrain(stage: Usd.Stage, prim_path: str, desc: TerrainDescription, friction: float = 1.0) -> None:
    """Author ``desc`` under ``prim_path``: a static ``Cube`` collider per box, a tagged ``Mesh`` per height
    field (:class:`NewtonTerrainMJWarpManager` builds those), all with one physics material of ``friction``."""
    UsdGeom.Xform.Define(stage, prim_path)
    material = _material(stage, f"{prim_path}/physicsMaterial", friction)
    tops = desc.boxes[:, 2] + desc.boxes[:, 5] if len(desc.boxes) else np.zeros(1)
    lo, span = float(tops.min()), max(float(np.ptp(tops)), 1e-6)

    def collider(prim: Usd.Prim) -> None:
        UsdPhysics.CollisionAPI.Apply(prim)
        binding = UsdShade.MaterialBindingAPI.Apply(prim)
        binding.Bind(material, UsdShade.Tokens.weakerThanDescendants, "physics")

    for k, (cx, cy, cz, hx, hy, hz, yaw) in enumerate(desc.boxes):
        cube = UsdGeom.Cube.Define(stage, f"{prim_path}/box_{k}")
        cube.CreateSizeAttr(2.0)  # half extent 1, scaled to the box's
        cube.AddTranslateOp().Set(Gf.Vec3d(float(cx), float(cy), float(cz)))
        if yaw != 0.0:
            cube.AddRotateZOp().Set(float(np.degrees(yaw)))
        cube.AddScaleOp().Set(Gf.Vec3f(float(hx), float(hy), float(hz)))
        shade = 0.35 + 0.4 * (float(cz + hz) - lo) / span  # higher boxes lighter, as the MuJoCo scene
        cube.CreateDisplayColorAttr([Gf.Vec3f(shade * 0.8, shade * 0.9, shade)])
        collider(cube.GetPrim())
    for k, hf in enumerate(desc.heightfields):
        verts, faces = heightfield_mesh(hf)
        mesh = UsdGeom.Mesh.Define(stage, f"{prim_path}/hfield_{k}")
        mesh.CreatePointsAttr([Gf.Vec3f(*map(float, v)) for v in verts])
        mesh.CreateFaceVertexCountsAttr([3] * len(faces))
        mesh.CreateFaceVertexIndicesAttr(faces.ravel().tolist())
        mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
        mesh.CreateDisplayColorAttr([Gf.Vec3f(0.45, 0.5, 0.4)])
        prim = mesh.GetPrim()
        prim.CreateAttribute(HFIELD_SHAPE_ATTR, Sdf.ValueTypeNames.Int2).Set(Gf.Vec2i(*hf.heights.shape))
        prim.CreateAttribute(HFIELD_BASE_ATTR, Sdf.ValueTypeNames.Double).Set(HFIELD_BASE_M)
        prim.CreateAttribute(FRICTION_ATTR, Sdf.ValueTypeNames.Double).Set(float(friction))
        collider(prim)


class NewtonTerrainMJWarpManager(NewtonMJWarpManager):
    """Newton's MuJoCo-Warp manager, adding each tagged height-field mesh of the stage (:func:`spawn_terrain`)
    as a Newton heightfield from its samples (not a rasterised mesh), and giving every ``hfield`` of the
    MuJoCo-Warp model its authored solid base.

    The base: MuJoCo collides a height field cell by cell as prisms from the surface down to ``size[3]`` below
    the lowest sample; Newton exports 0.1 mm (MuJoCo normalises the samples to [0, 1] when it compiles, so the
    base cannot come from the samples), where the MuJoCo scene has
    :data:`~dexwheel.terrain.description.HFIELD_BASE_M`. A wheel pressed deeper than its cell's prism would
    meet its bottom and sides, not its top, so the base is set on the compiled model, MuJoCo's and
    MuJoCo-Warp's, before the first step. (Isaac Lab picks its backend classes by the manager's name: it must
    start with "Newton".)
    """

    _hfield_bases: list[float] = []

    @classmethod
    def _inject_terrain_heightfields(cls, stage, builder, *, root_paths):
        ignore = list(super()._inject_terrain_heightfields(stage, builder, root_paths=root_paths))
        NewtonTerrainMJWarpManager._hfield_bases = []
        xform_cache = UsdGeom.XformCache()
        for root in root_paths:
            for prim in Usd.PrimRange(stage.GetPrimAtPath(root)):
                attr = prim.GetAttribute(HFIELD_SHAPE_ATTR)
                if not attr or not attr.HasAuthoredValue() or prim.GetPath().pathString in ignore:
                    continue
                nrow, ncol = attr.Get()
                points = np.asarray(UsdGeom.Mesh(prim).GetPointsAttr().Get(), dtype=np.float64)
                mat = np.array(xform_cache.GetLocalToWorldTransform(prim), dtype=np.float64).reshape(4, 4)
                grid = (points @ mat[:3, :3] + mat[3, :3]).reshape(nrow, ncol, 3)
                (x0, y0), (x1, y1) = grid[0, 0, :2], grid[-1, -1, :2]
                hf = Heightfield(data=grid[..., 2], nrow=nrow, ncol=ncol, hx=(x1 - x0) / 2, hy=(y1 - y0) / 2)
                cfg = builder.default_shape_cfg.copy()
                cfg.mu = float(prim.GetAttribute(FRICTION_ATTR).Get())
                xform = wp.transform(wp.vec3((x0 + x1) / 2, (y0 + y1) / 2, 0.0), wp.quat_identity())
                builder.add_shape_heightfield(heightfield=hf, xform=xform, cfg=cfg, label=prim.GetPath().pathString)
                NewtonTerrainMJWarpManager._hfield_bases.append(float(prim.GetAttribute(HFIELD_BASE_ATTR).Get()))
                ignore.append(prim.GetPath().pathString)
        return ignore

    @classmethod
    def _build_solver(cls, model, solver_cfg) -> None:
        super()._build_solver(model, solver_cfg)
        bases = NewtonTerrainMJWarpManager._hfield_bases
        if not bases:
            return
        solver = NewtonMJWarpManager._solver
        size = solver.mj_model.hfield_size
        if len(size) != len(bases):
            raise RuntimeError(f"the MuJoCo-Warp model has {len(size)} height fields, the terrain {len(bases)}")
        size[:, 3] = bases  # the heightfields in the order they were added (their shapes' order)
        solver.mjw_model.hfield_size.assign(size.astype(np.float32))


class DescriptionTerrainImporter(TerrainImporter):
    """Isaac Lab's terrain importer for a dexwheel ``TerrainCfg`` or fixed description: the description's geometry
    (:func:`spawn_terrain`) and its tile origins as the env origins (Isaac Lab's curriculum bookkeeping:
    ``terrain_levels``, ``terrain_types``, :meth:`update_env_origins`)."""

    cfg: DescriptionTerrainImporterCfg

    def __init__(self, cfg: DescriptionTerrainImporterCfg) -> None:
        import isaaclab.sim as sim_utils
        from isaaclab.sim.utils.stage import get_current_stage

        self.cfg = cfg
        self.device = sim_utils.SimulationContext.instance().device
        self.terrain_prim_paths = []
        self.terrain_origins = None
        self.env_origins = None
        self._terrain_flat_patches = {}
        self.description = cfg.terrain.description()
        path = f"{cfg.prim_path}/terrain"
        spawn_terrain(get_current_stage(), path, self.description, cfg.friction)
        self.terrain_prim_paths.append(path)
        # the tiles' origins, or (``use_terrain_origins`` False) Isaac Lab's grid of ``env_spacing``
        self.configure_env_origins(self.description.origins if cfg.use_terrain_origins else None)
        self.set_debug_vis(cfg.debug_vis)

    @functools.cached_property
    def raster(self) -> HeightRaster:
        """The description's height raster, the MuJoCo task's (:data:`~dexwheel.tasks.velocity.terrain.RASTER_RESOLUTION_M`)."""
        from dexwheel.tasks.velocity.terrain import RASTER_RESOLUTION_M

        return HeightRaster(self.description, RASTER_RESOLUTION_M)


class TerrainSource:
    """A dexwheel ``TerrainCfg`` or a fixed ``TerrainDescription`` inside an Isaac Lab config: configclasses rewrite
    the fields of the dataclasses they hold, which the frozen ``TerrainCfg`` refuses; this holder is no dataclass."""

    def __init__(self, cfg: TerrainCfg | TerrainDescription) -> None:
        self.cfg = cfg

    def description(self) -> TerrainDescription:
        """The geometry: the fixed description as it is, or the one the config generates (as the MuJoCo task's
        :class:`~dexwheel.tasks.velocity.terrain.TaskTerrain`)."""
        return self.cfg if isinstance(self.cfg, TerrainDescription) else generate(self.cfg)

    def __repr__(self) -> str:
        return f"TerrainSource({self.cfg!r})"


def hold_terrain(overrides: dict) -> dict:
    """``make_cfg`` keywords as an Isaac Lab config holds them (``task_overrides``): a ``terrain`` given as a
    ``TerrainCfg`` or ``TerrainDescription`` held by a :class:`TerrainSource` (a configclass rewrites the fields of a
    dataclass it holds, even in a dict, which the frozen ones refuse)."""
    t = overrides.get("terrain")
    return {**overrides, "terrain": TerrainSource(t)} if isinstance(t, (TerrainCfg, TerrainDescription)) else overrides


def task_kwargs(overrides: dict) -> dict:
    """``task_overrides`` as ``make_cfg`` takes them: a held terrain (:func:`hold_terrain`) as itself."""
    t = overrides.get("terrain")
    return {**overrides, "terrain": t.cfg} if isinstance(t, TerrainSource) else dict(overrides)


@configclass
class DescriptionTerrainImporterCfg(TerrainImporterCfg):
    """The terrain of a dexwheel ``TerrainCfg`` or fixed ``TerrainDescription`` (``terrain``, held by a
    :class:`TerrainSource`);
    ``max_init_terrain_level`` as Isaac Lab's (None: every level), ``friction`` the terrain's (static = dynamic)."""

    class_type: type = DescriptionTerrainImporter
    terrain: TerrainSource = MISSING
    terrain_type: str = "usd"  # not Isaac Lab's generator; the importer's own path (above)
    friction: float = 1.0
    visual_material = None
