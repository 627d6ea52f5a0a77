"""Rendering: a lit scene a person can read, and offscreen frames of several simulations of one model
(the native vector envs' ``rgb_array``)."""

from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np


def render_each(
    renderer: mujoco.Renderer, datas: Iterable[mujoco.MjData], camera: mujoco.MjvCamera | str | int
) -> tuple[np.ndarray, ...]:
    """One RGB frame per MjData, all from ``camera`` (each a copy: the renderer reuses its buffer)."""
    frames = []
    for data in datas:
        renderer.update_scene(data, camera=camera)
        frames.append(renderer.render().copy())
    return tuple(frames)


def add_studio(spec: mujoco.MjSpec, floor_z: float, floor_group: int) -> None:
    """Light the scene and give it a backdrop and a floor, so that a still or a video shows the robot
    clearly (MuJoCo's default is a dim headlight in front of black).

    Render-only: lights, textures and ``visual`` settings take no part in the physics, and the floor is a
    visual geom (contype = conaffinity = 0, ``floor_group``) on a static body added after every other
    one, so no body or geom of the robot changes its index and no contact, sensor or collision pair changes.
    """
    spec.visual.headlight.ambient = [0.25, 0.25, 0.25]
    spec.visual.headlight.diffuse = [0.35, 0.35, 0.35]
    spec.visual.headlight.specular = [0.05, 0.05, 0.05]
    spec.add_texture(name="studio_sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX, builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
                     rgb1=[0.80, 0.84, 0.90], rgb2=[0.35, 0.39, 0.45], width=512, height=3072)  # fmt: skip
    floor_tex = spec.add_texture(name="studio_floor", type=mujoco.mjtTexture.mjTEXTURE_2D,
                                 builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.62, 0.64, 0.67],
                                 rgb2=[0.55, 0.57, 0.60], width=512, height=512)  # fmt: skip
    mat = spec.add_material(name="studio_floor", texrepeat=[16, 16], reflectance=0.05)
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = floor_tex.name
    directional = mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
    spec.worldbody.add_light(name="studio_key", type=directional, pos=[1, -0.5, 2], dir=[-0.5, 0.25, -1],
                             diffuse=[0.6, 0.6, 0.6], specular=[0.2, 0.2, 0.2], castshadow=True)  # fmt: skip
    spec.worldbody.add_light(name="studio_fill", type=directional, pos=[-1, 1, 1], dir=[0.5, -0.5, -0.5],
                             diffuse=[0.25, 0.25, 0.25], specular=[0, 0, 0], castshadow=False)  # fmt: skip
    stage = spec.worldbody.add_body(name="studio")
    stage.add_geom(name="studio_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1, 1, 0.05], pos=[0, 0, floor_z],
                   material=mat.name, contype=0, conaffinity=0, group=floor_group)  # fmt: skip
