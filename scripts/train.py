"""Train a policy: ``python scripts/train.py robot=solenopsis`` (Hydra overrides for everything else).

python scripts/train.py robot=g20_left drive=pd
python scripts/train.py train.resume=outputs/<run>                  # continue a run, as it was configured
python scripts/train.py train.resume=outputs/<run> train.total_timesteps=N   # ... to a larger budget
python scripts/train.py -m seed=0,1,2                       # local multirun
python scripts/train.py -m hydra/launcher=submitit_slurm_dexwheel seed=0,1,2   # SLURM

A run's folder (``outputs/<robot>_<task>_<algo>_<backend>[_<group>-<option>]_seed<s>/<time>/``: the groups chosen
otherwise than the robot's defaults; a sweep's under ``outputs/multirun/``) holds everything it writes, its log
lines in ``train.log`` (a resumed run's too, a crash's error too); a launch that fails before its run starts
leaves the folder as it found it (an empty one removed). A run ends with the command that evaluates it.
"""

from __future__ import annotations

import time

# This process's start, taken before the imports (E402 below): a run's launch_s and command_s count from here.
# A local multirun's later jobs start at their own call of main().
LAUNCHED = [time.monotonic()]

import sys
from pathlib import Path

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from dexwheel.cli import script_command, shown_path
from dexwheel.hydra_app import hydra_main
from dexwheel.rl.checkpoints import CheckpointError
from dexwheel.rl.evaluation import format_table
from dexwheel.rl.isaaclab_launch import IsaacLabError
from dexwheel.rl.run_config import selection_overrides
from dexwheel.rl.schema import ConfigError
from dexwheel.rl.training import train


def remove_if_empty(folder: Path) -> None:
    """The folder Hydra made for this launch when nothing was written there (a failed launch, or a resumed
    one: the run writes into its own folder), and the folders above it up to the working directory that are
    left empty (``outputs/<run_name>/``, ``outputs/``)."""
    cwd = Path.cwd().resolve()
    path = folder.resolve()
    while path != cwd:
        try:
            path.rmdir()  # only an empty folder
        except OSError:
            return
        if cwd not in path.parents:  # outside the working directory: the launch's own folder only
            return
        path = path.parent


@hydra_main("train")
def main(cfg: DictConfig) -> float:
    hydra_cfg = HydraConfig.get()
    run_dir = Path(hydra_cfg.runtime.output_dir)
    launched = LAUNCHED.pop() if LAUNCHED else time.monotonic()
    try:
        typed_dir = [o for o in hydra_cfg.overrides.hydra if o.startswith("hydra.run.dir=")]
        if cfg.train.resume and typed_dir:  # it would be ignored: a resumed run writes into its own folder
            raise ConfigError(f"{typed_dir[0]}: a resumed run writes into its own folder (train.resume="
                              f"{cfg.train.resume}); leave hydra.run.dir out")  # fmt: skip
        summary = train(cfg, run_dir, overrides=list(hydra_cfg.overrides.task), launched=launched)
    except (ConfigError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    except IsaacLabError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    finally:
        remove_if_empty(run_dir)
    if summary:  # empty on a distributed run's other processes
        print(format_table({cfg.robot.name: summary}))
        shown = shown_path(cfg.train.resume or run_dir)
        print(f"run: {shown}\nevaluate it: {script_command('evaluate.py', f'run={shown}')}")
    return summary.get("return", 0.0)


if __name__ == "__main__":
    # train.resume=<run> alone: Hydra composes the run's own robot, task, drive, ... (its config.yaml)
    sys.argv += selection_overrides(sys.argv[1:], "train.resume")
    main()
