"""Soak every env: random, extreme (all +1, all -1) and bang-bang actions with frequent resets.

python scripts/soak.py                                  # 100k steps per env configuration (about 2 min on 2 cores)
python scripts/soak.py --steps 1500 --inject-every 4    # the short version CI runs (tests/test_soak.py)
python scripts/soak.py --out soak.json                  # also write the report as JSON (atomically; a new file
                                                        # unless --overwrite)

Reports per configuration: exceptions, non-finite observations or rewards, and divergences: those
the env flagged (``info["diverged"]``) against those an independent check saw (MuJoCo's instability
warning counters rose, or the state is not finite). Blow-ups are also injected on purpose (a huge
velocity written into the simulation once every ``--inject-every`` episodes, where the drive
integrates; 0: never), so that the flagging itself is exercised. Target: 0 exceptions, 0 non-finite values,
every divergence flagged. The JSON (``--out``) holds the --seed, --steps and --inject-every the counts depend on
and a report per configuration with its own seed (the i-th chosen configuration, from 1, runs with --seed + i).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import dexwheel  # noqa: F401  (registers the env ids)
from dexwheel.atomic import write_atomic, write_new
from dexwheel.sim.divergence import UNSTABLE_WARNINGS
from dexwheel.tasks.spaces import IntegerBox

#: (label, env id, keyword arguments)
CONFIGS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("g20_left_hard_write", "G20Hand-v0", {}),
    ("g20_right_hard_write_sdk255", "G20Hand-v0", {"hand": "right", "actions": "sdk255"}),
    ("g20_left_pd", "G20Hand-v0", {"drive": "pd"}),
    ("g20_right_pd_nominal", "G20Hand-v0", {"hand": "right", "drive": "pd", "actions": "nominal"}),
    ("solenopsis", "Solenopsis-v0", {}),
    ("solenopsis_domain_rand", "Solenopsis-v0", {"domain_randomization": True}),
    ("m20_legacy", "M20Legacy-v0", {}),
    ("m20_legacy_domain_rand", "M20Legacy-v0", {"domain_randomization": True}),
)
PATTERNS = ("random", "plus", "minus", "bang_bang")
_BAD = [int(w) for w in UNSTABLE_WARNINGS]


@dataclass
class Report:
    config: str
    seed: int = 0  # of the env resets, the actions and the injections
    steps: int = 0
    episodes: int = 0
    exceptions: int = 0
    non_finite: int = 0
    divergences_seen: int = 0  # by the independent check
    divergences_flagged: int = 0  # by the env
    unflagged: int = 0  # seen but not flagged: must be 0
    injected: int = 0
    steps_per_s: float = 0.0
    first_exception: str = ""
    patterns: dict[str, int] = field(default_factory=dict)


def _action(pattern: str, rng: np.random.Generator, t: int, low: np.ndarray, high: np.ndarray, sdk: bool) -> np.ndarray:
    if pattern == "random":
        a = rng.integers(low.astype(int), high.astype(int) + 1) if sdk else rng.uniform(low, high)
    elif pattern == "plus":
        a = high.copy()
    elif pattern == "minus":
        a = low.copy()
    else:  # bang-bang: every joint flips between its extremes every few steps, in a random pattern
        a = np.where(((t // 5) + rng.integers(0, 2, low.shape)) % 2 == 0, low, high)
    return np.asarray(a, dtype=np.float64)


def _warning_count(data: Any) -> int:
    return int(data.warning.number[_BAD].sum())


def soak(label: str, env_id: str, kwargs: dict[str, Any], steps: int, seed: int, inject_every: int) -> Report:
    env = gym.make(env_id, **kwargs)
    raw = env.unwrapped
    integrates = env_id != "G20Hand-v0" or raw.cfg.drive.kind == "pd"  # hard-write cannot diverge
    sdk = isinstance(env.action_space, IntegerBox)  # whole SDK commands
    low, high = env.action_space.low.astype(np.float64), env.action_space.high.astype(np.float64)
    rng = np.random.default_rng(seed)
    report = Report(label, seed, patterns=dict.fromkeys(PATTERNS, 0))
    start = time.perf_counter()
    episode_len = inject_at = 0
    pattern = PATTERNS[0]

    def new_episode() -> None:
        nonlocal episode_len, inject_at, pattern
        env.reset(seed=int(rng.integers(2**31)))
        report.episodes += 1
        episode_len = int(rng.integers(20, 300))  # frequent resets, besides the env's own episode ends
        inject = integrates and inject_every > 0 and report.episodes % inject_every == 0
        inject_at = int(rng.integers(1, episode_len)) if inject else -1
        pattern = PATTERNS[report.episodes % len(PATTERNS)]  # each pattern in turn

    new_episode()
    t = 0
    for _ in range(steps):
        if t == inject_at:
            raw.data.qvel[:] = 1e300  # a blow-up: MuJoCo's own check catches it in the next step
            report.injected += 1
        before = _warning_count(raw.data)
        try:
            obs, reward, terminated, truncated, info = env.step(_action(pattern, rng, t, low, high, sdk))
        except Exception as exc:  # a soak counts every failure and goes on
            report.exceptions += 1
            report.first_exception = report.first_exception or f"{type(exc).__name__}: {exc}"
            new_episode()
            t = 0
            continue
        report.steps += 1
        report.patterns[pattern] += 1
        t += 1
        seen = _warning_count(raw.data) > before or not (
            np.isfinite(raw.data.qpos).all() and np.isfinite(raw.data.qvel).all()
        )
        flagged = bool(info.get("diverged", False))
        report.divergences_seen += seen
        report.divergences_flagged += flagged
        report.unflagged += seen and not flagged
        report.non_finite += not (np.isfinite(obs).all() and np.isfinite(reward))
        if terminated or truncated or t >= episode_len:
            new_episode()
            t = 0
    report.steps_per_s = report.steps / (time.perf_counter() - start)
    env.close()
    return report


def format_reports(reports: list[Report]) -> str:
    cols = ("steps", "episodes", "exceptions", "non_finite", "injected", "divergences_seen", "divergences_flagged",
            "unflagged")  # fmt: skip
    width = max(len(r.config) for r in reports)
    lines = [f"{'config':<{width}}  " + "  ".join(f"{c:>{max(len(c), 8)}}" for c in cols) + "  steps/s"]
    for r in reports:
        row = asdict(r)
        lines.append(f"{r.config:<{width}}  " + "  ".join(f"{row[c]:>{max(len(c), 8)}}" for c in cols)
                     + f"  {r.steps_per_s:7.0f}")  # fmt: skip
    return "\n".join(lines)


def refusal(args: argparse.Namespace) -> str | None:
    """Why the options cannot run as typed (``<option>: ...``), or None; checked before any env is built."""
    labels = [c[0] for c in CONFIGS]
    unknown = [c for c in args.configs or () if c not in labels]
    if unknown or (args.configs is not None and not args.configs):
        return f"--configs: {'unknown ' + repr(unknown) if unknown else 'no label given'}; choose from {labels}"
    if args.steps < 1:
        return f"--steps: must be >= 1, got {args.steps}"
    if args.seed < 0:
        return f"--seed: must be >= 0 (numpy's seeds), got {args.seed}"
    if args.inject_every < 0:
        return f"--inject-every: must be >= 0 (0: never), got {args.inject_every}"
    if args.out is not None:
        out = Path(args.out)
        if out.is_dir():
            return f"--out: {out} is a folder; name a file"
        if not out.parent.is_dir():
            return f"--out: the folder {out.parent} does not exist"
        if out.exists() and not args.overwrite:
            return f"--out: {out} exists; add --overwrite to replace it"
    elif args.overwrite:
        return "--overwrite: replaces the --out file, and there is no --out"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100_000, help="env steps per configuration")
    parser.add_argument("--seed", type=int, default=0, help="the i-th configuration (from 1) runs with seed + i")
    parser.add_argument("--inject-every", type=int, default=10, help="inject a blow-up every N episodes (0: never)")
    parser.add_argument(
        "--configs", nargs="*", default=None, help=f"labels (default: all of {[c[0] for c in CONFIGS]})"
    )
    parser.add_argument("--out", default=None, help="write the report as JSON to this new file")
    parser.add_argument("--overwrite", action="store_true", help="let --out replace an existing file")
    args = parser.parse_args(argv)
    error = refusal(args)
    if error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    chosen = [c for c in CONFIGS if args.configs is None or c[0] in args.configs]
    reports = []
    for i, (label, env_id, kwargs) in enumerate(chosen, 1):
        print(f"[{i}/{len(chosen)}] {label}: {args.steps} steps ...", flush=True)
        r = soak(label, env_id, kwargs, args.steps, args.seed + i, args.inject_every)
        print(f"[{i}/{len(chosen)}] {label}: {r.exceptions} exceptions, {r.non_finite} non-finite, "
              f"{r.divergences_flagged}/{r.divergences_seen} divergences flagged ({r.steps_per_s:.0f} steps/s)",
              flush=True)  # fmt: skip
        reports.append(r)
    print(format_reports(reports))
    if args.out:
        record = {"seed": args.seed, "steps": args.steps, "inject_every": args.inject_every,
                  "reports": [asdict(r) for r in reports]}  # fmt: skip
        text = json.dumps(record, indent=1) + "\n"
        try:
            if args.overwrite:
                write_atomic(args.out, text)
            else:  # a file that appeared during the run is not replaced either
                write_new(args.out, text)
        except FileExistsError:
            print(f"error: --out: {args.out} appeared during the run and was kept; the report is the table above, "
                  "or rerun with --overwrite", file=sys.stderr)  # fmt: skip
            return 1
        print(f"report: {args.out}")
    ok = all(r.exceptions == 0 and r.non_finite == 0 and r.unflagged == 0 for r in reports)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
