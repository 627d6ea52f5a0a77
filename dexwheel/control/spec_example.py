"""The composer spec's example layouts: a 29-joint humanoid policy, two head joints, a waving arm.

Shared by the composer tests and ``benchmarks/bench_composer.py`` so both exercise the same case.
"""

from __future__ import annotations

from dexwheel.control.layout import JointLayout

LEGS = [f"{s}_{j}_joint" for s in ("l", "r") for j in ("hip_y", "hip_x", "hip_z", "knee_y", "ankle_y", "ankle_x")]
WAIST = ["waist_z_joint", "waist_x_joint", "waist_y_joint"]
ARMS = [
    f"{s}_{j}_joint"
    for s in ("l", "r")
    for j in ("shld_y", "shld_x", "shld_z", "elb_y", "wrist_x", "wrist_y", "wrist_z")
]
POLICY_JOINTS = JointLayout((*LEGS, *WAIST, *ARMS), "policy")
HEAD_JOINTS = JointLayout(("neck_y_joint", "neck_z_joint"), "head")
STATE_OUTPUT_JOINTS = JointLayout((*POLICY_JOINTS.names, *HEAD_JOINTS.names), "state")
WAVE_JOINTS = JointLayout(ARMS[7:11], "wave")  # part of the right arm
