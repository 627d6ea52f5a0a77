"""Train a policy: ``python scripts/train.py robot=solenopsis`` (Hydra overrides for everything else).

python scripts/train.py robot=g20_left drive=pd
python scripts/train.py train.resume=outputs/<run> train.total_timesteps=N   # continue a run (same settings)
python scripts/train.py -m seed=0,1,2                       # local multirun
python scripts/train.py -m hydra/launcher=submitit_slurm_dexwheel seed=0,1,2   # SLURM
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from dexwheel.rl.checkpoints import CheckpointError
from dexwheel.rl.evaluation import format_table
from dexwheel.rl.isaaclab_launch import IsaacLabError
from dexwheel.rl.schema import ConfigError
from dexwheel.rl.training import train

CONFIG_DIR = str(Path(__file__).resolve().parents[1] / "configs")


@hydra.main(config_path=CONFIG_DIR, config_name="train", version_base="1.3")
def main(cfg: DictConfig) -> float:
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        summary = train(cfg, run_dir)
    except (ConfigError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    except IsaacLabError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    if summary:  # empty on a distributed run's other processes
        print(format_table({cfg.robot.name: summary}))
    return summary.get("return", 0.0)


if __name__ == "__main__":
    main()
