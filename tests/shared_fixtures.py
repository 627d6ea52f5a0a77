"""Fixtures several test folders use (registered for all of them by ``tests/conftest.py``): this process's
Cyclone DDS on the loopback interface with multicast off, a ROS 2 wire-format client (the bridge tests), and
a virtual X screen (the window tests). Imports happen inside them, so a venv without cyclonedds only skips
the tests that ask for them."""

import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def dds():
    """This process's Cyclone config: loopback, no multicast (set before its first participant)."""
    from dexwheel.bridge.loopback import use_loopback

    old = os.environ.get("CYCLONEDDS_URI")
    use_loopback()
    yield
    if old is None:
        os.environ.pop("CYCLONEDDS_URI", None)
    else:
        os.environ["CYCLONEDDS_URI"] = old


@pytest.fixture(scope="module")
def client(dds):
    """A ROS 2 wire-format client on the tests' own domain."""
    from ros2_client import Ros2Client, domain_for_tests

    c = Ros2Client(domain_for_tests())
    yield c
    c.close()


@pytest.fixture(scope="module")
def x_display() -> Iterator[str]:
    """A fresh Xvfb screen for this module (``-displayfd``: the server picks a free display number; local
    socket only); skips without Debian's xvfb."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (Debian package xvfb)")
    read_end, write_end = os.pipe()
    server = subprocess.Popen([xvfb, "-displayfd", str(write_end), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                              pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()  # written once the server accepts connections
    if not number:
        server.kill()
        pytest.skip("Xvfb did not start")
    try:
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)
