"""The action path: action mappings, joint command composer and resolver, motor frames.

Data flows one way: action -> mapping -> source ``JointTargetBuffer`` -> ``JointCommandComposer``
-> task-order ``MotorFrame`` -> ``JointCommandResolver`` -> robot-order ``MotorFrame``. Every stage is
built once and updated in place. Pure numpy.
"""

from dexwheel.control.composer import JointCommandComposer, JointCommandLayer
from dexwheel.control.coupling import MimicCompletion
from dexwheel.control.errors import (
    ActionClipWarning,
    ActionError,
    JointCommandError,
    JointDroppedWarning,
    SourceTimeoutError,
    UnknownJointError,
)
from dexwheel.control.g20_sdk import (
    G20_MIMIC,
    G20SdkMapping,
    clip_and_complete,
    complete_mimic,
    g20_delta_mapping,
    g20_nominal_mapping,
    g20_normalized_mapping,
)
from dexwheel.control.latest import LatestValueSlot, SlotState, TimeoutPolicy
from dexwheel.control.layout import JointLayout
from dexwheel.control.mappings import (
    BoundedMapping,
    DeltaMapping,
    NominalMapping,
    NormalizedMapping,
    OutOfRange,
)
from dexwheel.control.resolver import JointCommandDefaults, JointCommandResolver, JointDefault
from dexwheel.control.targets import FIELDS, FRAME_FIELDS, JointTargetBuffer, JointTargetView, MotorFrame

__all__ = [
    "FIELDS",
    "FRAME_FIELDS",
    "G20_MIMIC",
    "ActionClipWarning",
    "ActionError",
    "BoundedMapping",
    "DeltaMapping",
    "G20SdkMapping",
    "JointCommandComposer",
    "JointCommandDefaults",
    "JointCommandError",
    "JointCommandLayer",
    "JointCommandResolver",
    "JointDefault",
    "JointDroppedWarning",
    "JointLayout",
    "JointTargetBuffer",
    "JointTargetView",
    "LatestValueSlot",
    "MimicCompletion",
    "MotorFrame",
    "NominalMapping",
    "NormalizedMapping",
    "OutOfRange",
    "SlotState",
    "SourceTimeoutError",
    "TimeoutPolicy",
    "UnknownJointError",
    "clip_and_complete",
    "complete_mimic",
    "g20_delta_mapping",
    "g20_nominal_mapping",
    "g20_normalized_mapping",
]
