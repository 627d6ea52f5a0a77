"""The legacy simplified M20 (``docs/spec/solenopsis.md``) that Solenopsis replaces: its own numbers."""

from __future__ import annotations

from dexwheel.robots.description import Inertial, RobotDescription
from dexwheel.robots.wheel_leg import WheelLegParams, build_wheel_leg

# ASSUMPTION: knee products of inertia take the listed + signs on the left and - on the right.
ASSUMPTION_M20_KNEE_PRODUCTS_LEFT = (0.00002448, 0.0000918, 0.0006732)  # ixy, ixz, iyz
ASSUMPTION_M20_WHEEL_RADIUS = 0.096  # the uniform cylinder that reproduces the listed inertia
ASSUMPTION_M20_WHEEL_WIDTH = 0.083
# ASSUMPTION: the same kind of primitives as Solenopsis: its base box centred on the base origin,
# a knee box along the knee-to-axle vector, no drive-end cylinder.
ASSUMPTION_M20_BASE_BOX = ((0.706, 0.310, 0.1714), (0.0, 0.0, 0.0))
ASSUMPTION_M20_KNEE_BOX_SIZE = (0.088, 0.031, 0.237065)

_M20_KNEE_TO_AXLE = (0.0, 0.110, -0.210)
_m20_ixy, _m20_ixz, _m20_iyz = ASSUMPTION_M20_KNEE_PRODUCTS_LEFT
M20_LEGACY = WheelLegParams(
    name="m20_legacy",
    base=Inertial(15.882, (0.003551059, 0.001650758, -0.003464621),
                  (0.0880787, 0.533816, 0.563915, 0.001396, 0.000111, 0.000519)),
    base_box_size=ASSUMPTION_M20_BASE_BOX[0],
    base_box_center=ASSUMPTION_M20_BASE_BOX[1],
    hip_xyz=(0.300, 0.140, 0.0),
    knee_to_axle=_M20_KNEE_TO_AXLE,
    # ASSUMPTION (spec): knee CoM at the middle of the knee-to-axle vector.
    knee_left=Inertial(0.612, (0.0, 0.055, -0.105), (0.005202, 0.005202, 0.0007344, _m20_ixy, _m20_ixz, _m20_iyz)),
    knee_right=Inertial(0.612, (0.0, -0.055, -0.105), (0.005202, 0.005202, 0.0007344, -_m20_ixy, -_m20_ixz, -_m20_iyz)),
    knee_box_size=ASSUMPTION_M20_KNEE_BOX_SIZE,
    knee_drive_cylinder=None,
    wheel_left=Inertial(1.340, (0.0, 0.0, 0.0), (0.003856632, 0.00617472, 0.003856632, 0.0, 0.0, 0.0)),
    wheel_right=Inertial(1.340, (0.0, 0.0, 0.0), (0.003856632, 0.00617472, 0.003856632, 0.0, 0.0, 0.0)),
    wheel_radius=ASSUMPTION_M20_WHEEL_RADIUS,
    wheel_width=ASSUMPTION_M20_WHEEL_WIDTH,
    wheel_center_left=(0.0, 0.0, 0.0),
    stance=(0.0, 0.0, 0.0, 0.0),  # its hips are already +-0.300 m apart: arms straight down
)  # fmt: skip
M20_LEGACY_TOTAL_MASS = 23.690


def m20_legacy() -> RobotDescription:
    return build_wheel_leg(M20_LEGACY)
