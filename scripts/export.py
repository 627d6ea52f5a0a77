"""Export a trained policy as ONNX (observation normaliser inside) plus JSON metadata.

python scripts/export.py run=outputs/<run>                       # <run>/export/policy.onnx and policy.json
python scripts/export.py run=outputs/<run> checkpoint=best out=deploy/policy.onnx overwrite=true
python scripts/evaluate.py policy=onnx onnx=outputs/<run>/export/policy.onnx   # play it back

The graph maps raw float32 observations ``obs`` (batch, obs_size) to ``actions`` (batch, action_size), the
deterministic action before clipping; the metadata gives the bounds to clip to, the observation layout, the
action joints, the control rate (dexwheel/rl/export.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from omegaconf import DictConfig

from dexwheel.cli import shown_path
from dexwheel.hydra_app import hydra_main
from dexwheel.rl.checkpoints import CheckpointError
from dexwheel.rl.schema import ConfigError, as_paths

KEYS = ("run", "checkpoint", "out", "overwrite")  # configs/export.yaml


def export(cfg: DictConfig) -> tuple[Path, Path]:
    takes = ", ".join(f"{k}=" for k in KEYS)
    unknown = [k for k in cfg if k not in KEYS]  # +key=...: Hydra adds it, the export would ignore it
    if unknown:
        raise ConfigError(f"{', '.join(unknown)}: no such export setting; export.py takes {takes}")
    deleted = [k for k in KEYS if k not in cfg]  # ~key: Hydra deletes it
    if deleted:
        raise ConfigError(f"~{', ~'.join(deleted)}: export.py's settings cannot be deleted; it takes {takes}")
    as_paths(cfg, ("run", "checkpoint", "out"))
    from dexwheel.rl.export import export_policy  # torch and onnx load once the keys are known

    if not isinstance(cfg.overwrite, bool):
        raise ConfigError(f"overwrite: must be true or false, got {cfg.overwrite!r}")
    if not cfg.run:
        raise ConfigError("run: export needs run=<training run folder>")
    onnx_path, meta_path = export_policy(cfg.run, cfg.checkpoint, cfg.out, overwrite=cfg.overwrite)
    print(f"onnx: {shown_path(onnx_path)}")
    print(f"metadata: {shown_path(meta_path)}")
    return onnx_path, meta_path


@hydra_main("export")
def main(cfg: DictConfig) -> None:
    try:
        export(cfg)
    except (ConfigError, CheckpointError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
