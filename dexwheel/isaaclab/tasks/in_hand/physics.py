"""What the in-hand terms read from MuJoCo-Warp's arrays, which Isaac Lab's assets do not expose: the fingertips'
contacts with the object and the hand's actuator forces, as the MuJoCo scene's sensors read them
(:func:`dexwheel.tasks.in_hand.scene.add_task_sensors`). Newton's worlds are the envs, in order."""

from __future__ import annotations

import torch
import warp as wp
from isaaclab_newton.physics import NewtonManager

from dexwheel.tasks.in_hand.objects import FINGERTIPS


def _bodies(solver, suffixes: tuple[str, ...]) -> list[int]:
    """The MuJoCo body ids (of world 0's template) whose names end in each suffix: Newton names a body by its prim
    path, ``..._Robot_Geometry_hand_base_..._index_distal``, ``..._Object``."""
    import mujoco

    m = solver.mj_model
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, i) or "" for i in range(m.nbody)]
    out = []
    for suffix in suffixes:
        hits = [i for i, name in enumerate(names) if name.endswith("_" + suffix)]
        if len(hits) != 1:
            raise RuntimeError(f"in-hand scene: {len(hits)} bodies named *_{suffix} in {names}")
        out.append(hits[0])
    return out


class FingertipContacts:
    """Per env and fingertip (thumb, index ... pinky), whether it touches the object in the last physics step: the
    MuJoCo scene's contact sensors (``found``, clipped to 1). ``object_name``: the object's prim name."""

    def __init__(self, object_name: str = "Object") -> None:
        solver = NewtonManager._solver
        ids = _bodies(solver, (*FINGERTIPS, object_name))
        self._solver = solver
        self._geom_body = torch.as_tensor(solver.mj_model.geom_bodyid, dtype=torch.long)
        self._tips, self._object = torch.tensor(ids[:-1], dtype=torch.long), ids[-1]

    def __call__(self, num_envs: int, device) -> torch.Tensor:
        data = self._solver.mjw_data
        geom = wp.to_torch(data.contact.geom).long()
        body = self._geom_body.to(geom.device)[geom]  # (ncon, 2)
        world = wp.to_torch(data.contact.worldid).long().clamp(0, num_envs - 1)
        live = torch.arange(geom.shape[0], device=geom.device) < wp.to_torch(data.nacon)
        tips = self._tips.to(geom.device)
        with_object = (body == self._object).any(dim=1) & live
        other = torch.where(body[:, 0] == self._object, body[:, 1], body[:, 0])
        hit = (other[:, None] == tips[None, :]) & with_object[:, None]  # (ncon, 5)
        out = torch.zeros(num_envs, len(tips), device=geom.device)
        out.scatter_reduce_(0, world[:, None].expand_as(hit), hit.float(), reduce="amax")
        return out.to(device)


def actuator_force_sq(num_envs: int, device) -> torch.Tensor:
    """Per env, ``sum tau^2`` over the hand's actuators (N m)^2 of the last physics step (MuJoCo's
    ``actuator_force``: the clamped PD force)."""
    force = wp.to_torch(NewtonManager._solver.mjw_data.actuator_force)  # (worlds, actuators)
    return torch.sum(torch.square(force[:num_envs]), dim=1).to(device)
