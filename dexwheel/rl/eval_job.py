"""Evaluate a run (or a baseline policy) as ``scripts/evaluate.py`` does: table, JSON, optional video."""

from __future__ import annotations

import json
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from dexwheel.atomic import write_atomic
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.evaluation import format_table, run_episodes
from dexwheel.rl.policies import POLICIES, baseline_policy, load_policy, run_config
from dexwheel.rl.schema import ConfigError

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


def evaluate(cfg: DictConfig) -> dict[str, dict[str, float]]:
    if cfg.policy not in POLICIES:
        raise ConfigError(f"policy: {cfg.policy!r} is not one of {list(POLICIES)}")
    run = Path(cfg.run) if cfg.run else None
    if cfg.policy == "trained" and run is None:
        raise ConfigError("run: a trained policy needs run=<training run folder> (or policy=random|zero)")
    env_cfg = run_config(run) if run is not None else cfg
    robots = list(cfg.robots) or [env_cfg.robot.name]
    results: dict[str, dict[str, float]] = {}
    for robot in robots:
        rcfg = env_cfg if robot == env_cfg.robot.name else with_robot(env_cfg, robot)
        render = {"render_mode": "rgb_array"} if cfg.video else {}
        overrides = OmegaConf.to_container(cfg.env_overrides, resolve=True) if cfg.env_overrides else {}
        env = make_env(rcfg, **render, **overrides)
        if cfg.policy == "trained":
            policy = load_policy(run, cfg.checkpoint, env_cfg.algo.name)
        else:
            policy = baseline_policy(cfg.policy, env.action_space, cfg.eval_seed)
        out_dir = (run / "eval") if run is not None else Path("outputs/eval")
        video = out_dir / f"{cfg.policy}_{robot}.mp4" if cfg.video else None
        result = run_episodes(env, policy, rcfg.task.name, cfg.episodes, cfg.eval_seed, video_path=video, progress=True)
        env.close()
        results[robot] = result.summary()
        if video is not None:
            print(f"video: {video}")
    out = (
        Path(cfg.out)
        if cfg.out
        else ((run / "eval") if run is not None else Path("outputs/eval")) / f"{cfg.policy}.json"
    )
    write_atomic(
        out, json.dumps({"policy": cfg.policy, "run": str(run) if run else None, "results": results}, indent=1)
    )
    print(format_table(results))
    print(f"metrics: {out}")
    return results
