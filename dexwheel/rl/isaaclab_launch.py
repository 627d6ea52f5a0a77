"""``backend=isaaclab`` from the core venv: the Isaac Lab venv is built when missing, then does the work.

Isaac Lab 3 and the MuJoCo envs cannot share a venv (docs/how-to/isaaclab.md). ``scripts/train.py`` and
``scripts/evaluate.py`` check everything in the core venv first (the config, the env's fields and what Isaac Lab
cannot run, a resumed run, a checkpoint), then start ``.venv-isaaclab/bin/python -m dexwheel.isaaclab.<job>`` on a
job file and relay its output: its progress lines (``PROGRESS`` prefix) go to this process's log (``train.log``), the
rest to the console. Ctrl-C reaches both processes; the child saves its checkpoint and this one waits for it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from dexwheel import warp_cache
from dexwheel.rl.checkpoints import CheckpointError
from dexwheel.rl.env_factory import check_isaaclab_env
from dexwheel.rl.progress import run_log
from dexwheel.rl.run_config import CONFIG_FILE, parse_overrides
from dexwheel.rl.schema import ConfigError, TrainCfg

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-isaaclab"
PYTHON = VENV / "bin" / "python"
STAMP = VENV / ".installed"  # written by the Makefile's isaaclab-venv target once the install completed
REQUIREMENTS = ROOT / "requirements-isaaclab.txt"
#: What building the Isaac Lab venv costs (docs/get-started/install.md, The Isaac Lab venv).
BUILD_COST = "about 7.8 GB of downloads and disk, 2-3 minutes"
#: what the child prints before a line for the parent's log
PROGRESS = "[progress] "
#: the child prints its result as one JSON line after this
RESULT = "[result] "
log = logging.getLogger("dexwheel.train")


class IsaacLabError(RuntimeError):
    """The Isaac Lab process failed; its own output (above) says why."""


def venv_outdated() -> str | None:
    """Why the Isaac Lab venv must be built first (missing, or older than ``requirements-isaaclab.txt``, as the
    Makefile's rule sees it); None when it is ready."""
    if not STAMP.exists():
        return f"{VENV.name} is missing"
    if STAMP.stat().st_mtime < REQUIREMENTS.stat().st_mtime:
        return f"{REQUIREMENTS.name} changed since {VENV.name} was built"
    return None


def ensure_venv() -> Path:
    """The Isaac Lab venv's python, built first (``make isaaclab-venv``, announced with its size and time) when
    :func:`venv_outdated` says so."""
    if (why := venv_outdated()) is not None:
        print(f"backend=isaaclab: {why}: building it now with `make isaaclab-venv` ({BUILD_COST}); Ctrl-C stops",
              flush=True)  # fmt: skip
        done = subprocess.run(["make", "-C", str(ROOT), "isaaclab-venv"], check=False)
        if done.returncode != 0 or not STAMP.exists():
            raise ConfigError(f"backend=isaaclab: `make isaaclab-venv` failed (exit {done.returncode}); see its output")
    return PYTHON


def run_child(module: str, *args: str) -> dict[str, Any]:
    """Run ``python -m <module> <args>`` in the Isaac Lab venv, relaying its output; returns its result."""
    python = ensure_venv()
    env = warp_cache.with_cache(dict(os.environ))
    # the user's folder last on the child's module path, as the scripts have it: their terms and tasks
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), os.getcwd()) if p)
    proc = subprocess.Popen([str(python), "-u", "-m", module, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)  # fmt: skip
    result: dict[str, Any] | None = None
    interrupted = False
    while True:
        try:
            for line in proc.stdout:  # type: ignore[union-attr]
                line = line.rstrip("\n")
                if line.startswith(PROGRESS):
                    log.info(line[len(PROGRESS) :])
                elif line.startswith(RESULT):
                    result = json.loads(line[len(RESULT) :])
                else:
                    print(line, flush=True)
            break
        except KeyboardInterrupt:  # the child got it too: let it save and finish
            interrupted = True
    code = proc.wait()
    if interrupted or code == 130:
        raise SystemExit(130)
    if code == 2:  # the child's one-line error is printed above
        raise SystemExit(2)
    if code != 0 or result is None:
        raise IsaacLabError(f"backend=isaaclab: {module} failed (exit {code}); its output is above")
    return result


def check_training(cfg: DictConfig, train: TrainCfg, algo: str, overrides: list[str] | None = None) -> None:
    """Refuse here, in the core venv, what an Isaac Lab training cannot run, before Isaac Lab starts (about 20 s)
    and before anything is written; ``overrides``: what the user typed."""
    if algo != "rsl_ppo":
        raise ConfigError(f"algo={algo}: backend=isaaclab trains with algo=rsl_ppo (rsl_rl, as Isaac Lab does)")
    if train.eval_episodes > train.num_envs:
        raise ConfigError(f"train.eval_episodes: {train.eval_episodes} evaluation episodes run on the Isaac Lab "
                          f"training envs; train.num_envs is {train.num_envs}: give train.eval_episodes <= "
                          f"{train.num_envs}")  # fmt: skip
    for o in parse_overrides(overrides or []):
        if o.key == "train.vectorization":  # recorded in config.yaml, it would claim a setting the run never had
            raise ConfigError(f"{o.line}: chooses the MuJoCo backend's vector env; Isaac Lab runs its own envs "
                              f"(backend=isaaclab): drop it")  # fmt: skip
    check_isaaclab_env(cfg)


def train_on_isaaclab(cfg: DictConfig, run_dir: Path, notes: Sequence[str] = (),
                      launched: float | None = None) -> dict[str, Any]:  # fmt: skip
    """Train ``cfg`` (checked: :func:`check_training`) with rsl_rl on the Isaac Lab task; returns the final evaluation.

    The child gets the config in a job file and writes the run's ``config.yaml`` itself once its env and learner
    exist, as the MuJoCo backend does: a launch refused or failed before that leaves a resumed run's config as it was.
    A fresh launch that fails before it leaves the folder as it was found (what it wrote there removed)."""
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    before = set(run_dir.iterdir())
    # ``launched`` is this process's time.monotonic(): the system-wide clock the child's own readings are on
    job = {"config": OmegaConf.to_container(cfg, resolve=True), "run_dir": str(run_dir), "launched": launched}
    try:
        with run_log(run_dir), tempfile.TemporaryDirectory() as tmp:
            for line in notes:
                log.warning(line)
            path = Path(tmp) / "job.json"
            path.write_text(json.dumps(job))
            return run_child("dexwheel.isaaclab.train", str(path))
    except BaseException:
        if not cfg.train.resume and not (run_dir / CONFIG_FILE).exists():  # the run never started
            for new in set(run_dir.iterdir()) - before:
                if new.is_dir():
                    shutil.rmtree(new)
                else:
                    new.unlink()
            if created:
                run_dir.rmdir()
        raise


def evaluate_on_isaaclab(env_cfg: DictConfig, policy: str, episodes: int, eval_seed: int, device: str = "cpu",
                         checkpoint: Path | None = None, onnx: Path | None = None,
                         metadata: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None,
                         steps: dict[str, Any] | None = None,
                         in_hand: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """``episodes`` deterministic episodes of ``env_cfg``'s Isaac Lab task (one env each); the summary. With
    ``steps`` (a step benchmark protocol's fields, checked) the step benchmark instead: its table
    (:func:`dexwheel.isaaclab.step_benchmark.run_step_benchmark`); with ``in_hand`` (the in-hand benchmark's
    protocol) the in-hand benchmark: its rows (:func:`dexwheel.isaaclab.evaluate.in_hand_benchmark`)."""
    job = {
        "config": OmegaConf.to_container(env_cfg, resolve=True),
        "policy": policy,
        "checkpoint": str(checkpoint) if checkpoint else None,
        "onnx": str(onnx) if onnx else None,
        "metadata": metadata,
        "overrides": overrides or {},
        "episodes": episodes,
        "eval_seed": eval_seed,
        "device": device,
        "steps": steps,
        "in_hand": in_hand,
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "job.json"
        path.write_text(json.dumps(job))
        return run_child("dexwheel.isaaclab.evaluate", str(path))


def child_main(job: Callable[[Path], dict[str, Any]]) -> None:
    """The entry of an Isaac Lab process: ``job(<argv[1]>)`` with its progress lines and result printed for
    :func:`run_child`, and a bad config or checkpoint as one line on stderr (exit 2)."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter(PROGRESS + "%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        result = job(Path(sys.argv[1]))
    except (ConfigError, ValueError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    print(RESULT + json.dumps(result), flush=True)
