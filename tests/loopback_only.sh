#!/bin/sh
# Run a command (the test suite) in a network namespace of its own, where the loopback interface is the only one.
# The tests' Cyclone DDS config sends on lo only, with multicast off, but Cyclone binds its receive sockets to the
# wildcard address whatever the config says (eclipse-cyclonedds/cyclonedds#1923): only a namespace keeps every
# socket a test opens off the machine's networks. Where the machine allows no namespace (no user namespaces, no
# `ip`), the command runs as it is, and this says so.
if unshare -rn sh -c 'ip link set lo up' 2>/dev/null; then
    DEXWHEEL_LOOPBACK_NETNS=1 exec unshare -rn sh -c 'ip link set lo up && exec "$@"' sh "$@"
fi
echo "tests/loopback_only.sh: no network namespace here (unshare -rn refused); the tests' DDS sockets send on lo" \
    "only but listen on every interface" >&2
exec "$@"
