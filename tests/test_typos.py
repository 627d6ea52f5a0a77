"""A typo in a Hydra override, as a user meets it on each script (issue 57): one line naming the override and the
closest valid name (or the valid ones), exit status 2, nothing written; not Hydra's 7-12 lines advising ``+``."""

import subprocess
import sys

import pytest
from cfgutil import ROOT

ROBOTS = "(robot: g20_left, g20_right, m20_legacy, solenopsis)"


@pytest.mark.parametrize(
    "script, args, line",
    [("train.py", ["robot=solenopsys"], f"robot=solenopsys: no robot option solenopsys; did you mean solenopsis? {ROBOTS}"),
     ("train.py", ["drive=PD"], "drive=PD: no drive option PD; did you mean pd? (drive: hard_write, pd, track_test)"),
     ("train.py", ["task=ruff"], "task=ruff: no task option ruff; task: hand_pose, in_hand_reorient, in_hand_rotate, in_hand_rotate_z, velocity, velocity_rough"),
     ("train.py", ["train.totl_timesteps=5"],
      "train.totl_timesteps=5: no key train.totl_timesteps; did you mean train.total_timesteps?"),
     ("train.py", ["trian.num_envs=4"], "trian.num_envs=4: no key trian.num_envs; did you mean train.num_envs?"),
     ("train.py", ["robot=g20_left", "drive.hand.slew_rad=1"],
      "drive.hand.slew_rad=1: no key drive.hand.slew_rad; did you mean drive.hand.drive.slew_rad_s?"),
     ("train.py", ["-m", "seed=0,1", "robot=g20_left,solenopsys"],
      f"robot=g20_left,solenopsys: no robot option solenopsys; did you mean solenopsis? {ROBOTS}"),
     ("train.py", ["experiment=rough_climb"],
      "experiment=rough_climb: experiment is no default group of train.yaml; select it with +experiment=rough_climb"),
     ("train.py", ["+experiment=rough_clim"],
      "+experiment=rough_clim: no experiment option rough_clim; did you mean rough_climb? "
      "(experiment: in_hand_roll, rough_climb, rough_steps)"),
     ("train.py", ["hydra/launcher=submitit_slurm_dexwhel"],
      "hydra/launcher=submitit_slurm_dexwhel: no hydra/launcher option submitit_slurm_dexwhel; did you mean "
      "submitit_slurm_dexwheel? (hydra/launcher: basic, submitit_local, submitit_local_dexwheel, submitit_slurm, "
      "submitit_slurm_dexwheel)"),
     ("evaluate.py", ["robot=g20_left", "polcy=random"], "polcy=random: no key polcy; did you mean policy?"),
     ("evaluate.py", ["robot=g20_left", "task=in_hand_rotate", "benchmark=rotation", "rotation.trial=5"],
      "rotation.trial=5: no key rotation.trial; did you mean steps.trials or in_hand.trials?"),
     ("evaluate.py", ["steps.trial=5"], "steps.trial=5: no key steps.trial; did you mean steps.trials?"),
     ("export.py", ["rnu=outputs/x"], "rnu=outputs/x: no key rnu; did you mean run?"),
     ("view.py", ["robot=g20_lef"], f"robot=g20_lef: no robot option g20_lef; did you mean g20_left? {ROBOTS}"),
     ("bridge.py", ["drive=pd"], "drive=pd: no key drive; did you mean pd_drive?"),
     ("bridge.py", ["headles=true"], "headles=true: no key headles; did you mean headless?"),
     ("results.py", ["robot=solenopsys"], f"robot=solenopsys: no robot option solenopsys; did you mean solenopsis? {ROBOTS}")],
)  # fmt: skip
def test_a_typo_is_one_line_naming_it_and_the_closest_name(script, args, line, tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert (done.returncode, done.stderr, done.stdout) == (2, f"error: {line}\n", "")
    assert list(tmp_path.iterdir()) == []  # no run folder, no multirun/ folder


def test_the_advised_name_is_a_valid_one(tmp_path):
    """What the line advises composes: the fix works as typed (Hydra's ``+drive=pd`` for bridge.py fails again)."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bridge.py"), "pd_drive=true", "headless=true",
                           "max_steps=5"], cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
