import os
import sys
from pathlib import Path

# Offscreen rendering on CPU-only machines; a user's own setting wins.
os.environ.setdefault("MUJOCO_GL", "egl")
sys.path.insert(0, str(Path(__file__).parent))

# the bridge tests' DDS fixtures (dds, client), for tests/bridge and tests/isaaclab alike
pytest_plugins = ["dds_fixtures"]
