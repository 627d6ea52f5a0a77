import os
import sys
from pathlib import Path

# Offscreen rendering on CPU-only machines; a user's own setting wins.
os.environ.setdefault("MUJOCO_GL", "egl")
sys.path.insert(0, str(Path(__file__).parent))

# fixtures several folders use: dds, client (tests/bridge, tests/isaaclab), x_display (windows, viewers)
pytest_plugins = ["shared_fixtures"]
