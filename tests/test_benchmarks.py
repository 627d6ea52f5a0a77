"""The benchmarks run (a short smoke run of each): their timings are printed, never asserted, but a
benchmark that no longer runs, or whose projection replay no longer matches the env, fails here."""

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize(
    ("script", "args", "expected"),
    [
        ("bench_composer.py", ["--iters", "200"], ["seed 29+2, wave override: compose()", "solenopsis 8"]),
        ("bench_g20_env.py", ["--quick"], ["ratio over raw incl. projection", "vector hard_write N=8", "speed-up"]),
        (
            "bench_in_hand.py",
            ["--quick"],
            ["G20Rotate-v0 benchmark", "N =   8: native vector env over raw mujoco.batch"],
        ),
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
            # which operators lead is timing: on a net this small aten::addmm can fall out of the top rows
            ["rsl_ppo: ", "[32, 32]", "one more update under torch.profiler", "by operator (self time):", " calls)"],
        ),
    ],
)
@pytest.mark.slow
def test_benchmark_runs(script: str, args: list[str], expected: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for text in expected:
        assert text in done.stdout, done.stdout[-3000:]


def _benchmark(name: str) -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train.num_envz=2"], "error: train.num_envz=2: no key train.num_envz; did you mean train.num_envs?"),
        (["--algo", "ppo", "+train.foo=1"], "error: train.foo: Key 'foo' not in 'TrainCfg'"),
        (["--algo", "sac", "algo.policy.net_arch=[1,"], "error: algo.policy.net_arch=[1,: no viable alternative"),
        (["robot=g20_left"], "error: robot=g20_left: choose the robot with --robot"),
        (["--iterations", "0"], "error: --iterations: must be >= 1, got 0"),
    ],
)
def test_bench_training_refuses_bad_input_in_one_line_before_any_run(argv, message, capsys) -> None:
    assert _benchmark("bench_training").main(["--quick", *argv]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(message) and err.count("\n") == 1 and not out, (out, err)


def test_bench_training_names_the_robots_it_takes(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        _benchmark("bench_training").main(["--robot", "solenopsys"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "--robot: invalid choice: 'solenopsys' (choose from 'g20_left'" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sizes", "0"], "error: --sizes: each must be >= 1, got 0\n"),
        (["--sizes", "2", "-3"], "error: --sizes: each must be >= 1, got -3\n"),
        (["--steps", "-1"], "error: --steps: must be >= 0, got -1\n"),
    ],
)
def test_bench_memory_refuses_bad_sizes_and_steps_before_any_measurement(argv, message, capsys) -> None:
    assert _benchmark("bench_memory").main(argv) == 2
    assert capsys.readouterr() == ("", message)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--arch", "9"], "error: --arch: 9 is not a CUDA compute capability (50 ... 120, e.g. 90 for sm_90)"),
        (["--ptx-arch", "750"], "error: --ptx-arch: 750 is not a CUDA compute capability"),
    ],
)
def test_warp_cuda_cache_refuses_an_arch_before_building_anything(argv, message, tmp_path) -> None:
    cache = tmp_path / "cache"
    done = subprocess.run([sys.executable, str(BENCHMARKS / "warp_cuda_cache.py"), "--cache", str(cache), *argv],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith(message) and len(done.stderr.splitlines()) == 1
    assert not cache.exists()
