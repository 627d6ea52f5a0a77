"""Isaac Lab env-steps/s of a task (Solenopsis velocity by default), against MuJoCo's native vector env in the same run.

Run from either venv (the Isaac Lab half runs in .venv-isaaclab, the MuJoCo half in .venv):

python benchmarks/bench_isaaclab.py                                      # CPU: 4 and 64 envs
python benchmarks/bench_isaaclab.py --device cuda:0 --num-envs 1024 4096   # a GPU
python benchmarks/bench_isaaclab.py --task Dexwheel-HandPose-G20Left-v0       # another task (MUJOCO_TASKS)

Each size runs in its own process (Isaac Lab keeps one simulation per process): build, reset, 20 warm-up
steps, then ``--steps`` steps of uniform random actions, timed. The MuJoCo native vector env
of the same task config (``Solenopsis-v0`` for the default) steps the same number of envs on the CPU. Prints env-steps/s and
the ratio Isaac Lab / MuJoCo; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK = "Dexwheel-Velocity-Flat-Solenopsis-v0"
#: The MuJoCo native vector env of each Isaac Lab task (gym id, keyword arguments): the same task config.
MUJOCO_TASKS: dict[str, tuple[str, dict[str, str]]] = {
    "Dexwheel-Velocity-Flat-Solenopsis-v0": ("Solenopsis-v0", {}),
    "Dexwheel-Velocity-Rough-Solenopsis-v0": ("Solenopsis-Rough-v0", {}),
    "Dexwheel-HandPose-G20Left-v0": ("G20Hand-v0", {"hand": "left", "drive": "pd", "goal_mode": "presets"}),
    "Dexwheel-InHand-Rotate-G20Left-v0": ("G20Rotate-v0", {"hand": "left"}),
}
MUJOCO = """
import json, sys, time, numpy as np, gymnasium as gym, dexwheel
task, kwargs, n, steps = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
t0 = time.perf_counter()
env = gym.make_vec(task, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)
env.reset(seed=0)
build = time.perf_counter() - t0
rng = np.random.default_rng(0)
shape = env.action_space.shape
actions = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(16)]
for k in range(20):
    env.step(actions[k % 16])
t0 = time.perf_counter()
for k in range(steps):
    env.step(actions[k % 16])
print(json.dumps({"steps_per_s": n * steps / (time.perf_counter() - t0), "build_s": build}))
"""


def isaac_one(n: int, steps: int, device: str, task: str = TASK) -> dict[str, float]:
    """Build ``task`` with ``n`` envs on ``device``, step it ``steps`` times with random actions; env-steps/s."""
    import gymnasium as gym
    import torch
    from isaaclab_tasks.utils import parse_env_cfg

    import dexwheel.isaaclab.tasks  # noqa: F401

    t0 = time.perf_counter()
    env = gym.make(task, cfg=parse_env_cfg(task, device=device, num_envs=n))
    env.reset(seed=0)
    build = time.perf_counter() - t0
    generator = torch.Generator(device=device).manual_seed(0)
    dim = env.unwrapped.action_manager.total_action_dim
    actions = [torch.rand(n, dim, generator=generator, device=device) * 2 - 1 for _ in range(16)]
    for k in range(20):
        env.step(actions[k % 16])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for k in range(steps):
        env.step(actions[k % 16])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    rate = n * steps / (time.perf_counter() - t0)
    env.close()
    return {"steps_per_s": rate, "build_s": build}


def run_json(cmd: list[str], timeout: float | None = None) -> dict[str, float]:
    """The last stdout line of ``cmd`` as JSON; a failure raises with the end of its stderr."""
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def isaac_cmd(python: Path, task: str, n: int, steps: int, device: str) -> list[str]:
    """The command that runs :func:`isaac_one` in its own process (one simulation per process)."""
    return [str(python), __file__, "--one", str(n), "--steps", str(steps), "--device", device, "--task", task]


def mujoco_cmd(python: Path, task: str, n: int, steps: int) -> list[str]:
    """The command that steps the MuJoCo native vector env of the Isaac Lab ``task`` (:data:`MUJOCO_TASKS`)."""
    env_id, kwargs = MUJOCO_TASKS[task]
    return [str(python), "-c", MUJOCO, env_id, json.dumps(kwargs), str(n), str(steps)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[4, 64])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--task", default=TASK, choices=sorted(MUJOCO_TASKS))
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: one size in this process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(isaac_one(args.one, args.steps, args.device, args.task)))
        return
    isaac_python = ROOT / ".venv-isaaclab" / "bin" / "python"
    if not isaac_python.exists():
        print(f"bench_isaaclab: skipped, no {isaac_python} (make isaaclab-venv)")
        return
    mujoco_python = Path(os.environ.get("DEXWHEEL_MUJOCO_PYTHON", ROOT / ".venv" / "bin" / "python"))
    print(f"{args.task}, {args.steps} steps of random actions; Isaac Lab on {args.device}")
    for n in args.num_envs:
        isaac = run_json(isaac_cmd(isaac_python, args.task, n, args.steps, args.device))
        mujoco = run_json(mujoco_cmd(mujoco_python, args.task, n, args.steps))
        print(f"N = {n:5d}: Isaac Lab {isaac['steps_per_s']:9.0f} env-steps/s (built in {isaac['build_s']:.1f} s), "
              f"MuJoCo native vector env {mujoco['steps_per_s']:9.0f} env-steps/s: ratio {isaac['steps_per_s'] / mujoco['steps_per_s']:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
