"""``Solenopsis-v0`` / ``M20Legacy-v0``: wheel-leg velocity tracking on flat ground (one implementation).

The robot is a parameter (``robot="solenopsis"`` or ``"m20_legacy"``); both share the observation and
action layout, so a policy trained on one can be evaluated on the other.

Sign conventions (every joint axis is (0, -1, 0)): a positive knee angle swings the arm's lower end
forward (+x); a positive wheel velocity rolls the robot *backward*, so driving forward at v m/s takes
wheel velocity -v / r on all four wheels; the right side faster forward than the left (right wheels
more negative) turns the base left (counter-clockwise seen from above, positive yaw rate).

Action (``[-1, 1]``, the policy layer's joints in task order, knees then wheels, ``fl, fr, hl, hr``):
knee position targets ``stance + knee_scale * a`` and wheel velocity targets ``wheel_velocity_scale * a``.

Observation (float32; slices in ``env.unwrapped.obs_slices``):

====================  ====  ==========================================================
``base_ang_vel``      3     base angular velocity, base frame, x ``ang_vel_scale`` (0.25)
``projected_gravity`` 3     gravity direction in the base frame (upright: (0, 0, -1))
``velocity_commands`` 2     commanded forward velocity (m/s) and yaw rate (rad/s)
``joint_pos_rel``     4     knee angles minus the stance (wheel angles excluded)
``joint_vel_rel``     8     knee and wheel velocities x ``joint_vel_scale`` (0.05)
``last_action``       A     the previous action (A = 8 with the default layers)
====================  ====  ==========================================================

With ``privileged_obs=True`` the asymmetric-critic part follows: ``base_lin_vel`` (3, base frame,
m/s), ``friction`` (1, offset from nominal), ``base_mass_add`` (1, kg), ``base_com_offset`` (3, m),
``link_mass_scale`` (8, knees then wheels, factor - 1).

Reward: the weighted terms of the ``rewards`` table (:data:`~dexwheel.tasks.velocity.config.REWARDS`), each in
``info`` as ``reward_<term>`` (already weighted and multiplied by the control period), summed in that order.
``info`` also has ``lin_vel_x``, ``ang_vel_z`` (measured, base frame), ``command_lin_vel_x``,
``command_ang_vel_z``, the absolute errors ``lin_vel_x_error`` and ``ang_vel_z_error``, and the
termination causes ``terminated_contact`` and ``terminated_tilt``.

Episodes end (terminated) when a non-wheel body touches the floor or the base tilts past
``max_tilt``, and are truncated after ``episode_length_s``.
"""

from __future__ import annotations

from typing import Any

from dexwheel.envs.base import TaskEnv
from dexwheel.tasks.velocity.config import make_cfg
from dexwheel.tasks.velocity.task import TaskViews, WheelLegTask

#: ``reset(options=...)``: ``base_pose`` (x, y, yaw): start there (on the ground; the reset's draws as without it,
#: :meth:`WheelLegTask.place_base`); ``command`` (forward m/s, yaw rate rad/s): held for the episode.
RESET_OPTIONS = WheelLegTask.RESET_OPTIONS


class WheelLegEnv(TaskViews, TaskEnv):
    """Velocity tracking for a wheel-leg robot. Keyword arguments: see :func:`make_cfg`; how it is shown
    (:class:`~dexwheel.envs.base.TaskEnv`: ``render_mode`` also "depth_array"; the default camera follows the base).

    ``copy.deepcopy`` and pickling give an independent env that continues the same trajectory
    (:class:`~dexwheel.sim.snapshot.Reconstructible`); the renderer is not copied.
    """

    task_class = WheelLegTask
    make_config = staticmethod(make_cfg)
    RENDER_SIZE = (640, 480)
    RENDER_MODES = ("human", "rgb_array", "depth_array")
    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 50}

    def set_command(self, lin_vel_x: float, ang_vel_z: float, hold: bool = True) -> Any:
        """Command a velocity by hand (``hold``: no resampling this episode); returns the new observation."""
        self.task.set_command(lin_vel_x, ang_vel_z, hold=hold)
        return self.task.obs[0].copy()

    def set_override(self, active: bool) -> None:
        """Engage or release the configured override (safety stop) layer."""
        self.task.set_override(active)
