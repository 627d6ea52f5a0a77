"""The G20 simulation bridge: the hand's SDK topic protocol in, joint states out, ROS 2's wire format over
Cyclone DDS without a ROS install (``pip install -e ".[bridge]"``; docs/how-to/bridge.md).

Modules: :mod:`~dexwheel.bridge.ros2_types` (the ROS 2 message types as DDS IDL),
:mod:`~dexwheel.bridge.transport` (topics with ROS 2's QoS and type hash), :mod:`~dexwheel.bridge.loopback`
(a loopback-only Cyclone config), :mod:`~dexwheel.bridge.config`, :mod:`~dexwheel.bridge.node` (handlers and
the real-time loop on the env's action path), :mod:`~dexwheel.bridge.mujoco_sim` and :mod:`~dexwheel.bridge.isaac_sim`
(the hand on MuJoCo, alone or holding an object, or, in the Isaac Lab venv, on Isaac Lab),
:mod:`~dexwheel.bridge.app` (wiring and shutdown order), :mod:`~dexwheel.bridge.policy_node` (an exported in-hand
policy on the hand's SDK topics: ``scripts/policy_node.py``).
Nothing here is imported by the rest of dexwheel, so ``cyclonedds`` stays optional.
"""
