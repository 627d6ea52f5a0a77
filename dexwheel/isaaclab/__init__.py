"""Isaac Lab 3 backend: the same robots and tasks on Newton + MuJoCo-Warp, kit-less.

Runs in its own Python 3.12 venv (``make isaaclab-venv`` -> ``.venv-isaaclab``): isaaclab 3.0.0 pins
mujoco 3.12 through newton, while the MuJoCo envs need mujoco 4.0. Importing this package imports
nothing from Isaac Lab; its submodules do, except :mod:`~dexwheel.isaaclab.scenarios`,
:mod:`~dexwheel.isaaclab.cross_backend` (both venvs) and :mod:`~dexwheel.isaaclab.mujoco_reference` (the core
venv: the MuJoCo half of the cross-backend comparison). What the Isaac Lab side reads from dexwheel is the robot
descriptions (:mod:`dexwheel.robots`) and the task configurations (:mod:`dexwheel.tasks.velocity.config`,
:mod:`dexwheel.tasks.hand_pose.config`), both plain data, and what it cannot run of them
(:mod:`dexwheel.rl.isaaclab_support`, which the core venv's checks read too).
"""
