"""Solenopsis (vendor document 001, ``docs/spec/solenopsis.md``): the wheel-leg platform's own numbers."""

from __future__ import annotations

from dexwheel.robots.description import Inertial, RobotDescription
from dexwheel.robots.wheel_leg import WheelLegParams, build_wheel_leg

ASSUMPTION_SOLENOPSIS_BASE_BOX_CENTER = (0.0, 0.0, 0.0769)  # box centred at the body CoM height
ASSUMPTION_SOLENOPSIS_KNEE_BOX_CENTER_Z = -0.150
ASSUMPTION_SOLENOPSIS_DRIVE_CYLINDER = (0.0325, 0.031)  # P65 drive end: radius, length
ASSUMPTION_SOLENOPSIS_WHEEL_CENTER_Y = 0.059326  # on the wheel CoM's axial offset

SOLENOPSIS = WheelLegParams(
    name="solenopsis",
    base=Inertial(17.401, (-0.000072, 0.000171, 0.076892),
                  (0.133964838, 0.363696493, 0.450717599, -0.000732466, 0.000157104, 0.000165399)),
    base_box_size=(0.706, 0.310, 0.1714),
    base_box_center=ASSUMPTION_SOLENOPSIS_BASE_BOX_CENTER,
    hip_xyz=(0.117577164466, 0.167, 0.070),
    knee_to_axle=(0.0, 0.0, -0.300),
    knee_left=Inertial(0.955, (-0.000040, -0.001088, -0.158988),
                       (0.014124479, 0.014470094, 0.000478899, 0.000002919, 0.000004851, -0.000261898)),
    knee_right=Inertial(0.955, (0.000040, 0.001088, -0.158988),
                        (0.014124479, 0.014470094, 0.000478899, 0.000002919, -0.000004851, 0.000261898)),
    knee_box_size=(0.088, 0.031, 0.3765),
    knee_drive_cylinder=ASSUMPTION_SOLENOPSIS_DRIVE_CYLINDER,
    wheel_left=Inertial(1.340, (-0.000002, 0.059326, -0.000009),
                        (0.003296552, 0.005826562, 0.003296995, 0.000000144, -0.000000077, 0.000000424)),
    wheel_right=Inertial(1.340, (0.000002, -0.059326, -0.000009),
                         (0.003296552, 0.005826562, 0.003296995, 0.000000144, 0.000000077, -0.000000424)),
    wheel_radius=0.098804,
    wheel_width=0.082959,
    wheel_center_left=(0.0, ASSUMPTION_SOLENOPSIS_WHEEL_CENTER_Y, 0.0),
    # An A stance (front arms forward, hind arms back; q = 0 leaves only 0.038 m between a side's wheels),
    # which kp 80 lets settle near +-0.6 rad with the base about 0.276 m up.
    stance=(0.5, 0.5, -0.5, -0.5),
    knee_box_center_z=ASSUMPTION_SOLENOPSIS_KNEE_BOX_CENTER_Z,
)  # fmt: skip
SOLENOPSIS_TOTAL_MASS = 26.581


def solenopsis() -> RobotDescription:
    return build_wheel_leg(SOLENOPSIS)
