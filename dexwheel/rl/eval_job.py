"""Evaluate a run (or a baseline policy) as ``scripts/evaluate.py`` does: table, JSON, optional video.

Each evaluation is kept: its JSON is named by what was evaluated,
``<policy>[_<checkpoint>]_<robot>+<robot>_seed<eval_seed>_ep<episodes>.json`` in ``<run>/eval/`` (or
``outputs/eval/`` without a run), with ``_2``, ``_3``, ... appended when that name is taken; its videos
are ``<same name>_<robot>.mp4`` next to it. ``out=<path>`` names the JSON instead and refuses an
existing file; ``overwrite=true`` replaces existing files instead of keeping them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from dexwheel.atomic import write_atomic
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.evaluation import format_table, run_episodes
from dexwheel.rl.policies import POLICIES, baseline_policy, load_policy, resolve_checkpoint, run_config
from dexwheel.rl.schema import ConfigError
from dexwheel.sim.rendering import check_offscreen

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"


def with_robot(cfg: DictConfig, robot: str) -> DictConfig:
    """``cfg`` with its robot swapped for another of the same family (the cross-robot re-validation)."""
    path = CONFIG_DIR / "robot" / f"{robot}.yaml"
    if not path.exists():
        raise ConfigError(
            f"robots: unknown robot {robot!r}; choose from {sorted(p.stem for p in path.parent.glob('*.yaml'))}"
        )
    node = OmegaConf.load(path).robot
    if node.family != cfg.robot.family:
        raise ConfigError(
            f"robots: {robot} is a {node.family} robot; the policy was trained on a {cfg.robot.family} robot"
        )
    out = OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))
    out.robot = node
    return out


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", text).strip("-.") or "x"


def eval_name(policy: str, checkpoint: str | None, robots: list[str], seed: int, episodes: int,
              backend: str = "mujoco") -> str:  # fmt: skip
    """``trained_final_solenopsis+m20_legacy_seed20000_ep10``: what was evaluated, filesystem-safe (another
    backend than MuJoCo is named after the robots: ``..._solenopsis_isaaclab_seed...``)."""
    parts = [policy, *([checkpoint] if checkpoint else []), "+".join(robots),
             *([backend] if backend != "mujoco" else []), f"seed{seed}", f"ep{episodes}"]  # fmt: skip
    return "_".join(_safe(p) for p in parts)


def video_path(json_path: Path, robot: str) -> Path:
    return json_path.with_name(f"{json_path.stem}_{robot}.mp4")


def _taken(path: Path, videos: list[str]) -> bool:
    return any(p.exists() for p in [path, *(video_path(path, r) for r in videos)])


def _free(path: Path, videos: list[str]) -> Path:
    """``path``, else ``<stem>_2.json``, ``_3``, ...: the first whose JSON and videos do not exist yet."""
    candidate, n = path, 1
    while _taken(candidate, videos):
        n += 1
        candidate = path.with_name(f"{path.stem}_{n}{path.suffix}")
    return candidate


def output_path(cfg: DictConfig, out_dir: Path, name: str, robots: list[str]) -> Path:
    """Where this evaluation's JSON goes: never over an existing evaluation unless ``overwrite=true``."""
    videos = robots if cfg.video else []
    if cfg.out:
        path = Path(cfg.out)
        if _taken(path, videos) and not cfg.overwrite:
            taken = next(p for p in [path, *(video_path(path, r) for r in videos)] if p.exists())
            raise ConfigError(f"out: {taken} already exists; choose another path or pass overwrite=true")
        return path
    path = out_dir / f"{name}.json"
    return path if cfg.overwrite else _free(path, videos)


def _check(cfg: DictConfig) -> None:
    if cfg.policy not in POLICIES:
        raise ConfigError(f"policy: {cfg.policy!r} is not one of {list(POLICIES)}")
    for key in ("episodes", "video_episodes"):
        if not isinstance(cfg[key], int) or isinstance(cfg[key], bool) or cfg[key] < 1:
            raise ConfigError(f"{key}: must be an integer >= 1, got {cfg[key]!r}")
    for key in ("video", "overwrite"):
        if not isinstance(cfg[key], bool):
            raise ConfigError(f"{key}: must be true or false, got {cfg[key]!r}")


def _exported(cfg: DictConfig):
    """``policy=onnx``: the exported policy ``onnx=`` names (onnxruntime loads only for it)."""
    from dexwheel.rl.export import ExportedPolicy

    return ExportedPolicy.load(cfg.get("onnx"))


def evaluate(cfg: DictConfig) -> dict[str, dict[str, float]]:
    _check(cfg)
    exported = _exported(cfg) if cfg.policy == "onnx" else None
    run = Path(cfg.run) if cfg.run else (exported.run if exported is not None else None)
    if cfg.policy == "trained" and run is None:
        raise ConfigError("run: a trained policy needs run=<training run folder> (or policy=random|zero)")
    env_cfg = run_config(run) if run is not None else cfg
    robots = list(cfg.robots) or [env_cfg.robot.name]
    checkpoint = resolve_checkpoint(run, cfg.checkpoint, env_cfg.algo.name) if cfg.policy == "trained" else None
    tag = checkpoint.stem if checkpoint else (exported.name if exported is not None else None)
    backend = cfg.backend.name
    if backend == "isaaclab" and cfg.video:
        raise ConfigError("video: videos are rendered on the MuJoCo backend; drop video=true or backend=isaaclab")
    if cfg.video:
        check_offscreen("video=true")  # before any episode runs: RenderingError saying what to set
    name = eval_name(cfg.policy, tag, robots, cfg.eval_seed, cfg.episodes, backend)
    out = output_path(cfg, (run / "eval") if run is not None else Path("outputs/eval"), name, robots)
    overrides = OmegaConf.to_container(cfg.env_overrides, resolve=True) if cfg.env_overrides else {}
    configs = {r: env_cfg if r == env_cfg.robot.name else with_robot(env_cfg, r) for r in robots}  # all checked first
    results: dict[str, dict[str, float]] = {}
    for robot, rcfg in configs.items():
        if backend == "isaaclab":
            results[robot] = _on_isaaclab(cfg, rcfg, checkpoint, exported, overrides)
            continue
        render = {"render_mode": "rgb_array"} if cfg.video else {}
        env = make_env(rcfg, **render, **overrides)
        if checkpoint is not None:
            policy = load_policy(run, str(checkpoint), env_cfg)
        elif exported is not None:
            policy = exported.policy(env, robot)  # refuses an env whose observation size differs
        else:
            policy = baseline_policy(cfg.policy, env.action_space, cfg.eval_seed)
        video = video_path(out, robot) if cfg.video else None
        try:
            result = run_episodes(env, policy, rcfg.task.name, cfg.episodes, cfg.eval_seed, video_path=video,
                                  progress=True, video_episodes=cfg.video_episodes)  # fmt: skip
        finally:
            env.close()
        results[robot] = result.summary()
        if video is not None:
            print(f"video: {video} ({min(cfg.video_episodes, cfg.episodes)} episode(s))")
    record = {
        "policy": cfg.policy,
        "run": str(run) if run else None,
        "checkpoint": str(checkpoint) if checkpoint else (exported.metadata["checkpoint"] if exported else None),
        **({"onnx": str(exported.path)} if exported is not None else {}),
        "robots": robots,
        "backend": backend,
        "eval_seed": cfg.eval_seed,
        "episodes": cfg.episodes,
        "env_overrides": overrides,
        "results": results,
    }
    if out.exists() and not cfg.overwrite:  # another evaluation took the name meanwhile: keep both
        out = _free(out, [])
    write_atomic(out, json.dumps(record, indent=1))
    print(format_table(results))
    print(f"metrics: {out}")
    return results


def _on_isaaclab(cfg: DictConfig, rcfg: DictConfig, checkpoint: Path | None, exported: Any,
                 overrides: dict[str, Any]) -> dict[str, float]:  # fmt: skip
    """``cfg.episodes`` episodes of ``rcfg``'s Isaac Lab task, in the Isaac Lab venv (sim-to-sim)."""
    from dexwheel.rl.isaaclab_launch import evaluate_on_isaaclab

    if checkpoint is not None and checkpoint.suffix != ".pt":
        raise ConfigError(
            f"backend=isaaclab: {checkpoint} is a stable-baselines3 checkpoint; export it (scripts/export.py "
            f"run=...) and evaluate the export: policy=onnx onnx=<run>/export/policy.onnx backend=isaaclab"
        )
    return evaluate_on_isaaclab(
        rcfg, cfg.policy, cfg.episodes, cfg.eval_seed, device=cfg.train.device, checkpoint=checkpoint,
        onnx=exported.path if exported is not None else None,
        metadata=exported.metadata if exported is not None else None, overrides=overrides,
    )  # fmt: skip
