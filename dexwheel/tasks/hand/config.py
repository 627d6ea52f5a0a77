"""What the hand tasks' configs share: the control rate's check."""

from __future__ import annotations

from dexwheel.fields import ConfigFieldError


def control_substeps(control_hz: float, timestep: float, env: str = "G20Hand") -> int:
    """Physics steps per control step at ``control_hz``, which must be ``(1 / timestep) / k`` for an integer ``k``
    (:class:`ConfigFieldError` naming ``control_hz`` of ``env`` otherwise): the hand task's and the bridge's check."""
    n = round(1.0 / (control_hz * timestep))
    if n < 1 or abs(n * timestep * control_hz - 1.0) > 1e-6:
        raise ConfigFieldError(
            "control_hz",
            f"control_hz={control_hz!r} must be (1 / timestep) / k for an integer k >= 1; "
            f"the timestep is {timestep} s, so e.g. {1 / timestep:g}, {1 / (2 * timestep):g}, {1 / (10 * timestep):g}",
            env,
        )
    return n
