"""The benchmarks run (a short smoke run of each): their timings are printed, never asserted, but a
benchmark that no longer runs, or whose projection replay no longer matches the env, fails here."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize(
    ("script", "args", "expected"),
    [
        ("bench_composer.py", ["--iters", "200"], ["seed 29+2, wave override: compose()", "solenopsis 8"]),
        ("bench_g20_env.py", ["--quick"], ["ratio over raw incl. projection", "vector hard_write N=8", "speed-up"]),
        (
            "bench_wheel_leg_env.py",
            ["--quick"],
            ["random actions", "N =   8", "speed-up", "the flat env's env-steps/s"],
        ),
        (
            "bench_wheel_leg_env.py",
            ["--quick", "--rough-types"],
            ["N =  16: Solenopsis-Rough-v0 ", "only flat ", "only boxes ", "only rough "],
        ),
        (
            "bench_memory.py",
            ["--quick"],
            ["MB per env", "m20_legacy_dr   N =     2", "solenopsis_rough", "g20_pd", "solenopsis_dr over"],
        ),
        (
            "bench_training.py",
            ["--quick"],
            [
                "ppo: ",
                "sac: ",
                "rsl_ppo: ",
                "simulation",
                "policy inference",
                "learner update",
                "idle (core-s)",
                "physics only",
            ],
        ),
        (
            "bench_training.py",
            ["--quick", "--algo", "rsl_ppo", "--profile-update", "algo.policy.net_arch=[32,32]"],
            ["rsl_ppo: ", "[32, 32]", "one more update under torch.profiler", "aten::addmm"],
        ),
    ],
)
def test_benchmark_runs(script: str, args: list[str], expected: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for text in expected:
        assert text in done.stdout, done.stdout[-3000:]
