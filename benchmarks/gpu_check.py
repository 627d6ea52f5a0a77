"""The one prepared GPU check of the Isaac Lab backend: tests, env-steps/s, training rate and three short trainings.

A GPU lease is short (15 minutes, every try counted), so everything it should record runs from one command that
stays under 9.5 minutes, each step capped, a failed step recorded with its error while the next one runs::

    python benchmarks/gpu_check.py                      # --device cuda:0: the check itself (about 9 minutes)
    python benchmarks/gpu_check.py --smoke              # the same pipeline on the CPU, tiny sizes (a few minutes)
    python benchmarks/gpu_check.py --only train_flat train_rough --train-s 120   # two 2-minute trainings

Steps (docs/how-to/gpu.md#the-gpu-check): ``tests`` runs tests/isaaclab on the device (``DEXWHEEL_ISAAC_DEVICE``);
``step_rate`` steps each task at each size in its own process (:func:`bench_isaaclab.isaac_one`) against the
MuJoCo native vector env of the same task on the CPU; ``train_rate`` runs a few rsl_rl iterations through
``scripts/train.py ... backend=isaaclab``; ``train_flat`` / ``train_rough`` / ``train_rotate`` (the G20 in-hand
rotation, whose step rate is measured at 4096 and 8192 envs) train for ``--train-s`` seconds' worth of iterations
(from the measured training rate; rough's and rotation's scaled by ``step_rate``'s task / flat ratio) and record
the final evaluation's tracking errors and terrain level, or rotation rate and drops. A training whose rate steps
are not run (``--only`` without ``train_rate``, or rough or rotation without ``step_rate``) first measures its own task's rate with a
``train_rate``-sized run. Results go to ``benchmarks/results/gpu_check-<UTC time>[-smoke].json`` and ``.md``
(written after every step, through a temporary file and a rename; a new name per run). Runs from either venv:
nothing here imports torch, the Isaac Lab work runs in ``.venv-isaaclab``, the MuJoCo work in
``DEXWHEEL_MUJOCO_PYTHON`` (default ``.venv``). ``--smoke`` runs its own fixed plan, so ``--device``,
``--train-s`` and ``--budget-s`` are refused with it. A GPU machine that cannot install packages gets both venvs
from ``benchmarks/gpu_bundle.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_isaaclab import ROOT, isaac_cmd, mujoco_cmd, run_json  # noqa: E402

sys.path.insert(0, str(ROOT))
from dexwheel import warp_cache  # noqa: E402
from dexwheel.atomic import write_atomic  # noqa: E402

ISAAC_PYTHON = ROOT / ".venv-isaaclab" / "bin" / "python"
MUJOCO_PYTHON = Path(os.environ.get("DEXWHEEL_MUJOCO_PYTHON", ROOT / ".venv" / "bin" / "python"))
RESULTS = ROOT / "benchmarks" / "results"
FLAT = "Dexwheel-Velocity-Flat-Solenopsis-v0"
G20 = "Dexwheel-HandPose-G20Left-v0"
ROUGH = "Dexwheel-Velocity-Rough-Solenopsis-v0"
ROTATE = "Dexwheel-InHand-Rotate-G20Left-v0"
STEPS = ("tests", "step_rate", "train_rate", "train_flat", "train_rough", "train_rotate")
#: the steps that train for ``--train-s``
TIMED_TRAININGS = ("train_flat", "train_rough", "train_rotate")
#: the GPU check's defaults (``--smoke`` has its own plan and takes none of them)
DEVICE, TRAIN_S, BUDGET_S = "cuda:0", 60.0, 560.0
#: the scripts/train.py selections of each trained task
TRAIN_TASKS = {
    FLAT: ["robot=solenopsis"],
    ROUGH: ["robot=solenopsis", "task=velocity_rough"],
    ROTATE: ["robot=g20_left", "task=in_hand_rotate"],
}
#: each trained task's Hydra task (its rollout length per env, :func:`steps_per_env`)
HYDRA_TASK = {FLAT: "velocity", ROUGH: "velocity_rough", ROTATE: "in_hand_rotate"}
#: a step with less than this left of the whole budget is skipped rather than started
MIN_STEP_S = 20.0
#: a training's start (both venvs, the env), final evaluation and exit, beyond its iterations (cap = train_s + it)
TRAIN_OVERHEAD_S = 50.0
PROBE = """
import json, torch
cuda = torch.cuda.is_available()
print(json.dumps({"torch": torch.__version__, "cuda_available": cuda, "cuda": torch.version.cuda,
                  "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if cuda else []}))
"""
TB_SCALARS = """
import json, sys
from pathlib import Path
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
out = {}
for events in sorted(Path(sys.argv[1]).rglob("events.out.tfevents*")):
    acc = EventAccumulator(str(events), size_guidance={"scalars": 0}).Reload()
    for tag in acc.Tags()["scalars"]:
        if tag == "Perf/total_fps" or tag.startswith("Curriculum/terrain_level"):
            out.setdefault(tag, []).extend([e.step, e.value] for e in acc.Scalars(tag))
print(json.dumps(out))
"""


@dataclass
class Plan:
    """Sizes and time caps (seconds) of one run: the GPU check's, or the CPU smoke run's."""

    device: str
    test_paths: list[str]
    tests_cap: float
    #: pytest-xdist processes of the tests step (one test file each at a time; 1: pytest alone)
    test_workers: int
    tasks: list[str]
    isaac_envs: list[int]
    #: a task's own sizes instead of ``isaac_envs`` (the rotation task: 4096 and 8192, the LEAP hand's)
    task_envs: dict[str, list[int]]
    mujoco_envs: list[int]
    isaac_steps: int
    mujoco_steps: int
    step_rate_cap: float
    step_process_cap: float
    train_envs: int
    rate_iterations: int
    train_rate_cap: float
    train_s: float
    train_flat_cap: float
    train_rough_cap: float
    train_rotate_cap: float
    eval_episodes: int
    #: iterations of a training whose rate could not be measured (the training rate step failed)
    fallback_iterations: int
    budget_s: float
    #: overrides added to each training run; ``{task}`` stands for its Hydra task name (``task.{task}.*`` keys)
    extra_overrides: list[str] = field(default_factory=list)


def gpu_plan(device: str, train_s: float, budget_s: float) -> Plan:
    """The check the issues ask for, capped to fit ``budget_s`` (9.3 minutes by default) on one H200."""
    return Plan(device=device, test_paths=["tests/isaaclab"], tests_cap=80, test_workers=xdist_workers(),
                tasks=[FLAT, G20, ROUGH, ROTATE], isaac_envs=[1024, 4096, 16384], task_envs={ROTATE: [4096, 8192]},
                mujoco_envs=[128, 1024], isaac_steps=100, mujoco_steps=30, step_rate_cap=170, step_process_cap=60,
                train_envs=4096, rate_iterations=5, train_rate_cap=50, train_s=train_s,
                train_flat_cap=train_s + TRAIN_OVERHEAD_S, train_rough_cap=train_s + TRAIN_OVERHEAD_S,
                train_rotate_cap=train_s + TRAIN_OVERHEAD_S, eval_episodes=16, fallback_iterations=20,
                budget_s=budget_s)  # fmt: skip


def smoke_plan() -> Plan:
    """The same pipeline on the CPU at tiny sizes, so that the script itself is tested without a GPU."""
    return Plan(device="cpu", test_paths=["tests/isaaclab/test_usd.py"], tests_cap=120, test_workers=2,
                tasks=[FLAT, G20, ROUGH, ROTATE], isaac_envs=[4], task_envs={}, mujoco_envs=[4], isaac_steps=10,
                mujoco_steps=10, step_rate_cap=300, step_process_cap=120, train_envs=4, rate_iterations=1,
                train_rate_cap=180, train_s=1.0, train_flat_cap=180, train_rough_cap=240, train_rotate_cap=180,
                eval_episodes=2, fallback_iterations=1, budget_s=1400,
                extra_overrides=["task.{task}.episode_length_s=0.5"])  # fmt: skip


def xdist_workers(cpus: int | None = None) -> int:
    """The tests step's processes: half the machine's CPUs, at most 8 (an H200 machine's 16 cores: 8). The Isaac
    Lab tests take about 8 minutes one after the other here, so within the step's cap most would not run."""
    return max(1, min(8, (cpus or os.cpu_count() or 2) // 2))


def run_capped(cmd: list[str], cap: float, env: dict[str, str] | None = None) -> tuple[int | None, str]:
    """Run ``cmd`` in its own process group for at most ``cap`` seconds; (exit code or None on timeout, output).

    Its own group, so that a capped ``scripts/train.py`` takes its Isaac Lab child (and the GPU memory) with it.
    """
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)  # fmt: skip
        try:
            code: int | None = proc.wait(timeout=cap)
        except subprocess.TimeoutExpired:
            code = None
            for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
                try:
                    os.killpg(proc.pid, sig)
                    proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
                except ProcessLookupError:
                    break
        out.seek(0)
        return code, out.read()


def child_env(device: str) -> dict[str, str]:
    """The environment of every child: the Isaac tests' device, the MuJoCo python, the shared warp cache."""
    env = dict(os.environ)
    env.update(DEXWHEEL_ISAAC_DEVICE=device, DEXWHEEL_MUJOCO_PYTHON=str(MUJOCO_PYTHON), PYTHONUNBUFFERED="1")
    return warp_cache.with_cache(env)


def probe() -> dict[str, Any]:
    """What the Isaac Lab venv's torch sees (version, CUDA, the GPU's name)."""
    return run_json([str(ISAAC_PYTHON), "-c", PROBE], timeout=120)  # type: ignore[return-value]


def parse_pytest(output: str) -> dict[str, Any]:
    """Counts of a ``pytest -v`` output, pytest's own or pytest-xdist's (``[gw0] [ 20%] PASSED <test>``), complete
    or cut off by the cap (then ``not_run`` says how many)."""
    kinds = "PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS"
    outcomes = re.findall(rf"^(\S+::\S.*?) ({kinds})\b", output, re.M)
    outcomes += [(test, outcome) for outcome, test in re.findall(rf"^\[gw\d+\] \[ *\d+%\] ({kinds}) (\S+::\S.*?)\s*$",
                                                                  output, re.M)]  # fmt: skip
    counts = {k.lower(): 0 for k in kinds.split("|")}
    for _, outcome in outcomes:
        counts[outcome.lower()] += 1
    collected = re.search(r"collected (\d+) items?", output) or re.search(r"\d+ workers? \[(\d+) items?\]", output)
    n = int(collected.group(1)) if collected else None
    tests = {test for test, _ in outcomes}  # a test with a teardown error is listed twice
    return {**counts, "collected": n, "not_run": None if n is None else max(0, n - len(tests)),
            "failures": [f"{t} {o}" for t, o in outcomes if o in ("FAILED", "ERROR")][:40]}  # fmt: skip


def step_tests(plan: Plan, rec: dict[str, Any], cap: float) -> None:
    """tests/isaaclab (or the smoke run's file) on the device, as ``make isaaclab-test`` runs them."""
    cmd = [str(ISAAC_PYTHON), "-m", "pytest", "-v", "-p", "no:dash", "-p", "no:cacheprovider", *plan.test_paths]
    if plan.test_workers > 1:  # a file's tests share its module fixtures (the built envs): one process per file
        cmd += ["-n", str(plan.test_workers), "--dist", "loadfile"]
    code, output = run_capped(cmd, cap, child_env(plan.device))
    rec.update(parse_pytest(output), exit_code=code, timed_out=code is None, paths=plan.test_paths,
               workers=plan.test_workers)  # fmt: skip
    if code is None:
        raise TimeoutError(f"tests cut off at the {cap:.0f} s cap; {rec['not_run']} not run")
    if code != 0:
        rec["output_tail"] = output[-3000:]
        raise RuntimeError(f"pytest exit {code}: {rec['failed']} failed, {rec['error']} errors")


def step_rate(plan: Plan, rec: dict[str, Any], cap: float) -> None:
    """Env-steps/s, step only: each task and size in its own Isaac Lab process; the MuJoCo native vector env of
    the same task alongside on other cores (it runs on the CPU, the Isaac Lab processes mostly on the GPU)."""
    deadline = time.monotonic() + cap
    rows: list[dict[str, Any]] = rec.setdefault("rows", [])

    def one(backend: str, task: str, n: int, cmd: list[str], steps: int) -> None:
        row: dict[str, Any] = {"task": task, "backend": backend, "num_envs": n, "steps": steps,
                               "device": plan.device if backend == "isaaclab" else "cpu"}  # fmt: skip
        rows.append(row)
        left = min(plan.step_process_cap, deadline - time.monotonic())
        if left < 5:
            row["error"] = "skipped: the step's time cap was reached"
            return
        t0 = time.monotonic()
        try:
            row.update(run_json(cmd, timeout=left))
            extra = f"{row['steps_per_s']:.0f} env-steps/s (built in {row['build_s']:.1f} s)"
        except Exception as e:  # noqa: BLE001 - recorded, and the next size runs
            row["error"] = f"{type(e).__name__}: {e}"[-2000:]
            extra = row["error"].splitlines()[-1][:200]
        row["seconds"] = round(time.monotonic() - t0, 1)
        print(f"gpu_check:   step_rate {backend:8s} {task} N={n}: {extra}", flush=True)

    def mujoco_side() -> None:
        for task in plan.tasks:
            for n in plan.mujoco_envs:
                one("mujoco", task, n, mujoco_cmd(MUJOCO_PYTHON, task, n, plan.mujoco_steps), plan.mujoco_steps)

    with ThreadPoolExecutor(1) as pool:
        mujoco = pool.submit(mujoco_side)
        sizes = sorted({n for task in plan.tasks for n in plan.task_envs.get(task, plan.isaac_envs)})
        for n in sizes:  # every task at the small sizes before any at the largest
            for task in (t for t in plan.tasks if n in plan.task_envs.get(t, plan.isaac_envs)):
                one("isaaclab", task, n, isaac_cmd(ISAAC_PYTHON, task, n, plan.isaac_steps, plan.device),
                    plan.isaac_steps)  # fmt: skip
        mujoco.result()
    failed = [r for r in rows if "error" in r]
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(rows)} measurements failed or were skipped")


def steps_per_env(task: str = "velocity") -> int:
    """A Hydra task's rollout length per env (its registry record's ``train.steps_per_env``; an iteration is num_envs
    times it)."""
    from dexwheel.tasks.registry import task_record

    return int(task_record(task).train.steps_per_env)


def tb_scalars(run_dir: Path) -> dict[str, list[list[float]]]:
    """``Perf/total_fps`` and ``Curriculum/terrain_level*`` of a run's TensorBoard files, as [step, value] lists."""
    return run_json([str(ISAAC_PYTHON), "-c", TB_SCALARS, str(run_dir)], timeout=120)  # type: ignore[return-value]


def find_metric(tree: Any, key: str) -> float | None:
    """``key``'s value anywhere in an evaluation summary (flat, or per task)."""
    if isinstance(tree, dict):
        if key in tree and isinstance(tree[key], (int, float)):
            return float(tree[key])
        for value in tree.values():
            found = find_metric(value, key)
            if found is not None:
                return found
    return None


def train(plan: Plan, task: str, iterations: int, run_dir: Path, cap: float, rec: dict[str, Any]) -> None:
    """``iterations`` rsl_rl iterations of ``task`` through ``scripts/train.py ... backend=isaaclab``, one final
    evaluation of ``plan.eval_episodes`` episodes; the training rate, the evaluation and the terrain level."""
    total = iterations * plan.train_envs * steps_per_env(HYDRA_TASK[task])
    args = [*TRAIN_TASKS[task], "backend=isaaclab", "algo=rsl_ppo", f"train.num_envs={plan.train_envs}",
            f"train.device={plan.device}", f"train.total_timesteps={total}", f"train.eval_every_steps={total + 1}",
            f"train.checkpoint_every_steps={total + 1}", f"train.eval_episodes={plan.eval_episodes}",
            *(o.format(task=HYDRA_TASK[task]) for o in plan.extra_overrides), f"hydra.run.dir={run_dir}"]  # fmt: skip
    rec.update(task=task, num_envs=plan.train_envs, iterations=iterations, total_timesteps=total,
               command="python scripts/train.py " + " ".join(args[:-1]))  # fmt: skip
    t0 = time.monotonic()
    code, output = run_capped([str(MUJOCO_PYTHON), str(ROOT / "scripts" / "train.py"), *args], cap,
                              child_env(plan.device))  # fmt: skip
    rec["wall_s"] = round(time.monotonic() - t0, 1)
    log = (run_dir / "train.log").read_text() if (run_dir / "train.log").exists() else ""
    progress = [float(v) for v in re.findall(r"progress step=\d+ env_steps_per_s=([\d.]+)", log)]
    if progress:
        rec["progress_env_steps_per_s"] = progress
    done = re.search(r"done step=(\d+) wall_s=([\d.]+)", log)
    if done:
        rec["trained_steps"], rec["train_wall_s"] = int(done.group(1)), float(done.group(2))
    if (run_dir / "tb").exists():
        scalars = tb_scalars(run_dir)
        fps = [v for _, v in scalars.get("Perf/total_fps", [])]
        if fps:
            rec["total_fps"] = fps  # rsl_rl's per iteration: collection and learning
            later = fps[1:] or fps  # the first iteration also captures the CUDA graphs
            rec["env_steps_per_s"] = sum(later) / len(later)
        for tag, values in scalars.items():
            if tag.startswith("Curriculum/terrain_level") and values:
                rec["terrain_level_tag"] = tag
                rec["terrain_level"] = values[-1][1]
                rec["terrain_level_max"] = max(v for _, v in values)
    final = run_dir / "final_eval.json"
    if final.exists():
        summary = json.loads(final.read_text())
        for key in (
            "lin_vel_x_error",
            "ang_vel_z_error",
            "fall",
            "out_of_bounds",
            "rotation_rate",
            "drop",
            "length",
            "return",
        ):
            value = find_metric(summary, key)
            if value is not None:
                rec[f"eval_{key}"] = value
        rec["eval_episodes"] = plan.eval_episodes
    if code is None:
        raise TimeoutError(f"training cut off at the {cap:.0f} s cap")
    if code != 0:
        rec["output_tail"] = output[-3000:]
        raise RuntimeError(f"scripts/train.py exit {code}: {output.strip().splitlines()[-1][:300] if output else ''}")


@dataclass
class Check:
    """One run of the check: its plan, where it writes, and what it recorded so far."""

    plan: Plan
    json_path: Path
    work: Path
    t0: float = field(default_factory=time.monotonic)
    result: dict[str, Any] = field(default_factory=dict)
    #: the CUDA binaries in warp's cache after the last step: what a step adds, it compiled (a cold cache's cost)
    cuda_binaries: set[str] = field(default_factory=set)
    #: the same for the CPU modules (never carried: built for the host's CPU; the tests that run on the CPU)
    cpu_objects: set[str] = field(default_factory=set)

    def save(self) -> None:
        """The JSON and the Markdown table as they stand, each through a temporary file and a rename."""
        self.result["elapsed_s"] = round(time.monotonic() - self.t0, 1)
        write_atomic(self.json_path, json.dumps(self.result, indent=1, default=str) + "\n")
        write_atomic(self.json_path.with_suffix(".md"), markdown(self.result))

    def left(self) -> float:
        return self.plan.budget_s - (time.monotonic() - self.t0)

    def step(self, name: str, cap: float, fn: Callable[[dict[str, Any], float], None]) -> dict[str, Any]:
        """Run one step within ``cap`` (and what is left of the budget); an error is recorded, not raised."""
        rec: dict[str, Any] = {}
        self.result["steps"][name] = rec
        cap = min(cap, self.left())
        if cap < MIN_STEP_S:
            rec.update(ok=False, error=f"skipped: {self.left():.0f} s left of the {self.plan.budget_s:.0f} s budget")
            print(f"gpu_check: {name}: {rec['error']}", flush=True)
            self.save()
            return rec
        print(f"gpu_check: {name}: started (cap {cap:.0f} s, {self.left():.0f} s left)", flush=True)
        t0 = time.monotonic()
        try:
            fn(rec, cap)
            rec["ok"] = True
        except Exception as e:  # noqa: BLE001 - the next step runs; the JSON says what failed
            rec.update(ok=False, error=f"{type(e).__name__}: {e}"[-2000:])
        rec["seconds"] = round(time.monotonic() - t0, 1)
        root = Path(self.result["warp_cache"]["dir"])
        cuda, cpu = warp_cache.cuda_binaries(root), warp_cache.cpu_objects(root)
        rec["warp_cuda_compiled"] = len(cuda - self.cuda_binaries)
        rec["warp_cpu_compiled"] = len(cpu - self.cpu_objects)
        self.cuda_binaries, self.cpu_objects = cuda, cpu
        status = "ok" if rec["ok"] else f"FAILED ({rec['error'].splitlines()[0][:300]})"
        print(f"gpu_check: {name}: {status} in {rec['seconds']:.0f} s", flush=True)
        self.save()
        return rec


def new_result_path(out_dir: Path, smoke: bool) -> Path:
    """``gpu_check-<UTC time>[-smoke][-k].json``: a name no earlier run took, so nothing is overwritten."""
    stem = f"gpu_check-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S')}{'-smoke' if smoke else ''}"
    path, k = out_dir / f"{stem}.json", 1
    while path.exists() or path.with_suffix(".md").exists():
        k += 1
        path = out_dir / f"{stem}-{k}.json"
    return path


def _fmt(value: Any, spec: str) -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def markdown(result: dict[str, Any]) -> str:
    """The short table of a result (its JSON has everything)."""
    steps = result.get("steps", {})
    gpu = ", ".join(result.get("probe", {}).get("devices", [])) or "no CUDA device"
    lines = [f"# GPU check {result['started']}", "",
             f"`{result['command']}` on {result['host']} ({result['device']}; {gpu}), commit {result.get('commit')}, "
             f"{result.get('elapsed_s', 0):.0f} s; warp's cache held "
             f"{result.get('warp_cache', {}).get('cuda_binaries_at_start', '?')} CUDA binaries (PTX, CUBIN) at the start.",
             "", "| step | ok | seconds | warp modules compiled, CUDA / CPU | error |",
             "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for name in STEPS:
        rec = steps.get(name)
        if rec is not None:
            error = str(rec.get("error", "")).splitlines()[0][:160] if rec.get("error") else ""
            lines.append(
                f"| {name} | {'yes' if rec.get('ok') else 'no'} | {_fmt(rec.get('seconds'), '.0f')} | "
                f"{rec.get('warp_cuda_compiled', '-')} / {rec.get('warp_cpu_compiled', '-')} | {error} |"
            )
    tests = steps.get("tests")
    if tests and "passed" in tests:
        lines += ["", f"Tests ({' '.join(tests['paths'])}): {tests['passed']} passed, {tests['failed']} failed, "
                  f"{tests['error']} errors, {tests['skipped']} skipped, {tests['not_run']} not run "
                  f"of {tests['collected']} collected."]  # fmt: skip
    rows = steps.get("step_rate", {}).get("rows", [])
    if rows:
        lines += [
            "",
            "| task | backend | device | envs | env-steps/s | build s |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for r in rows:
            rate = _fmt(r.get("steps_per_s"), ",.0f") if "error" not in r else "failed"
            lines.append(f"| {r['task']} | {r['backend']} | {r['device']} | {r['num_envs']} | {rate} | "
                         f"{_fmt(r.get('build_s'), '.1f')} |")  # fmt: skip
    trained = [(n, steps[n]) for n in ("train_rate", *TIMED_TRAININGS) if n in steps and "task" in steps[n]]
    if trained:
        lines += ["", "| training | task | envs | steps | env-steps/s | lin_vel_x_error | ang_vel_z_error | terrain level "
                  "| rotation rad/s | drops |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
        for name, r in trained:
            lines.append(f"| {name} | {r['task']} | {r['num_envs']} | {r.get('trained_steps', '-')} | "
                         f"{_fmt(r.get('env_steps_per_s'), ',.0f')} | {_fmt(r.get('eval_lin_vel_x_error'), '.3f')} | "
                         f"{_fmt(r.get('eval_ang_vel_z_error'), '.3f')} | {_fmt(r.get('terrain_level'), '.2f')} | "
                         f"{_fmt(r.get('eval_rotation_rate'), '.3f')} | {_fmt(r.get('eval_drop'), '.2f')} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def git_commit() -> str | None:
    """The checked-out commit (``+dirty`` with local changes); None outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                               text=True)  # fmt: skip
    except OSError:
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def iterations_for(
    seconds: float, rate: float | None, plan: Plan, task: str = FLAT, source: str = "measured"
) -> tuple[int, str]:
    """rsl_rl iterations that take about ``seconds`` at ``rate`` env-steps/s (from ``source``), else the fallback."""
    if not rate:
        return plan.fallback_iterations, "fallback: no measured training rate"
    per_iteration = plan.train_envs * steps_per_env(HYDRA_TASK[task])
    return max(1, round(seconds * rate / per_iteration)), f"{seconds:.0f} s at {rate:.0f}/s ({source})"


def refusal(args: argparse.Namespace) -> str | None:
    """Why the typed options cannot run as typed (``<option>: ...``), or None; checked before any work."""
    typed = {"--device": args.device, "--train-s": args.train_s, "--budget-s": args.budget_s}
    if args.smoke:  # its plan is fixed: these would be recorded in the command and silently not applied
        smoke = smoke_plan()
        for option in (o for o, value in typed.items() if value is not None):
            return (f"{option}: --smoke runs its own plan (cpu, {smoke.train_s:g} s trainings, a {smoke.budget_s:g} s "
                    f"budget); leave {option} out, or run without --smoke")  # fmt: skip
    if args.device is not None and not re.fullmatch(r"cpu|cuda(:\d+)?", args.device):
        return f"--device: {args.device!r} is not a torch device; use cpu, cuda or cuda:<index>"
    for option in ("--train-s", "--budget-s"):
        value = typed[option]
        if value is not None and not (0 < value < math.inf):
            return f"{option}: {value:g} is not a number of seconds > 0"
    if args.budget_s is not None and args.budget_s < MIN_STEP_S:
        return f"--budget-s: {args.budget_s:g} s leaves no step the {MIN_STEP_S:g} s it needs; use >= {MIN_STEP_S:g}"
    if args.train_s is not None and args.only and not set(args.only) & set(TIMED_TRAININGS):
        only = " ".join(args.only)
        return f"--train-s: sets the length of {' / '.join(TIMED_TRAININGS)}, and --only {only} runs neither"
    if args.out_dir.exists() and not args.out_dir.is_dir():
        return f"--out-dir: {args.out_dir} is a file, not a folder"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", help=f"cpu, cuda or cuda:<index> (default {DEVICE}; not with --smoke)")
    parser.add_argument("--smoke", action="store_true", help="the same pipeline on the CPU at tiny sizes")
    parser.add_argument("--only", nargs="+", choices=STEPS, help="run these steps only")
    parser.add_argument("--train-s", type=float, help=f"seconds of training of train_flat / train_rough / train_rotate (default "
                        f"{TRAIN_S:g}; not with --smoke)")  # fmt: skip
    parser.add_argument("--budget-s", type=float, help=f"the whole run's time; later steps are skipped (default "
                        f"{BUDGET_S:g}; not with --smoke)")  # fmt: skip
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    parser.add_argument("--keep-runs", action="store_true", help="keep the training runs' folders (printed)")
    args = parser.parse_args(argv)
    error = refusal(args)
    if error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    plan = smoke_plan() if args.smoke else gpu_plan(args.device or DEVICE, args.train_s or TRAIN_S,
                                                     args.budget_s or BUDGET_S)  # fmt: skip
    if not ISAAC_PYTHON.exists():
        print(f"gpu_check: no {ISAAC_PYTHON}; build it with `make isaaclab-venv`", file=sys.stderr)
        return 2
    try:
        seen = probe()
    except Exception as e:  # noqa: BLE001 - one clear line instead of a traceback
        print(f"gpu_check: torch in {ISAAC_PYTHON} failed to start: {e}", file=sys.stderr)
        return 2
    if plan.device.startswith("cuda") and not seen["cuda_available"]:
        print(f"gpu_check: --device {plan.device} needs a CUDA GPU, and torch {seen['torch']} in .venv-isaaclab sees "
              "none on this machine; run `--smoke` (CPU, tiny sizes) here, the check itself on a GPU machine",
              file=sys.stderr)  # fmt: skip
        return 2
    path = new_result_path(args.out_dir, args.smoke)
    work = Path(tempfile.mkdtemp(prefix="gpu_check-"))
    cache = warp_cache.cache_dir(child_env(plan.device))
    compiled = {"cuda_binaries": warp_cache.cuda_binaries(cache), "cpu_objects": warp_cache.cpu_objects(cache)}
    check = Check(plan, path, work, **compiled)
    check.result = {"started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "command": "python benchmarks/gpu_check.py " + " ".join(sys.argv[1:] if argv is None else argv),
                    "host": socket.gethostname(), "device": plan.device, "smoke": args.smoke, "commit": git_commit(),
                    "probe": seen, "plan": asdict(plan), "steps": {},
                    "warp_cache": {"dir": str(cache), "cuda_binaries_at_start": len(check.cuda_binaries),
                                   "cpu_objects_at_start": len(check.cpu_objects)}}  # fmt: skip
    print(f"gpu_check: writing {path} (device {plan.device}, {', '.join(seen['devices']) or 'CPU'}); warp's cache "
          f"{cache} holds {len(check.cuda_binaries)} CUDA binaries (PTX, CUBIN)", flush=True)  # fmt: skip
    wanted = set(args.only or STEPS)
    steps = check.result["steps"]

    def rate_of(name: str) -> float | None:
        return steps.get(name, {}).get("env_steps_per_s")

    def bench_rate(task: str) -> float | None:
        rows = steps.get("step_rate", {}).get("rows", [])
        hits = [r["steps_per_s"] for r in rows if r["task"] == task and r["backend"] == "isaaclab"
                and r["num_envs"] == plan.train_envs and "steps_per_s" in r]  # fmt: skip
        return hits[0] if hits else None

    def measures_own_rate(task: str) -> bool:
        """Whether the steps that give ``task``'s training rate were left out of this run (``--only``)."""
        return "train_rate" not in steps or (task != FLAT and "step_rate" not in steps)

    def trained(task: str, name: str, seconds: float) -> Callable[[dict[str, Any], float], None]:
        def run(rec: dict[str, Any], cap: float) -> None:
            if seconds:
                t0 = time.monotonic()
                if measures_own_rate(task):  # else --train-s would fall back to a fixed iteration count
                    probe: dict[str, Any] = rec.setdefault("rate_run", {})
                    try:
                        train(plan, task, plan.rate_iterations, work / f"{name}_rate",
                              min(plan.train_rate_cap, cap / 2), probe)  # fmt: skip
                    except Exception as e:  # noqa: BLE001 - the training runs on with the fallback
                        probe["error"] = f"{type(e).__name__}: {e}"[-2000:]
                    rate, source = probe.get("env_steps_per_s"), f"its own {plan.rate_iterations}-iteration run"
                    cap -= time.monotonic() - t0
                else:
                    rate, source = rate_of("train_rate"), "train_rate"
                    if rate and task != FLAT and bench_rate(task) and bench_rate(FLAT):
                        rate *= bench_rate(task) / bench_rate(FLAT)  # type: ignore[operator]
                        source = "train_rate x step_rate's ratio"
                budget = min(seconds, max(cap - TRAIN_OVERHEAD_S, 1.0))  # a cap cut short by the budget
                iterations, why = iterations_for(budget, rate, plan, task, source)
                rec["iterations_from"] = why
            else:
                iterations = plan.rate_iterations
            train(plan, task, iterations, work / name, cap, rec)

        return run

    def training_cap(task: str, cap: float) -> float:
        """A timed training's cap, with room for the run that measures its rate when it needs one."""
        return cap + (plan.train_rate_cap if plan.train_s and measures_own_rate(task) else 0.0)

    try:
        if "tests" in wanted:
            check.step("tests", plan.tests_cap, lambda rec, cap: step_tests(plan, rec, cap))
        if "step_rate" in wanted:
            check.step("step_rate", plan.step_rate_cap, lambda rec, cap: step_rate(plan, rec, cap))
        if "train_rate" in wanted:
            check.step("train_rate", plan.train_rate_cap, trained(FLAT, "train_rate", 0.0))
        if "train_flat" in wanted:
            check.step("train_flat", training_cap(FLAT, plan.train_flat_cap), trained(FLAT, "train_flat", plan.train_s))
        if "train_rough" in wanted:
            check.step("train_rough", training_cap(ROUGH, plan.train_rough_cap),
                       trained(ROUGH, "train_rough", plan.train_s))  # fmt: skip
        if "train_rotate" in wanted:
            check.step("train_rotate", training_cap(ROTATE, plan.train_rotate_cap),
                       trained(ROTATE, "train_rotate", plan.train_s))  # fmt: skip
    finally:
        check.result["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        check.save()
        if args.keep_runs:
            print(f"gpu_check: training runs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    failed = [n for n, r in steps.items() if not r.get("ok")]
    print(f"gpu_check: done in {check.result['elapsed_s']:.0f} s; {path} and {path.with_suffix('.md')}"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
