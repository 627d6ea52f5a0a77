"""The DDS fixtures both bridge test files use (registered for every test folder by ``tests/conftest.py``):
this process's Cyclone DDS on the loopback interface with multicast off, and a ROS 2 wire-format client.
Imports happen inside them, so a venv without cyclonedds only skips the tests that ask for them."""

import os

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
