"""LinkerHand G20 (left, and its mirror image, the right): facts from ``docs/spec/g20.md``.

Kinematics and mass properties come from the vendor's public left-hand URDF; limits, mimic ratios,
the SDK channel table and the simulation settings from the vendor documents. Collision geometry is the project's
own: capsules and a palm box sized from the kinematics (no vendor meshes are available).
The right hand is derived here by mirroring through the xz-plane; it is not vendor data.
"""

from __future__ import annotations

from dexwheel.robots.description import (
    Actuator,
    Body,
    CameraView,
    ContactSettings,
    Geom,
    Inertial,
    Joint,
    Mimic,
    RobotDescription,
)
from dexwheel.robots.shapes import capsule_between, mirror_y

FINGERS = ("index", "middle", "ring", "pinky")

# -- joint names (seed) --------------------------------------------------------------------------
THUMB_JOINTS = ("thumb_cmc_yaw", "thumb_cmc_roll", "thumb_cmc_pitch", "thumb_mcp", "thumb_ip")
# Kinematic tree order of the vendor URDF: pinky, ring, middle, index, thumb.
ALL_JOINTS: tuple[str, ...] = (
    *(f"{f}_{j}" for f in ("pinky", "ring", "middle", "index") for j in ("mcp_roll", "mcp_pitch", "pip", "dip")),
    *THUMB_JOINTS,
)
MIMIC_RATIOS: dict[str, tuple[str, float]] = {
    "thumb_ip": ("thumb_mcp", 1.02),
    **{f"{f}_dip": (f"{f}_pip", 0.89) for f in FINGERS},
}
MIMIC_JOINTS: tuple[str, ...] = tuple(j for j in ALL_JOINTS if j in MIMIC_RATIOS)
ACTIVE_JOINTS: tuple[str, ...] = tuple(j for j in ALL_JOINTS if j not in MIMIC_RATIOS)
#: Named groups of active joints (what a composer layer can take over): the thumb, each finger, all four.
JOINT_GROUPS: dict[str, tuple[str, ...]] = {
    "thumb": tuple(j for j in ACTIVE_JOINTS if j.startswith("thumb_")),
    **{f: tuple(j for j in ACTIVE_JOINTS if j.startswith(f"{f}_")) for f in FINGERS},
    "fingers": tuple(j for j in ACTIVE_JOINTS if not j.startswith("thumb_")),
    "all": ACTIVE_JOINTS,
}

# -- limits (seed, rad); identical in the MJCF joint range and position-actuator ctrlrange ------
JOINT_LIMITS: dict[str, tuple[float, float]] = {
    "thumb_cmc_roll": (0.0, 1.47),
    "thumb_cmc_yaw": (0.0, 1.57),
    "thumb_cmc_pitch": (0.0, 0.84),
    "thumb_mcp": (0.0, 1.26),
    "thumb_ip": (0.0, 1.29),
    **{f"{f}_mcp_roll": (-0.23, 0.23) for f in FINGERS},
    **{f"{f}_mcp_pitch": (0.0, 1.22) for f in FINGERS},
    **{f"{f}_pip": (0.0, 1.74) for f in FINGERS},
    **{f"{f}_dip": (0.0, 1.55) for f in FINGERS},
}
# The vendor URDF's joint effort/velocity limits are not in the spec; the actuator force range is.
JOINT_EFFORT = 8.0
JOINT_VELOCITY = 6.0

# -- SDK protocol (vendor bridge §4): 20 channels, each 0..255 ------------------------------------
SDK_CHANNELS = 20
SDK_MAX_VALUE = 255
SDK_CHANNEL_JOINTS: tuple[str | None, ...] = (
    "thumb_cmc_pitch",
    "index_mcp_pitch",
    "middle_mcp_pitch",
    "ring_mcp_pitch",
    "pinky_mcp_pitch",
    "thumb_cmc_roll",
    "index_mcp_roll",
    "middle_mcp_roll",
    "ring_mcp_roll",
    "pinky_mcp_roll",
    "thumb_cmc_yaw",
    None,
    None,
    None,
    None,  # 11-14 reserved
    "thumb_mcp",
    "index_pip",
    "middle_pip",
    "ring_pip",
    "pinky_pip",
)
# Channels 15-19 are in the motor/tip arc space: joint = arc / ratio (the "divide by mimic" rule).
SDK_ARC_CHANNELS: tuple[int, ...] = (15, 16, 17, 18, 19)
G20_L_MIN = (0, 0, 0, 0, 0, 0.0, -0.23, -0.23, -0.23, -0.23, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
G20_L_MAX = (0.84, 1.22, 1.22, 1.22, 1.22, 1.47, 0.23, 0.23, 0.23, 0.23, 1.57, 0, 0, 0, 0, 1.29, 1.55, 1.55, 1.55, 1.55)
G20_L_DIR = (-1, -1, -1, -1, -1, -1, +1, +1, +1, +1, -1, 0, 0, 0, 0, -1, -1, -1, -1, -1)
# Right hand: the same table. The right hand mirrors the abduction/yaw axes ((ax, ay, az) ->
# (-ax, ay, -az)), so one joint angle already means one anatomical posture on both hands; the same
# SDK value therefore spreads the fingers the same anatomical way without flipping a direction.
# (The vendor's right-hand SDK table flips the abduction direction because its right URDF does not
# mirror those axes.) tests/robots/test_robot_models.py proves the mirror symmetry of the resulting poses.
G20_R_MIN, G20_R_MAX, G20_R_DIR = G20_L_MIN, G20_L_MAX, G20_L_DIR

SDK_PAD_VALUE = 255  # a command shorter than 20 channels is padded with this
G20_OPEN_CMD = (255, 255, 255, 255, 255, 255, 193, 148, 105, 42, 245, 255, 255, 255, 255, 255, 255, 255, 255, 255)
G20_HALF_FIST_CMD = (80, 80, 80, 80, 80, 255, 193, 148, 105, 42, 245, 255, 255, 255, 255, 80, 80, 80, 80, 80)
# A full fist: every flexion channel at its closed end, the thumb swung across and pressed into the palm.
G20_FULL_FIST_CMD = (0, 0, 0, 0, 0, 40, 193, 148, 105, 42, 0, 255, 255, 255, 255, 0, 0, 0, 0, 0)
#: Goal presets (seed): SDK commands, mapped through the hand's SDK table.
GOAL_PRESETS: dict[str, tuple[int, ...]] = {
    "open": G20_OPEN_CMD,
    "half_fist": G20_HALF_FIST_CMD,
    "full_fist": G20_FULL_FIST_CMD,
}

# -- simulation settings (vendor bridge §3.4) ---------------------------------------------------
TIMESTEP = 0.002
JOINT_DAMPING = 0.15
JOINT_ARMATURE = 0.01
ACTUATOR_KP = 200.0
ACTUATOR_KV = 8.0
ACTUATOR_FORCERANGE = (-8.0, 8.0)
#: One position actuator per hinge, mimic joints included (vendor bridge §3.4 D), in ALL_JOINTS order.
ACTUATOR_NAMES: tuple[str, ...] = tuple(f"{j}_pos" for j in ALL_JOINTS)
CONTACT = ContactSettings(margin=0.0005, friction=(1.0, 0.5, 0.01), solref=(0.004, 1.0), solimp=(0.9, 0.95, 0.001))
# compare camera (vendor bridge §5.6)
COMPARE_CAMERA = CameraView(lookat=(0.04, -0.04, 0.12), distance=0.50, azimuth=180.0, elevation=-12.0)

# -- kinematic tree and mass properties (vendor URDF, renamed) ---------------------------------
_I = Inertial
_FINGER_ROOTS = {
    "pinky": (-0.0098, 0.03525, 0.1436),
    "ring": (-0.0098, 0.01175, 0.1481),
    "middle": (-0.0098, -0.01175, 0.1526),
    "index": (-0.0098, -0.03525, 0.1481),
}
_PIP_ORIGIN = (-0.0035, 0.0, 0.0449)
_DIP_ORIGIN = (0.00683438, 0.0, 0.03100631)
_MASS: dict[str, Inertial] = {
    "hand_base": _I(0.12821, (-0.00155361, -0.000106064, 0.0734079),
                    (0.000275064, 0.00017199, 0.000119247, -3.19165e-07, -4.59582e-07, 5.01216e-06)),
    "pinky_metacarpals": _I(0.0106056, (0.00922349, 2.30814e-05, 0.0496732),
                            (1.23475e-06, 1.22617e-06, 4.36646e-07, -4.66301e-10, 9.9949e-08, -9.43339e-10)),
    "pinky_proximal": _I(0.0102151, (-0.00109761, 2.39638e-05, 0.0515721),
                         (1.22426e-06, 1.21857e-06, 4.21116e-07, -4.66301e-10, 9.9949e-08, -9.43339e-10)),
    "pinky_middle": _I(0.00570037, (0.00153703, 1.4344e-05, 0.0294795),
                       (4.91196e-07, 4.46377e-07, 2.67214e-07, -4.8587e-10, 3.69081e-08, -1.1119e-09)),
    "pinky_distal": _I(0.00313067, (-0.0065441, -3.01856e-07, 0.00867929),
                       (2.09661e-07, 2.07629e-07, 1.28085e-07, 1.40992e-11, 5.29697e-08, 4.76808e-11)),
    "ring_metacarpals": _I(0.0106056, (0.00922349, 2.30812e-05, 0.0496732),
                           (1.23475e-06, 1.22617e-06, 4.36646e-07, -4.66286e-10, 9.9949e-08, -9.43339e-10)),
    "ring_proximal": _I(0.0102151, (-0.00109761, 2.39635e-05, 0.0515721),
                        (1.22426e-06, 1.21857e-06, 4.21116e-07, -4.66286e-10, 9.9949e-08, -9.43339e-10)),
    "ring_middle": _I(0.00570037, (0.00153703, 1.43436e-05, 0.0294795),
                      (4.91196e-07, 4.46377e-07, 2.67214e-07, -4.85855e-10, 3.69081e-08, -1.1119e-09)),
    "ring_distal": _I(0.00313067, (-0.0065441, -3.02642e-07, 0.00867929),
                      (2.09661e-07, 2.07629e-07, 1.28085e-07, 1.41142e-11, 5.29697e-08, 4.76804e-11)),
    "middle_metacarpals": _I(0.0106056, (0.00922349, 2.30813e-05, 0.0496732),
                             (1.23475e-06, 1.22617e-06, 4.36646e-07, -4.66299e-10, 9.9949e-08, -9.43336e-10)),
    "middle_proximal": _I(0.0102151, (-0.00109761, 2.39637e-05, 0.0515721),
                          (1.22426e-06, 1.21857e-06, 4.21116e-07, -4.66299e-10, 9.9949e-08, -9.43336e-10)),
    "middle_middle": _I(0.00570037, (0.00153703, 1.43439e-05, 0.0294795),
                        (4.91196e-07, 4.46377e-07, 2.67214e-07, -4.85868e-10, 3.69081e-08, -1.1119e-09)),
    "middle_distal": _I(0.00313067, (-0.0065441, -3.02107e-07, 0.00867929),
                        (2.09661e-07, 2.07629e-07, 1.28085e-07, 1.4101e-11, 5.29697e-08, 4.76833e-11)),
    "index_metacarpals": _I(0.0106056, (0.00922349, 2.30813e-05, 0.0496732),
                            (1.23475e-06, 1.22617e-06, 4.36646e-07, -4.663e-10, 9.9949e-08, -9.43336e-10)),
    "index_proximal": _I(0.0102151, (-0.00109761, 2.39637e-05, 0.0515721),
                         (1.22426e-06, 1.21857e-06, 4.21116e-07, -4.663e-10, 9.9949e-08, -9.43336e-10)),
    "index_middle": _I(0.00570037, (0.00153703, 1.43438e-05, 0.0294795),
                       (4.91196e-07, 4.46377e-07, 2.67214e-07, -4.85868e-10, 3.69081e-08, -1.1119e-09)),
    "index_distal": _I(0.00313067, (-0.0065441, -3.02194e-07, 0.00867929),
                       (2.09661e-07, 2.07629e-07, 1.28085e-07, 1.41005e-11, 5.29697e-08, 4.76841e-11)),
    "thumb_metacarpals_base1": _I(0.0451816, (0.0522212, -0.0454599, -0.00986072),
                                  (1.3372e-05, 5.6487e-06, 1.06302e-05, 1.97842e-06, 5.44018e-07, -5.09523e-07)),
    "thumb_metacarpals_base2": _I(0.0354002, (4.38271e-05, 0.0279058, 0.0562271),
                                  (1.07007e-05, 7.19562e-06, 4.57858e-06, -1.83607e-08, -2.92613e-08, -2.70699e-06)),
    "thumb_metacarpals": _I(0.0345477, (-4.35183e-05, 0.00471443, 0.0475068),
                            (1.06364e-05, 8.85645e-06, 2.84992e-06, -1.06627e-09, -3.45873e-08, -1.9298e-07)),
    "thumb_proximal": _I(0.0114709, (-0.000141394, -0.00102081, 0.0300815),
                         (1.07626e-06, 8.38127e-07, 4.11579e-07, 1.21045e-09, 3.99177e-09, 1.36526e-08)),
    "thumb_distal": _I(0.0058767, (-1.99617e-05, 0.000600375, 0.0111104),
                       (4.41999e-07, 3.61808e-07, 1.64385e-07, 2.64732e-10, -9.63083e-10, 9.50727e-08)),
}  # fmt: skip
TOTAL_MASS = 0.3793  # kg, spec

# -- collision primitives, sized from the kinematics (see spec "Sizing the primitives") --------
# Palm: the equivalent uniform box of hand_base, centred at its CoM.
PALM_HALF_SIZE = (0.0275 / 2, 0.1020 / 2, 0.1239 / 2)
FINGER_RADIUS = {"proximal": 0.0075, "middle": 0.0068, "distal": 0.0062}
DISTAL_TIP = (-0.002, 0.0, 0.018)  # capsule end point; with the radius the pad reaches ~24 mm
THUMB_RADIUS = {"thumb_metacarpals": 0.0085, "thumb_proximal": 0.0078, "thumb_distal": 0.0079}
THUMB_DISTAL_TIP = (0.0, 0.0006, 0.0185)

_SKIN = (0.85, 0.75, 0.65, 1.0)
_PALM_RGBA = (0.3, 0.3, 0.35, 1.0)


def _joint(name: str, axis: tuple[float, float, float]) -> Joint:
    return Joint(name, axis, JOINT_LIMITS[name], JOINT_EFFORT, JOINT_VELOCITY)


def _finger_bodies(finger: str) -> list[Body]:
    roll = _joint(f"{finger}_mcp_roll", (-1.0, 0.0, 0.0))
    segments = [
        Body(
            f"{finger}_metacarpals", "hand_base", _FINGER_ROOTS[finger], (0, 0, 0), _MASS[f"{finger}_metacarpals"], roll
        ),
    ]
    chain = [
        ("proximal", f"{finger}_metacarpals", (0.0105, 0.0, 0.0), f"{finger}_mcp_pitch", _PIP_ORIGIN),
        ("middle", f"{finger}_proximal", _PIP_ORIGIN, f"{finger}_pip", _DIP_ORIGIN),
        ("distal", f"{finger}_middle", _DIP_ORIGIN, f"{finger}_dip", DISTAL_TIP),
    ]
    for seg, parent, origin, joint_name, end in chain:
        name = f"{finger}_{seg}"
        geom = capsule_between(f"{name}_col", (0.0, 0.0, 0.0), end, FINGER_RADIUS[seg])
        segments.append(
            Body(
                name,
                parent,
                origin,
                (0, 0, 0),
                _MASS[name],
                _joint(joint_name, (0.0, 1.0, 0.0)),
                (geom,),
                (_visual(geom, _SKIN),),
            )
        )
    return segments


def _visual(geom: Geom, rgba: tuple[float, float, float, float]) -> Geom:
    return Geom(geom.name.replace("_col", "_vis"), geom.type, geom.size, geom.pos, geom.quat, rgba)


def _thumb_bodies() -> list[Body]:
    meta = capsule_between(
        "thumb_metacarpals_col", (0.0, 0.0, 0.0), (0.0, 0.0076743, 0.055704), THUMB_RADIUS["thumb_metacarpals"]
    )
    prox = capsule_between(
        "thumb_proximal_col", (0.0, 0.0, 0.0), (0.0, -0.0010918, 0.034545), THUMB_RADIUS["thumb_proximal"]
    )
    dist = capsule_between("thumb_distal_col", (0.0, 0.0, 0.0), THUMB_DISTAL_TIP, THUMB_RADIUS["thumb_distal"])
    x = (-1.0, 0.0, 0.0)
    return [
        Body("thumb_metacarpals_base1", "hand_base", (0.0, -0.01, 0.0436), (0, 0, 0),
             _MASS["thumb_metacarpals_base1"], _joint("thumb_cmc_yaw", x)),
        Body("thumb_metacarpals_base2", "thumb_metacarpals_base1", (0.039005, 0.0, 0.0), (2.2385, -0.22166, 0.27191),
             _MASS["thumb_metacarpals_base2"], _joint("thumb_cmc_roll", (0.0, 1.0, 0.0))),
        Body("thumb_metacarpals", "thumb_metacarpals_base2", (8.7527e-05, 0.0005, 0.0188), (-0.52959, 0, 0),
             _MASS["thumb_metacarpals"], _joint("thumb_cmc_pitch", x), (meta,), (_visual(meta, _SKIN),)),
        Body("thumb_proximal", "thumb_metacarpals", (0.0, 0.0076743, 0.055704), (0, 0, 0),
             _MASS["thumb_proximal"], _joint("thumb_mcp", x), (prox,), (_visual(prox, _SKIN),)),
        Body("thumb_distal", "thumb_proximal", (0.0, -0.0010918, 0.034545), (0, 0, 0),
             _MASS["thumb_distal"], _joint("thumb_ip", x), (dist,), (_visual(dist, _SKIN),)),
    ]  # fmt: skip


def _contact_excludes() -> tuple[tuple[str, str], ...]:
    """Pairs that overlap by construction (spec): everything else, fingertip-palm included, stays live."""
    thumb = (
        "thumb_metacarpals_base1",
        "thumb_metacarpals_base2",
        "thumb_metacarpals",
        "thumb_proximal",
        "thumb_distal",
    )
    pairs = [("hand_base", b) for b in thumb[:3]]
    pairs += [("hand_base", f"{f}_{seg}") for f in FINGERS for seg in ("metacarpals", "proximal")]
    pairs += [(thumb[i], thumb[i + 1]) for i in range(len(thumb) - 1)]  # neighbours
    pairs += [(thumb[i], thumb[i + 2]) for i in range(len(thumb) - 2)]  # second neighbours
    for f in FINGERS:
        pairs += [
            (f"{f}_metacarpals", f"{f}_proximal"),
            (f"{f}_proximal", f"{f}_middle"),
            (f"{f}_middle", f"{f}_distal"),
        ]
    return tuple(pairs)


def g20_left() -> RobotDescription:
    palm = Geom("hand_base_col", "box", PALM_HALF_SIZE, _MASS["hand_base"].com)
    bodies = [
        Body(
            "hand_base",
            None,
            (0.0, 0.0, 0.0),
            (0.0, 0.0, 0.0),
            _MASS["hand_base"],
            None,
            (palm,),
            (_visual(palm, _PALM_RGBA),),
        )
    ]
    for finger in ("pinky", "ring", "middle", "index"):
        bodies += _finger_bodies(finger)
    bodies += _thumb_bodies()
    actuators = tuple(
        Actuator(name, j, "position", ACTUATOR_KP, ACTUATOR_KV, ACTUATOR_FORCERANGE, JOINT_LIMITS[j])
        for name, j in zip(ACTUATOR_NAMES, ALL_JOINTS, strict=True)
    )
    return RobotDescription(
        name="g20_left",
        bodies=tuple(bodies),
        actuators=actuators,
        floating_base=False,
        timestep=TIMESTEP,
        integrator="implicitfast",
        joint_damping=JOINT_DAMPING,
        joint_armature=JOINT_ARMATURE,
        contact=CONTACT,
        contact_excludes=_contact_excludes(),
        mimics=tuple(Mimic(j, src, ratio) for j, (src, ratio) in MIMIC_RATIOS.items()),
        balanceinertia=True,
        camera=COMPARE_CAMERA,
    )


def g20_right() -> RobotDescription:
    """The mirror image of the left hand through the xz-plane (the project's own, not vendor data)."""
    return mirror_y(g20_left(), name="g20_right")


__all__ = [
    "ACTIVE_JOINTS",
    "ACTUATOR_NAMES",
    "ALL_JOINTS",
    "COMPARE_CAMERA",
    "GOAL_PRESETS",
    "JOINT_GROUPS",
    "JOINT_LIMITS",
    "MIMIC_JOINTS",
    "MIMIC_RATIOS",
    "g20_left",
    "g20_right",
]
