"""Isaac Lab env-steps/s of the Solenopsis velocity task, against MuJoCo's native vector env in the same run.

Run from either venv (the Isaac Lab half runs in .venv-isaaclab, the MuJoCo half in .venv):

python benchmarks/bench_isaaclab.py                                      # CPU: 4 and 64 envs
python benchmarks/bench_isaaclab.py --device cuda:0 --num-envs 1024 4096   # a GPU

Each size runs in its own process (Isaac Lab keeps one simulation per process): build, reset, 20 warm-up
steps, then ``--steps`` steps of uniform random actions, timed. The MuJoCo native vector env
(``Solenopsis-v0``, the same task config) steps the same number of envs on the CPU. Prints env-steps/s and
the ratio Isaac Lab / MuJoCo; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK = "Dexwheel-Velocity-Flat-Solenopsis-v0"
MUJOCO = """
import json, sys, time, numpy as np, gymnasium as gym, dexwheel
n, steps = int(sys.argv[1]), int(sys.argv[2])
env = gym.make_vec("Solenopsis-v0", num_envs=n, vectorization_mode="vector_entry_point")
env.reset(seed=0)
rng = np.random.default_rng(0)
actions = [rng.uniform(-1, 1, (n, 8)).astype(np.float32) for _ in range(16)]
for k in range(20):
    env.step(actions[k % 16])
t0 = time.perf_counter()
for k in range(steps):
    env.step(actions[k % 16])
print(json.dumps({"steps_per_s": n * steps / (time.perf_counter() - t0)}))
"""


def isaac_one(n: int, steps: int, device: str) -> dict[str, float]:
    import gymnasium as gym
    import torch
    from isaaclab_tasks.utils import parse_env_cfg

    import dexwheel.isaaclab.tasks  # noqa: F401

    t0 = time.perf_counter()
    env = gym.make(TASK, cfg=parse_env_cfg(TASK, device=device, num_envs=n))
    env.reset(seed=0)
    build = time.perf_counter() - t0
    generator = torch.Generator(device=device).manual_seed(0)
    actions = [torch.rand(n, 8, generator=generator, device=device) * 2 - 1 for _ in range(16)]
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


def run_json(cmd: list[str]) -> dict[str, float]:
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[4, 64])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: one size in this process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(isaac_one(args.one, args.steps, args.device)))
        return
    isaac_python = ROOT / ".venv-isaaclab" / "bin" / "python"
    if not isaac_python.exists():
        print(f"bench_isaaclab: skipped, no {isaac_python} (make isaaclab-venv)")
        return
    print(f"Solenopsis velocity task, {args.steps} steps of random actions; Isaac Lab on {args.device}")
    for n in args.num_envs:
        cmd = [str(isaac_python), __file__, "--one", str(n), "--steps", str(args.steps), "--device", args.device]
        isaac = run_json(cmd)
        mujoco = run_json([str(ROOT / ".venv" / "bin" / "python"), "-c", MUJOCO, str(n), str(args.steps)])
        print(f"N = {n:5d}: Isaac Lab {isaac['steps_per_s']:9.0f} env-steps/s (built in {isaac['build_s']:.1f} s), "
              f"MuJoCo native vector env {mujoco['steps_per_s']:9.0f} env-steps/s: ratio {isaac['steps_per_s'] / mujoco['steps_per_s']:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
