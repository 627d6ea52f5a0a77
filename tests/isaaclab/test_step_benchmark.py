"""The step benchmark on Isaac Lab (dexwheel/isaaclab/step_benchmark.py): the MuJoCo runner's protocol, scenes and
judge, every trial of a scene at once; and ``scripts/evaluate.py benchmark=steps backend=isaaclab`` from the core venv.

A tiny protocol with a constant policy (knees at the stance, wheels forward at half speed) on both backends: the
MuJoCo half runs in the core venv (mujoco 4), the Isaac Lab half here. Two scenes, two Isaac Lab envs built here
and one by the command (about 20 s each on 2 CPU cores).
"""

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from dexwheel.isaaclab.cross_backend import MUJOCO_PYTHON, REPO
from dexwheel.protocols import steps
from dexwheel.tasks.velocity.terrain import ground_under

#: two heights, both directions, two trials each, 4 s (tests/rl/test_step_benchmark.py's TINY, and down too)
TINY = {"heights": [0.05, 0.15], "directions": ["up", "down"], "trials": 2, "stairs": False, "time_limit_s": 4.0}
WHEELS = -0.5  # every wheel's action: forward at half speed; the knees at the stance (0)
CONFIG = ["robot=solenopsis", "task=velocity_rough"]
MUJOCO_HALF = """
import json, sys
sys.path.insert(0, "tests")
import numpy as np
from cfgutil import compose_cfg
from omegaconf import OmegaConf
from dexwheel.protocols import steps
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.step_benchmark import benchmark_env_kwargs, run_step_benchmark
config, protocol, wheels = json.loads(sys.argv[1])
cfg, bench = compose_cfg("evaluate", *config), steps.make_cfg(protocol)

def policy_for(env):
    action = np.zeros(env.action_space.shape, np.float32)
    action[4:] = wheels
    return lambda obs: action

result = run_step_benchmark(lambda desc: make_env(cfg, terrain=desc, **benchmark_env_kwargs(bench)), policy_for, bench)
print(json.dumps({"config": OmegaConf.to_container(cfg, resolve=True), "result": result}))
"""


@pytest.fixture(scope="module")
def mujoco():
    if not MUJOCO_PYTHON.exists():
        pytest.skip(f"the MuJoCo half needs the core venv's python at {MUJOCO_PYTHON}")
    proc = subprocess.run([str(MUJOCO_PYTHON), "-c", MUJOCO_HALF, json.dumps([CONFIG, TINY, WHEELS])], cwd=REPO,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def isaac(mujoco, isaac_device):
    """The Isaac Lab runner on the MuJoCo half's resolved config; each scene's first policy call records where the
    trials start (the bases, headings, commands and height scans after the placement)."""
    from omegaconf import OmegaConf

    from dexwheel.isaaclab.step_benchmark import run_step_benchmark

    starts = []

    def policy_for(venv):
        u = venv.unwrapped

        def act(obs):
            if not recorded:  # the scene's first step: right after the trials were placed
                data = u.scene["robot"].data
                recorded.append({"pos": data.root_link_pos_w.torch.cpu().numpy().astype(np.float64),
                                 "quat": data.root_link_quat_w.torch.cpu().numpy().astype(np.float64),
                                 "command": u.command_manager.get_command("base_velocity").cpu().numpy().copy(),
                                 "scan": obs["policy"][:, 28:].cpu().numpy().copy()})  # fmt: skip
            action = torch.zeros(obs.batch_size[0], 8, device=isaac_device)
            action[:, 4:] = WHEELS
            return action

        recorded = []
        starts.append(recorded)
        return act

    bench = steps.make_cfg(TINY)
    cfg = OmegaConf.create(mujoco["config"])
    return run_step_benchmark(cfg, policy_for, bench, isaac_device), [r[0] for r in starts], bench


def test_the_trials_start_on_the_scenes_ground_at_their_poses(isaac):
    _, starts, bench = isaac
    assert len(starts) == 2  # one env per scene, its trials all at once
    for scene, start in zip(steps.scenes(bench), starts, strict=True):
        specs = [t for d in bench.directions for t in steps.trials(scene, d, bench)]
        xy = np.array([(s.x, s.y) for s in specs])
        np.testing.assert_allclose(start["pos"][:, :2], xy, atol=1e-5)
        ground = np.array([ground_under(scene.description, s.x, s.y) for s in specs])
        assert np.allclose(ground, [0.0, 0.0, scene.height, scene.height])  # up from the low side, down the high
        assert np.all((start["pos"][:, 2] - ground > 0.25) & (start["pos"][:, 2] - ground < 0.31))  # standing
        q = start["quat"]  # x, y, z, w: level, turned to the trial's heading
        assert np.allclose(q[:, :2], 0.0, atol=1e-6)
        yaw = np.arctan2(2 * q[:, 3] * q[:, 2], 1 - 2 * q[:, 2] ** 2)
        assert np.allclose(np.angle(np.exp(1j * (yaw - [s.yaw for s in specs]))), 0.0, atol=1e-5)
        np.testing.assert_allclose(start["command"], [[0.5, 0.0, 0.0]] * 4)  # held, no standing env
        assert np.ptp(start["scan"], axis=1).max() < 0.01  # 1.5 m from the edge the scan sees flat ground


def test_a_tiny_run_gives_the_mujoco_outcomes(isaac, mujoco):
    result, _, _ = isaac
    isaac_letters, mujoco_letters = result["outcomes"], mujoco["result"]["outcomes"]
    for name, rows in (("MuJoCo", mujoco["result"]["rows"]), ("Isaac Lab", result["rows"])):
        print(f"\n{steps.format_table(rows, name)}")
    assert list(isaac_letters) == list(mujoco_letters) == ["step 0.050 up", "step 0.050 down", "step 0.150 up",
                                                            "step 0.150 down"]  # fmt: skip
    for letters in (isaac_letters, mujoco_letters):
        # momentum takes it up 0.05 m, and down either step; a 0.15 m step (1.5 wheel radii) stops it, and it tips
        # over trying (which trials tip within 4 s depends on the start-pose noise on either backend)
        assert letters["step 0.050 up"] == letters["step 0.050 down"] == letters["step 0.150 down"] == "SS"
        assert "S" not in letters["step 0.150 up"] and "F" in letters["step 0.150 up"]
    for ours, theirs in zip(result["rows"], mujoco["result"]["rows"], strict=True):
        assert {k: v for k, v in ours.items() if k not in ("falls", "timeouts", "mean_success_time_s")} == {
            k: v for k, v in theirs.items() if k not in ("falls", "timeouts", "mean_success_time_s")}  # fmt: skip
        if theirs["mean_success_time_s"] is not None:  # the same drive: the same time to the line, within 0.1 s
            assert ours["mean_success_time_s"] == pytest.approx(theirs["mean_success_time_s"], abs=0.1)


def test_evaluate_runs_it_on_isaaclab_and_writes_its_json(tmp_path, isaac_device):
    """The user's command from the core venv: the table, the JSON named and marked isaaclab; bad input refused
    before Isaac Lab starts."""
    args = [*CONFIG, "policy=zero", "benchmark=steps", "backend=isaaclab", f"train.device={isaac_device}",
            "steps.trials=1", "steps.heights=[0.05]", "steps.directions=[up]", "steps.stairs=false",
            "steps.time_limit_s=0.5"]  # fmt: skip
    done = subprocess.run([str(MUJOCO_PYTHON), str(REPO / "scripts" / "evaluate.py"), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "step benchmark: solenopsis" in done.stdout and "step benchmark: step 0.050 up: T" in done.stdout
    # the typed protocol (steps.*, but its trials) names the file too
    name = "steps_zero_solenopsis_isaaclab_seed20000_tr1_task-velocity_rough+steps.heights-0.05+s-36b6916ce9"
    saved = json.loads((tmp_path / "outputs" / "eval" / f"{name}.json").read_text())
    assert saved["backend"] == "isaaclab" and saved["benchmark"] == "steps" and saved["protocol"]["trials"] == 1
    assert saved["results"]["solenopsis"]["outcomes"] == {"step 0.050 up": "T"}  # the zero policy stands there
    [row] = saved["results"]["solenopsis"]["rows"]
    assert (row["scene"], row["height"], row["direction"], row["timeouts"]) == ("step", 0.05, "up", 1)
    bad = subprocess.run([str(MUJOCO_PYTHON), str(REPO / "scripts" / "evaluate.py"), *args, "steps.heights=[1.5]"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1] == (
        "error: steps.heights: 1.5 m is outside the terrain's range: 0 < height <= 1 m")  # fmt: skip
    assert f"plot: outputs/eval/{name}.png" in done.stdout  # the table drawn, beside its JSON
    assert sorted(p.name for p in (tmp_path / "outputs" / "eval").iterdir()) == [f"{name}.json", f"{name}.png"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:dash"]))
