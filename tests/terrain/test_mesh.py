"""The terrain as triangles (dexwheel.terrain.mesh): the surface Isaac Lab draws and ray-casts is height_at's."""

from __future__ import annotations

import numpy as np
import pytest

from dexwheel.terrain import HeightField, TerrainCfg, TerrainDescription, generate, height_at
from dexwheel.terrain.mesh import box_mesh, heightfield_mesh, mesh_height_at, terrain_mesh

#: Barycentric interpolation against height_at's two-triangle formula, both in float64.
TOL_M = 1e-9


@pytest.mark.slow
def test_the_mesh_surface_is_height_at_on_every_type():
    desc = generate(TerrainCfg(size=(3.0, 3.0), border_width=1.0, num_rows=2))
    verts, faces = terrain_mesh(desc)
    rng = np.random.default_rng(0)
    xmin, xmax, ymin, ymax = desc.bounds
    x, y = rng.uniform(xmin, xmax, 3000), rng.uniform(ymin, ymax, 3000)
    np.testing.assert_allclose(mesh_height_at(verts, faces, x, y), height_at(desc, x, y), atol=TOL_M)


def test_height_field_cells_split_along_mujocos_diagonal():
    # one cell with one raised corner, (col 1, row 0): the split from (0, 0) to (1, 1) puts it in the lower triangle
    hf = HeightField((0.5, 0.5), (0.5, 0.5), np.array([[0.0, 1.0], [0.0, 0.0]]))
    desc = TerrainDescription(np.zeros((0, 7)), (hf,), np.zeros((0, 0, 3)), (), np.zeros((0, 0)), (0, 1, 0, 1), (1, 1))
    verts, faces = heightfield_mesh(hf)
    x, y = np.array([0.75, 0.25, 0.5]), np.array([0.25, 0.75, 0.5])
    assert np.allclose(mesh_height_at(verts, faces, x, y), [0.5, 0.0, 0.0])
    assert np.allclose(height_at(desc, x, y), [0.5, 0.0, 0.0])


def test_triangles_face_outwards():
    verts, faces = box_mesh(np.array([[1.0, 2.0, 0.5, 0.3, 0.4, 0.5, 0.7]]))
    centre = verts.mean(axis=0)
    a, b, c = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    normal = np.cross(b - a, c - a)
    assert np.all(np.einsum("ij,ij->i", normal, (a + b + c) / 3 - centre) > 0)
    hf = HeightField((0.0, 0.0), (1.0, 1.0), np.random.default_rng(1).uniform(0, 0.1, (5, 7)))
    verts, faces = heightfield_mesh(hf)
    a, b, c = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    assert np.all(np.cross(b - a, c - a)[:, 2] > 0)
