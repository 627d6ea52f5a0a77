"""Evaluation protocols any policy is scored on, defined once and backend-neutral: the step benchmark
(:mod:`dexwheel.benchmarks.steps`). The MuJoCo runner is :mod:`dexwheel.rl.step_benchmark`; ``benchmarks/``
at the repository root holds the speed benchmarks, a different thing."""
