"""MuJoCo's interactive viewer on any robot/task config, playing a policy, presets or random actions.

python scripts/view.py robot=solenopsis source=presets
python scripts/view.py robot=g20_left source=presets          # open, half fist, full fist
python scripts/view.py run=outputs/<run> source=policy
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from dexwheel.hydra_app import hydra_main
from dexwheel.rl.checkpoints import CheckpointError
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.policies import baseline_policy, load_policy
from dexwheel.rl.presets import g20_sdk_sequence, wheel_leg_sequence
from dexwheel.rl.run_config import check_overrides_read, parse_overrides, run_config
from dexwheel.rl.schema import ConfigError, as_paths
from dexwheel.sim.rendering import RenderingError, check_window

SOURCES = ("policy", "presets", "random", "zero")
#: without a display: a video instead of the window
VIDEO_INSTEAD = "record a video offscreen instead (MUJOCO_GL=egl python scripts/evaluate.py ... video=true)"
#: view.py's own settings (configs/view.yaml)
OWN = ("source", "run", "checkpoint", "steps", "realtime", "seed")


def check_typed(cfg: DictConfig, typed: list[str]) -> None:
    """Refuse a typed override the viewer would not apply, naming it: with ``source=policy`` the run is played
    as it was trained (its own config), so any env or training setting; a hand's presets are SDK commands,
    so another ``action``; and, as in train.py, another robot family's key or a ``+``-added typo."""
    parsed = [o for o in parse_overrides(typed) if not o.hydra and o.root not in OWN]
    if cfg.source == "policy" and parsed:
        raise ConfigError(f"{parsed[0].line}: source=policy plays the run as it was trained (its config.yaml); "
                          "to play it with other env settings, use evaluate.py run=<run> video=true <settings>")  # fmt: skip
    if (
        cfg.source == "presets"
        and cfg.robot.family == "hand"
        and any(o.root == "action" for o in parsed)
        and cfg.action.name != "sdk255"
    ):
        raise ConfigError(f"{next(o.line for o in parsed if o.root == 'action')}: the hand's presets are SDK "
                          "commands: source=presets plays them with action=sdk255")  # fmt: skip
    check_overrides_read("view", cfg, parsed, open_roots=())


def action_source(cfg: DictConfig):
    """(config the env is built from, env overrides, obs -> action)."""
    if cfg.source not in SOURCES:
        raise ConfigError(f"source: {cfg.source!r} is not one of {list(SOURCES)}")
    if cfg.source == "policy":
        as_paths(cfg, ("run", "checkpoint"))
        if not cfg.run:
            raise ConfigError("run: source=policy needs run=<training run folder>")
        env_cfg = run_config(Path(cfg.run))
        return env_cfg, {}, load_policy(Path(cfg.run), cfg.checkpoint, env_cfg)
    if cfg.source == "presets":
        if cfg.robot.family == "hand":
            seq = g20_sdk_sequence()
            return cfg, {"actions": "sdk255"}, lambda obs: next(seq)
        seq = wheel_leg_sequence(8)
        return cfg, {}, lambda obs: next(seq)
    return cfg, {}, None


@hydra_main("view")
def main(cfg: DictConfig) -> None:
    try:
        check_typed(cfg, list(HydraConfig.get().overrides.task))
        env_cfg, overrides, policy = action_source(cfg)
        env = make_env(env_cfg, **overrides)  # a config error first: it is what the user must fix either way
        check_window("scripts/view.py (MuJoCo's viewer)", instead=VIDEO_INSTEAD)
    except (ConfigError, CheckpointError, RenderingError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    policy = policy or baseline_policy(cfg.source, env, cfg.seed)
    obs, _ = env.reset(seed=cfg.seed)
    model, data = env.unwrapped.model, env.unwrapped.data
    dt = float(getattr(env.unwrapped, "dt", model.opt.timestep))
    import mujoco.viewer  # after dexwheel's import (dexwheel.mujoco_gl)

    before = set(threading.enumerate())
    with mujoco.viewer.launch_passive(model, data) as viewer:
        window_threads = set(threading.enumerate()) - before  # the viewer's window runs on its own thread
        step = 0
        while viewer.is_running() and (cfg.steps <= 0 or step < cfg.steps):
            start = time.perf_counter()
            obs, _, terminated, truncated, _ = env.step(np.asarray(policy(obs)))
            if terminated or truncated:
                obs, _ = env.reset()
            viewer.sync()
            step += 1
            if cfg.realtime:
                time.sleep(max(0.0, dt - (time.perf_counter() - start)))
    # The window is torn down on its thread after close(); exiting before it is done crashes
    # or hangs in GLFW (google-deepmind/mujoco#790).
    for thread in window_threads:
        thread.join(timeout=30)
    env.close()
    print(f"viewer closed: played {step} steps")


if __name__ == "__main__":
    main()
