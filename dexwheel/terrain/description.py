"""The backend-neutral terrain: static boxes and height fields, and the surface height they give.

What the generator (:mod:`dexwheel.terrain.generator`) produces and every backend builds from: the MuJoCo
scene (:mod:`dexwheel.terrain.mujoco`) and Isaac Lab's (:mod:`dexwheel.isaaclab.terrain`). :func:`height_at` is the one definition of the
surface: the highest top of the boxes covering a point, and the height fields' surface there.

A height field is a grid of samples, ``heights[row, col]`` at ``x = cx - rx + col * dx``, ``y = cy - ry + row
* dy``, its surface two triangles per cell split along the diagonal from ``(col, row)`` to ``(col + 1, row +
1)``: MuJoCo's triangulation (checked against its hfield ray casts and contacts), so the surface here and the
one the MuJoCo model collides with are the same triangles. (A backend that triangulates otherwise must split
its cells the same way.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: A height field's solid base below its lowest sample (m): every backend builds the same prisms under it.
HFIELD_BASE_M = 0.5


@dataclass(frozen=True, eq=False)
class HeightField:
    """A height field patch: ``heights`` ``(nrow, ncol)`` (m, world z), rows along y, centred at ``center``
    (x, y) with half extents ``half_size`` (x, y)."""

    center: tuple[float, float]
    half_size: tuple[float, float]
    heights: np.ndarray

    def surface(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The triangulated surface at ``(x, y)`` (NaN outside the patch)."""
        nrow, ncol = self.heights.shape
        (cx, cy), (rx, ry) = self.center, self.half_size
        dx, dy = 2.0 * rx / (ncol - 1), 2.0 * ry / (nrow - 1)
        u, v = (x - (cx - rx)) / dx, (y - (cy - ry)) / dy
        inside = (u >= 0) & (u <= ncol - 1) & (v >= 0) & (v <= nrow - 1)
        c = np.clip(np.floor(u), 0, ncol - 2).astype(np.intp)
        r = np.clip(np.floor(v), 0, nrow - 2).astype(np.intp)
        fu, fv = u - c, v - r
        h = self.heights
        z00, z10, z01, z11 = h[r, c], h[r, c + 1], h[r + 1, c], h[r + 1, c + 1]
        below = fu >= fv  # the triangle (c, r), (c + 1, r), (c + 1, r + 1); else (c, r), (c, r + 1), (c + 1, r + 1)
        z = np.where(below, z00 + fu * (z10 - z00) + fv * (z11 - z10), z00 + fv * (z01 - z00) + fu * (z11 - z01))
        return np.where(inside, z, np.nan)


@dataclass(frozen=True, eq=False)
class TerrainDescription:
    """The terrain grid, described once.

    ``boxes`` ``(K, 7)``: centre x, y, z, half sizes x, y, z, yaw (rad), each a solid static box;
    ``heightfields`` the height-field patches; ``origins`` ``(num_rows, num_cols, 3)`` each tile's spawn point
    (its centre, at the highest surface under the robot's footprint there); ``tile_types`` the sub-terrain name
    of each column, ``difficulty`` ``(num_rows, num_cols)`` in [0, 1]; ``bounds`` ``(xmin, xmax, ymin, ymax)``
    of the whole terrain, border included; ``tile_size`` ``(x, y)``.
    """

    boxes: np.ndarray
    heightfields: tuple[HeightField, ...]
    origins: np.ndarray
    tile_types: tuple[str, ...]
    difficulty: np.ndarray
    bounds: tuple[float, float, float, float]
    tile_size: tuple[float, float]

    @property
    def num_rows(self) -> int:
        return int(self.origins.shape[0])

    @property
    def num_cols(self) -> int:
        return int(self.origins.shape[1])


def box_tops(boxes: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The highest top of ``boxes`` covering each point (-inf where none does)."""
    out = np.full(np.broadcast(x, y).shape, -np.inf)
    for cx, cy, cz, hx, hy, hz, yaw in boxes:
        dx, dy = x - cx, y - cy
        if yaw != 0.0:
            c, s = np.cos(yaw), np.sin(yaw)
            dx, dy = c * dx + s * dy, -s * dx + c * dy
        inside = (np.abs(dx) <= hx) & (np.abs(dy) <= hy)
        np.maximum(out, np.where(inside, cz + hz, -np.inf), out=out)
    return out


def height_at(desc: TerrainDescription, x, y) -> np.ndarray:
    """The terrain's surface height (m) at world ``(x, y)`` (arrays broadcast): the highest surface there,
    NaN off the terrain."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    out = box_tops(desc.boxes, x, y)
    for hf in desc.heightfields:
        z = hf.surface(x, y)
        np.maximum(out, np.where(np.isnan(z), -np.inf, z), out=out)
    return np.where(np.isinf(out), np.nan, out)


class HeightRaster:
    """:func:`height_at` sampled once on a regular grid (``resolution`` m), for lookups at any point in O(1):
    the height scan's source.

    A lookup takes the nearest sample, so it equals :func:`height_at` exactly at the samples, within a box top
    (exact) away from vertical edges, and within half a sample of an edge it may read the other side. Outside
    the terrain it reads the nearest edge sample. One raster serves every env of a task. Heights are stored
    as float32 (to ~6e-8 m).
    """

    def __init__(self, desc: TerrainDescription, resolution: float = 0.02) -> None:
        xmin, xmax, ymin, ymax = desc.bounds
        self.resolution = res = float(resolution)
        self.x0, self.y0 = xmin, ymin
        nx, ny = int(round((xmax - xmin) / res)) + 1, int(round((ymax - ymin) / res)) + 1
        xs, ys = xmin + res * np.arange(nx), ymin + res * np.arange(ny)
        grid = np.full((nx, ny), -np.inf)
        for cx, cy, cz, hx, hy, hz, yaw in desc.boxes:  # paint each box over the samples it covers
            if yaw == 0.0:
                i0, i1 = np.searchsorted(xs, cx - hx, "left"), np.searchsorted(xs, cx + hx, "right")
                j0, j1 = np.searchsorted(ys, cy - hy, "left"), np.searchsorted(ys, cy + hy, "right")
                np.maximum(grid[i0:i1, j0:j1], cz + hz, out=grid[i0:i1, j0:j1])
            else:
                r = float(np.hypot(hx, hy))
                i0, i1 = np.searchsorted(xs, cx - r, "left"), np.searchsorted(xs, cx + r, "right")
                j0, j1 = np.searchsorted(ys, cy - r, "left"), np.searchsorted(ys, cy + r, "right")
                sub = box_tops(np.array([[cx, cy, cz, hx, hy, hz, yaw]]), xs[i0:i1, None], ys[None, j0:j1])
                np.maximum(grid[i0:i1, j0:j1], sub, out=grid[i0:i1, j0:j1])
        for hf in desc.heightfields:
            (cx, cy), (rx, ry) = hf.center, hf.half_size
            i0, i1 = np.searchsorted(xs, cx - rx, "left"), np.searchsorted(xs, cx + rx, "right")
            j0, j1 = np.searchsorted(ys, cy - ry, "left"), np.searchsorted(ys, cy + ry, "right")
            z = hf.surface(xs[i0:i1, None], ys[None, j0:j1])
            np.maximum(grid[i0:i1, j0:j1], np.where(np.isnan(z), -np.inf, z), out=grid[i0:i1, j0:j1])
        grid[np.isinf(grid)] = 0.0  # gaps (none in a generated terrain) read as the ground level
        self.grid = grid.astype(np.float32)  # half the memory (18 MB for the default 36 x 51 m); 6e-8 m at 1 m
        self.shape = grid.shape

    def lookup(self, x, y):
        """The nearest sample's height at each ``(x, y)`` (edge samples beyond the terrain): numpy arrays (the
        MuJoCo task) or torch tensors (the Isaac Lab task, on the tensors' device), the same arithmetic."""
        nx, ny = self.shape
        if isinstance(x, np.ndarray) or np.isscalar(x):
            i = np.clip(np.rint((x - self.x0) / self.resolution), 0, nx - 1).astype(np.intp)
            j = np.clip(np.rint((y - self.y0) / self.resolution), 0, ny - 1).astype(np.intp)
            return self.grid[i, j]
        import torch  # a torch tensor came in (the Isaac Lab task): round half to even, as np.rint

        i = torch.clip(torch.round((x - self.x0) / self.resolution), 0, nx - 1).long()
        j = torch.clip(torch.round((y - self.y0) / self.resolution), 0, ny - 1).long()
        return self._torch_grid(x.device)[i, j]

    def _torch_grid(self, device):
        import torch

        cache = self.__dict__.setdefault("_torch_grids", {})
        if str(device) not in cache:
            cache[str(device)] = torch.as_tensor(self.grid, device=device)
        return cache[str(device)]
