"""The G20 simulation bridge: run the simulated hand beside retargeting/teleoperation code, in its place.

python scripts/bridge.py                                   # left hand, SDK commands, hard-write, viewer
python scripts/bridge.py headless=true track_test=true max_steps=800
python scripts/bridge.py plan_nominal=true pd_drive=true speed=0.5 slew_rad_s=3 collision_projection=false
python scripts/bridge.py hand=right domain_id=7 topics.state=/my/state
python scripts/bridge.py backend=isaaclab                  # the same on Isaac Lab (its venv), headless, slew 0

Stops cleanly (exit status 0) on Ctrl-C and SIGTERM; a bad setting, a model that lacks a joint or an
actuator, or a viewer without a display stops it at once with exit status 2 and a message naming it.
``backend=isaaclab`` from the core venv checks the settings here, then replaces this process with the same
command in the Isaac Lab venv (built first when missing, as ``train.py backend=isaaclab`` does), so signals and
the exit status are that process's own.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from dexwheel.hydra_app import hydra_main


@hydra_main("bridge")
def main(cfg: DictConfig) -> None:
    if cfg.get("backend", {}).get("name") == "isaaclab" and cfg.get("headless") is False:
        # its viewer (Newton's GL visualizer) is a GLX window; MUJOCO_GL=egl would point PyOpenGL at EGL when
        # mujoco is imported below, and nothing here renders with MuJoCo
        os.environ.pop("MUJOCO_GL", None)
        os.environ.pop("PYOPENGL_PLATFORM", None)
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
    if settings.backend == "isaaclab" and importlib.util.find_spec("isaaclab") is None:
        relaunch_in_isaaclab_venv()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):  # both end the loop; shutdown then runs in order
        signal.signal(sig, lambda *_: stop.set())
    from dexwheel.sim.rendering import RenderingError as ViewerError

    try:
        run_bridge(settings, stop)
    except (ConfigFieldError, ModelError, ViewerError) as exc:  # a setting only the simulation checks, too
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if settings.backend == "isaaclab":
        # everything is released in order above (DDS entities deleted, threads joined, the simulation closed);
        # the interpreter's own teardown of Isaac Lab, Newton and warp then takes 5-10 s more here: skip it
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def relaunch_in_isaaclab_venv() -> None:
    """Replace this process with this command in the Isaac Lab venv (``dexwheel.rl.isaaclab_launch``)."""
    from dexwheel import warp_cache
    from dexwheel.rl.isaaclab_launch import ROOT, ensure_venv
    from dexwheel.rl.schema import ConfigError

    try:
        python = ensure_venv()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    env = dict(os.environ)
    warp_cache.with_cache(env)
    # this checkout's dexwheel, whichever the venv's .pth names
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(str(python), [str(python), "-u", str(Path(__file__).resolve()), *sys.argv[1:]], env)


if __name__ == "__main__":
    main()
