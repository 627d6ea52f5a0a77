"""A :class:`~dexwheel.terrain.description.TerrainDescription` as triangle meshes (numpy only).

What a backend that draws or ray-casts triangles builds from the description: each box as its 12 triangles
(yaw applied), each height field as two triangles per cell split along the diagonal from ``(col, row)`` to
``(col + 1, row + 1)``, MuJoCo's split (:meth:`~dexwheel.terrain.description.HeightField.surface`), so the
triangles' surface is :func:`~dexwheel.terrain.description.height_at`'s. Every triangle faces outwards (counter-
clockwise seen from outside: up on a height field).
"""

from __future__ import annotations

import numpy as np

from dexwheel.terrain.description import HeightField, TerrainDescription

# a unit box's corners (x, y, z in {-1, 1}) and its 12 outward triangles
_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
_BOX_FACES = np.array([
    [0, 1, 3], [0, 3, 2],  # x = -1
    [4, 6, 7], [4, 7, 5],  # x = +1
    [0, 4, 5], [0, 5, 1],  # y = -1
    [2, 3, 7], [2, 7, 6],  # y = +1
    [0, 2, 6], [0, 6, 4],  # z = -1
    [1, 5, 7], [1, 7, 3],  # z = +1
], dtype=np.int64)  # fmt: skip


def box_mesh(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``boxes`` ``(K, 7)`` as ``(8K, 3)`` vertices and ``(12K, 3)`` triangles."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 7)
    local = _CORNERS[None] * boxes[:, None, 3:6]
    c, s = np.cos(boxes[:, 6])[:, None], np.sin(boxes[:, 6])[:, None]
    x, y = c * local[..., 0] - s * local[..., 1], s * local[..., 0] + c * local[..., 1]
    verts = np.stack([x, y, local[..., 2]], axis=-1) + boxes[:, None, 0:3]
    faces = _BOX_FACES[None] + 8 * np.arange(len(boxes))[:, None, None]
    return verts.reshape(-1, 3), faces.reshape(-1, 3)


def heightfield_mesh(hf: HeightField) -> tuple[np.ndarray, np.ndarray]:
    """The height field's samples as vertices (row-major: vertex ``row * ncol + col``) and its surface as
    ``2 (nrow - 1) (ncol - 1)`` triangles, each cell split along its ``(col, row)``-``(col + 1, row + 1)``
    diagonal (MuJoCo's split)."""
    nrow, ncol = hf.heights.shape
    (cx, cy), (rx, ry) = hf.center, hf.half_size
    xs, ys = np.linspace(cx - rx, cx + rx, ncol), np.linspace(cy - ry, cy + ry, nrow)
    gx, gy = np.meshgrid(xs, ys)  # (nrow, ncol)
    verts = np.stack([gx, gy, hf.heights], axis=-1).reshape(-1, 3)
    r, c = np.meshgrid(np.arange(nrow - 1), np.arange(ncol - 1), indexing="ij")
    v00, v10 = r * ncol + c, r * ncol + c + 1  # (col, row), (col + 1, row)
    v01, v11 = v00 + ncol, v10 + ncol
    lower = np.stack([v00, v10, v11], axis=-1).reshape(-1, 3)  # the triangle below the diagonal (fu >= fv)
    upper = np.stack([v00, v11, v01], axis=-1).reshape(-1, 3)
    return verts, np.concatenate([lower, upper])


def terrain_mesh(desc: TerrainDescription) -> tuple[np.ndarray, np.ndarray]:
    """The whole terrain as one mesh: vertices ``(V, 3)`` float64, triangles ``(F, 3)`` int64."""
    parts = [box_mesh(desc.boxes), *(heightfield_mesh(hf) for hf in desc.heightfields)]
    verts, faces, offset = [], [], 0
    for v, f in parts:
        verts.append(v)
        faces.append(f + offset)
        offset += len(v)
    return np.concatenate(verts), np.concatenate(faces)


def mesh_height_at(verts: np.ndarray, faces: np.ndarray, x, y) -> np.ndarray:
    """The highest triangle at each ``(x, y)`` (a downward ray cast onto the mesh; NaN where none): for tests
    and small meshes (O(points x triangles) memory in chunks)."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    px, py = x.ravel(), y.ravel()
    out = np.full(px.shape, -np.inf)
    a, b, c = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    det = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    keep = np.abs(det) > 1e-12  # vertical triangles (box sides) hold no surface seen from above
    a, b, c, det = a[keep], b[keep], c[keep], det[keep]
    for k in range(0, len(a), 4096):
        sa, sb, sc, sd = a[k : k + 4096], b[k : k + 4096], c[k : k + 4096], det[k : k + 4096]
        dx, dy = px[:, None] - sa[None, :, 0], py[:, None] - sa[None, :, 1]
        u = (dx * (sc[None, :, 1] - sa[None, :, 1]) - dy * (sc[None, :, 0] - sa[None, :, 0])) / sd
        v = (dy * (sb[None, :, 0] - sa[None, :, 0]) - dx * (sb[None, :, 1] - sa[None, :, 1])) / sd
        eps = 1e-9
        inside = (u >= -eps) & (v >= -eps) & (u + v <= 1 + eps)
        z = sa[None, :, 2] + u * (sb[None, :, 2] - sa[None, :, 2]) + v * (sc[None, :, 2] - sa[None, :, 2])
        out = np.maximum(out, np.where(inside, z, -np.inf).max(axis=1))
    return np.where(np.isinf(out), np.nan, out).reshape(x.shape)
