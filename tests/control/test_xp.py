"""The composer and the resolver on torch tensors: the same code as on numpy (the Isaac Lab tasks run it),
the same frames bit for bit, and a layer of the other library refused by name."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from dexwheel.control import (
    JointCommandComposer,
    JointCommandError,
    JointCommandLayer,
    JointCommandResolver,
    JointDefault,
    JointLayout,
    JointTargetBuffer,
    MotorFrame,
)
from dexwheel.control.layout import env_layout

torch = pytest.importorskip("torch")

JOINTS = ("fl_knee", "fr_knee", "hl_knee", "hr_knee", "fl_wheel", "fr_wheel", "hl_wheel", "hr_wheel")
KNEES, WHEELS = JOINTS[:4], JOINTS[4:]


def _path(xp, n: int):
    """A wheels-only composer with a safety override over every env (the wheel-leg task's wiring): one
    contiguous run per env and layer, so more than three runs (the gather/scatter path)."""
    rng = np.random.default_rng(0)
    bufs = {}
    for name, joints in (("policy", WHEELS), ("stance", KNEES), ("override", WHEELS)):
        layout = env_layout(joints, n, name)
        values = {f: rng.normal(size=layout.dof) for f in ("position", "kp", "kd", "vel")}
        bufs[name] = JointTargetBuffer(layout, **values, xp=xp)
    layers = [JointCommandLayer(k, b.view, override=k == "override") for k, b in bufs.items()]
    composer = JointCommandComposer(env_layout(JOINTS, n, "task"), layers)
    robot = env_layout(tuple(reversed(JOINTS)) + ("head",), n, "robot")
    defaults = {f"env{i}/head" if n > 1 else "head": JointDefault(0.25, 3.0, 0.5) for i in range(n)}
    resolver = JointCommandResolver(robot, defaults, xp=xp)
    return bufs, composer, resolver


@pytest.mark.parametrize("n", [1, 5])
def test_torch_frames_equal_numpy_frames_bit_for_bit(n):
    np_bufs, np_comp, np_res = _path(np, n)
    t_bufs, t_comp, t_res = _path(torch, n)
    assert isinstance(t_comp.frame.block, torch.Tensor) and t_comp.frame.block.dtype == torch.float32
    for step in range(3):  # the buffers change in place between composes, as a policy's would
        for name in np_bufs:
            np_bufs[name].position[:] += step
            t_bufs[name].position[:] += step
        out_np = np_res.resolve_into(np_comp.compose())
        out_t = t_res.resolve_into(t_comp.compose())
        assert np.array_equal(out_t.block.numpy(), out_np.block)
        assert np.array_equal(t_comp.frame.block.numpy(), np_comp.frame.block)
    assert t_comp.owners == np_comp.owners
    assert t_comp.op_count == np_comp.op_count


def test_a_layer_of_another_library_is_refused_naming_it():
    layout = JointLayout(JOINTS)
    a = JointTargetBuffer(layout.select(KNEES), xp=torch)
    b = JointTargetBuffer(layout.select(WHEELS))  # numpy
    with pytest.raises(JointCommandError, match=r"layer 'wheels': position .* is a numpy, not a torch tensor on cpu"):
        JointCommandComposer(layout, [JointCommandLayer("knees", a.view), JointCommandLayer("wheels", b.view)])
    frame = MotorFrame(layout)  # numpy
    with pytest.raises(TypeError, match=r"the frame of .* is numpy, the resolver's frames are torch on cpu"):
        JointCommandResolver(layout, xp=torch).resolve_into(frame)


def test_torch_buffers_and_frames_copy_and_pickle_as_views_of_one_block():
    buf = JointTargetBuffer(JointLayout(KNEES), position=[0.1, 0.2, 0.3, 0.4], kp=80.0, xp=torch)
    assert buf.kp.tolist() == [80.0] * 4 and buf.position.data_ptr() == buf.block.data_ptr()
    for clone in (copy.deepcopy(buf), pickle.loads(pickle.dumps(buf))):
        assert torch.equal(clone.block, buf.block)
        clone.kd[:] = 2.0  # a row is still a view of its own block
        assert clone.block[2].tolist() == [2.0] * 4 and buf.block[2].tolist() == [0.0] * 4
    frame = MotorFrame(JointLayout(KNEES), xp=torch)
    assert isinstance(frame.copy().block, torch.Tensor)


def test_a_copied_torch_view_is_rows_of_its_own_block():
    buf = JointTargetBuffer(JointLayout(KNEES), kp=80.0, xp=torch)
    for view in (copy.deepcopy(buf.view), pickle.loads(pickle.dumps(buf.view))):
        view.position[:] = 1.0
        assert view.position.data_ptr() == view.block.data_ptr() and view.block[0].tolist() == [1.0] * 4
        assert buf.position.tolist() == [0.0] * 4
