"""Build a :class:`~dexwheel.terrain.description.TerrainDescription` into a MuJoCo scene (``mujoco.MjSpec``).

Every box is a static box geom of the world body, every height field an ``hfield`` asset with one geom:
all of them collide like the flat floor they replace (MuJoCo's default contact parameters), and all of
them belong to the world body, so a contact sensor with the world body as its reference sees every terrain
contact. A height field is stored normalised: the geom sits at the patch's lowest sample and the asset's
elevation range is the patch's spread, so MuJoCo's surface is the description's samples (to float32).
"""

from __future__ import annotations

import mujoco
import numpy as np

from dexwheel.terrain.description import HFIELD_BASE_M, TerrainDescription

#: The name prefix of the terrain's geoms and height-field assets.
PREFIX = "terrain"


def add_terrain(spec: mujoco.MjSpec, desc: TerrainDescription) -> None:
    """Add the terrain's boxes and height fields to ``spec``'s world body (static geoms)."""
    world = spec.worldbody
    tops = desc.boxes[:, 2] + desc.boxes[:, 5] if len(desc.boxes) else np.zeros(0)
    span = max(float(np.ptp(tops)) if len(tops) else 0.0, 1e-6)
    lo = float(tops.min()) if len(tops) else 0.0
    for k, (cx, cy, cz, hx, hy, hz, yaw) in enumerate(desc.boxes):
        shade = 0.35 + 0.4 * (float(cz + hz) - lo) / span  # higher boxes lighter
        geom = world.add_geom(name=f"{PREFIX}_box_{k}", type=mujoco.mjtGeom.mjGEOM_BOX, pos=[cx, cy, cz],
                              size=[hx, hy, hz], rgba=[shade * 0.8, shade * 0.9, shade, 1.0])  # fmt: skip
        if yaw != 0.0:
            geom.quat = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    for k, hf in enumerate(desc.heightfields):
        h = hf.heights
        zmin, zspan = float(h.min()), float(np.ptp(h))
        scale = zspan if zspan > 0 else 1e-6
        norm = (h - zmin) / scale
        nrow, ncol = h.shape
        name = f"{PREFIX}_hfield_{k}"
        spec.add_hfield(name=name, size=[hf.half_size[0], hf.half_size[1], scale, HFIELD_BASE_M], nrow=nrow,
                        ncol=ncol, userdata=norm.ravel().tolist())  # fmt: skip
        world.add_geom(name=f"{name}_geom", type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=name,
                       pos=[hf.center[0], hf.center[1], zmin], rgba=[0.45, 0.5, 0.4, 1.0])  # fmt: skip
