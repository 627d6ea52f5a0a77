"""Evaluate a policy over N deterministic episodes: a metrics table, a JSON file, optional MP4.

python scripts/evaluate.py run=outputs/<run>                        # the run as trained (its config.yaml)
python scripts/evaluate.py run=outputs/<run> task.hand_pose.goal_mode=random drive=pd   # changed: applied, recorded
python scripts/evaluate.py run=outputs/<m20 run> robots=[m20_legacy,solenopsis]   # cross-robot
python scripts/evaluate.py robot=g20_left drive=pd policy=random video=true video_episodes=3
python scripts/evaluate.py run=outputs/<run> benchmark=steps         # the step benchmark: a table and a plot per height

Each evaluation is kept in <run>/eval/ (or outputs/eval/), named by policy, checkpoint, robots, seed, episodes
and the env settings the command line changed; an override that is no evaluation setting is refused.
"""

from __future__ import annotations

import sys

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from dexwheel.hydra_app import hydra_main
from dexwheel.rl.checkpoints import CheckpointError
from dexwheel.rl.eval_job import evaluate
from dexwheel.rl.isaaclab_launch import IsaacLabError
from dexwheel.rl.run_config import GROUPS, selection_overrides
from dexwheel.rl.schema import ConfigError
from dexwheel.sim.rendering import RenderingError


@hydra_main("evaluate")
def main(cfg: DictConfig) -> None:
    try:
        evaluate(cfg, list(HydraConfig.get().overrides.task))
    except (ConfigError, CheckpointError, RenderingError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    except IsaacLabError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None


def run_of(args: list[str]) -> list[str]:
    """``run=<run>`` as typed, else the run an ``onnx=`` export's metadata names (when it can be read)."""
    if any(a.startswith("run=") for a in args):
        return args
    onnx = [a.split("=", 1)[1] for a in args if a.startswith("onnx=")]
    try:
        from dexwheel.rl.export import ExportedPolicy

        return [*args, f"run={ExportedPolicy.load(onnx[-1]).run}"] if onnx else args
    except ConfigError:
        return args  # evaluate() reports it


if __name__ == "__main__":
    # run=<run> (or an export's run): Hydra composes the run's own robot, task, drive, ... (its config.yaml),
    # so that its env settings can be overridden by their paths; the backend stays an evaluation setting
    sys.argv += selection_overrides(run_of(sys.argv[1:]), "run", tuple(g for g in GROUPS if g != "backend"))
    main()
