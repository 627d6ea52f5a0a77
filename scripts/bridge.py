"""The G20 simulation bridge: run the simulated hand beside retargeting/teleoperation code, in its place.

python scripts/bridge.py                                   # left hand, SDK commands, hard-write, viewer
python scripts/bridge.py headless=true track_test=true max_steps=800
python scripts/bridge.py plan_nominal=true drive=pd speed=0.5 slew_rad_s=3 collision_projection=false
python scripts/bridge.py hand=right domain_id=7 topics.state=/my/state

Stops cleanly (exit status 0) on Ctrl-C and SIGTERM; a bad setting, a model that lacks a joint or an
actuator, or a viewer without a display stops it at once with exit status 2 and a message naming it.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

CONFIG_DIR = str(Path(__file__).resolve().parents[1] / "configs")


@hydra.main(config_path=CONFIG_DIR, config_name="bridge", version_base="1.3")
def main(cfg: DictConfig) -> None:
    from dexwheel.fields import ConfigFieldError
    from dexwheel.sim.model_checks import ModelError

    try:
        from dexwheel.bridge.app import run_bridge
        from dexwheel.bridge.config import BridgeConfig
    except ImportError as exc:
        print(f"error: the bridge needs its extra: pip install -e '.[bridge]' ({exc})", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        settings = BridgeConfig.from_mapping(OmegaConf.to_container(cfg, resolve=True))  # type: ignore[arg-type]
    except ConfigFieldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):  # both end the loop; shutdown then runs in order
        signal.signal(sig, lambda *_: stop.set())
    from dexwheel.bridge.viewer import ViewerError

    try:
        run_bridge(settings, stop)
    except (ModelError, ViewerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
