"""An exported G20 in-hand policy on the hand's SDK topics: what a user runs against the real hand.

python scripts/bridge.py object.shape=cube pd_drive=true speed=1 headless=true      # the simulated hand, holding a cube
python scripts/policy_node.py onnx=outputs/rotate/export/policy.onnx                 # the policy, over DDS

Each step at the export's control rate: the hand's joint state in, the run's observation terms and action path,
20 SDK values 0..255 out (:mod:`dexwheel.bridge.policy_node`). Stops cleanly (exit status 0) on Ctrl-C, SIGTERM and
``max_steps``; a bad setting or export, no joint state within ``wait_s`` or a state that goes silent stops it with
exit status 2 and one line naming it.
"""

from __future__ import annotations

import signal
import sys
import threading

from omegaconf import DictConfig, OmegaConf

from dexwheel.hydra_app import hydra_main


@hydra_main("policy_node")
def main(cfg: DictConfig) -> None:
    from dexwheel.fields import ConfigFieldError
    from dexwheel.rl.schema import ConfigError

    try:
        from dexwheel.bridge.policy_node import NodeError, PolicyNodeConfig, run_policy_node
    except ImportError as exc:
        print(f"error: the policy node needs the bridge's extra: pip install -e '.[bridge]' ({exc})", file=sys.stderr)
        raise SystemExit(2) from None
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        settings = PolicyNodeConfig.from_mapping(OmegaConf.to_container(cfg, resolve=True))  # type: ignore[arg-type]
        stats = run_policy_node(settings, stop)
    except (ConfigFieldError, ConfigError, NodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print(
        f"policy node stopped ({stats.reason}): {stats.steps} commands sent in {stats.wall_s:.2f} s, "
        f"{stats.states} joint states ({stats.rejected} rejected), {stats.late_steps} late steps"
    )


if __name__ == "__main__":
    main()
