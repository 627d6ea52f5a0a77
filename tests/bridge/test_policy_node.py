"""The exported in-hand policy on the hand's SDK topics (``scripts/policy_node.py``, :mod:`dexwheel.bridge.policy_node`)
and the bridge's in-hand scene (``object.shape``): the node computes what the env computes, and over DDS (loopback
only) it drives the simulated hand holding a cube or the task's own capsule lying across the fingers."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cyclonedds")

from cfgutil import compose_cfg, short  # noqa: E402
from ros2_client import domain_for_tests  # noqa: E402

from dexwheel.bridge.config import BridgeConfig, HandObject  # noqa: E402
from dexwheel.bridge.node import G20Bridge  # noqa: E402
from dexwheel.bridge.policy_node import HandPolicy, NodeError, PolicyNodeConfig, WireTopics, run_policy_node  # noqa: E402
from dexwheel.bridge.transport import CycloneTransport  # noqa: E402
from dexwheel.control import G20_MIMIC  # noqa: E402
from dexwheel.fields import ConfigFieldError  # noqa: E402
from dexwheel.rl.env_factory import make_env  # noqa: E402
from dexwheel.rl.export import export_policy  # noqa: E402
from dexwheel.rl.run_config import run_config  # noqa: E402
from dexwheel.rl.training import train  # noqa: E402
from dexwheel.robots.g20 import ACTIVE_JOINTS, ALL_JOINTS  # noqa: E402
from dexwheel.tasks.in_hand.objects import PALM_CENTRE  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STEPS = ["train.total_timesteps=1024", "train.eval_every_steps=1024", "train.checkpoint_every_steps=1024"]
ACTIVE = G20_MIMIC.layout.indices(ACTIVE_JOINTS)


@pytest.fixture(scope="module")
def rotate_run(tmp_path_factory):
    """A tiny G20Rotate-v0 run (rsl_ppo, the delta mapping) and its export."""
    run = tmp_path_factory.mktemp("rotate")
    train(compose_cfg("train", *short("g20_left", "task=in_hand_rotate", *STEPS, algo="rsl_ppo")), run)
    onnx, _ = export_policy(run)
    return run, onnx


@pytest.mark.slow
def test_the_node_observes_and_commands_what_the_env_does(rotate_run):
    """Fed the env's joint positions, the node's observation is the env's policy columns and its command the
    env's, bit for bit, step after step (the delta mapping accumulates: any difference would grow)."""
    run, onnx = rotate_run
    policy = HandPolicy.load(onnx)
    env = make_env(run_config(run))
    obs, _ = env.reset(seed=3)
    task = env.unwrapped.task
    policy.start(task.qpos[0])
    n = policy.exported.obs_size
    assert n == task.policy_obs_dim
    for _ in range(20):
        np.testing.assert_array_equal(policy.observe(task.qpos[0])[0], obs[:n])
        command = policy.step()
        obs, *_ = env.step(policy.raw_action[0])
        np.testing.assert_array_equal(command, task.command[0])
    assert np.abs(task.command[0] - task.start_joints[0]).max() > 1e-3  # the policy moved the hand


@pytest.mark.slow
def test_the_nodes_clock_advances_one_control_step_per_observation_and_restarts_at_start(rotate_run):
    """The rolling policy's clock (``gait_phase``) is the node's own count of control steps (1 / control_hz = 0.05 s
    each): the k-th observation after start reads sin, cos of 2 pi k 0.05 / 0.52; start again reads (0, 1)."""
    run, onnx = rotate_run
    policy = HandPolicy.load(onnx)
    assert policy.control_hz == 20.0
    cols = make_env(run_config(run)).unwrapped.task.obs_slices["gait_phase"]
    q = np.zeros(len(ALL_JOINTS))
    policy.start(q)
    for k in range(6):
        obs = policy.observe(q)[0]
        assert policy.state.elapsed[0] == k
        angle = 2.0 * np.pi * k * 0.05 / 0.52
        np.testing.assert_allclose(obs[cols], [np.sin(angle), np.cos(angle)], atol=1e-6)
        policy.step()
    policy.start(q)
    np.testing.assert_array_equal(policy.observe(q)[0][cols], [0.0, 1.0])
    assert policy.state.elapsed[0] == 0


#: G20Rotate-v0's object: the 45 x 80 mm capsule lying across the fingers (what the exported policy was trained on).
TASK_CAPSULE = HandObject("capsule", size=0.045, length=0.08, orientation="across")


def _hold_cube_bridge(domain: int, obj: HandObject | None = None, **kw) -> BridgeConfig:
    return BridgeConfig(domain_id=domain, headless=True, pd_drive=True, speed=1.0, object=obj or HandObject("cube"),
                        **kw)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(("obj", "offset"), [(HandObject("cube"), 3), (TASK_CAPSULE, 9)], ids=["cube", "task_capsule"])
def test_over_dds_the_policy_drives_the_simulated_hand_holding_an_object(dds, rotate_run, obj, offset):
    """The node on loopback DDS against the bridge's in-hand scene: every SDK command it sends is accepted (none
    rejected), the hand's active joints follow the last one (the SDK's values, as the bridge maps them back), and
    the object stays on the palm: a cube, and the task's own capsule lying across the fingers."""
    _, onnx = rotate_run
    domain = domain_for_tests(offset)
    transport = CycloneTransport(domain)
    bridge = G20Bridge(_hold_cube_bridge(domain, obj), transport)
    start_object = bridge.sim.object_position().copy()
    stop_bridge = threading.Event()
    runner = threading.Thread(target=bridge.run, args=(stop_bridge,))
    transport.start()
    runner.start()
    try:
        stats = run_policy_node(PolicyNodeConfig(onnx=str(onnx), domain_id=domain, max_steps=30))
        time.sleep(0.5)  # the last command settles (PD, slew 5 rad/s)
    finally:
        stop_bridge.set()
        runner.join(timeout=30)
        transport.close()
        bridge.close()
    assert stats.reason == "max_steps" and stats.steps == 30 and stats.rejected == 0 and stats.states > 0
    assert bridge.stats.rejected == 0 and bridge.stats.accepted >= 25, bridge.stats  # discovery may lose the first
    last_goal = np.asarray(bridge.composer.compose().qpos, dtype=np.float64)  # the last SDK command, in radians
    reached = np.abs(bridge.sim.positions()[ACTIVE] - last_goal)
    print(
        f"\nlast command vs the hand: {np.round(reached, 3)} rad; {obj.shape} moved "
        f"{np.linalg.norm(bridge.sim.object_position() - start_object) * 1000:.1f} mm"
    )
    assert np.median(reached) < 0.05
    assert abs(bridge.sim.object_position()[2] - PALM_CENTRE[2] - obj.spec.half_height) < 0.02  # still on the palm


def test_the_bridge_refuses_an_object_it_cannot_simulate():
    with pytest.raises(ConfigFieldError, match=r"^bridge: object.shape=cube needs pd_drive=true"):
        BridgeConfig(object=HandObject("cube"))
    with pytest.raises(ConfigFieldError, match=r"^bridge: object.size: 0.3 m is outside \[0.04, 0.08\] m"):
        BridgeConfig(pd_drive=True, object=HandObject("cube", size=0.3))
    with pytest.raises(ConfigFieldError, match=r"^bridge: object.mass=0.2 does nothing without an object"):
        BridgeConfig(object=HandObject(mass=0.2))
    with pytest.raises(ConfigFieldError, match=r"^bridge: object.shape=cube needs backend=mujoco"):
        BridgeConfig(backend="isaaclab", pd_drive=True, object=HandObject("cube"))


@pytest.mark.slow
def test_the_node_refuses_an_export_it_cannot_play(rotate_run, tmp_path):
    """A pose-task export reads goals the wire does not carry; an export of another config's columns; no state."""
    run, onnx = rotate_run
    with pytest.raises(ConfigFieldError, match=r"^policy_node: onnx: give the export"):
        PolicyNodeConfig()
    with pytest.raises(ConfigFieldError, match=r"^policy_node: topics.state='/g20/cb_left_hand_control_cmd' is the"):
        PolicyNodeConfig(onnx="x", topics=WireTopics(state="/g20/cb_left_hand_control_cmd")).topics_for("left")
    with pytest.raises(NodeError, match=r"no joint state on /sim/mujoco/g20/left/joint_state within wait_s=0.5 s"):
        run_policy_node(PolicyNodeConfig(onnx=str(onnx), domain_id=domain_for_tests(5), wait_s=0.5, loopback_only=True))


@pytest.mark.slow
def test_the_documented_commands_run_the_node_against_the_bridge(rotate_run):
    """``scripts/bridge.py object.shape=cube ...`` and ``scripts/policy_node.py onnx=...`` as two processes."""
    _, onnx = rotate_run
    domain = str(domain_for_tests(7))
    common = [f"domain_id={domain}", "loopback_only=true"]
    bridge = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "bridge.py"), "object.shape=cube", "pd_drive=true",
                               "speed=1", "headless=true", *common], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        node = subprocess.run([sys.executable, str(ROOT / "scripts" / "policy_node.py"), f"onnx={onnx}", "max_steps=20",
                               "wait_s=120", *common], cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    finally:
        bridge.terminate()
        out = bridge.communicate(timeout=60)[0]
    assert node.returncode == 0, node.stderr
    assert "policy node stopped (max_steps): 20 commands sent" in node.stdout
    assert bridge.returncode == 0, out
    assert "MuJoCo (in-hand)" in out and " 0 rejected" in out
