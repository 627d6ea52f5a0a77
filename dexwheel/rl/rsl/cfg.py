"""rsl_rl's runner configuration from dexwheel's ``algo`` config: one source for both backends.

Imports nothing beyond the standard library and omegaconf, so the Isaac Lab venv (which has neither
stable-baselines3 nor dexwheel's MuJoCo envs) builds its runner from the same ``configs/algo/rsl_ppo.yaml``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, OmegaConf

#: the observation group the actor and critic read (Isaac Lab's name for the policy observations)
POLICY_GROUP = "policy"
#: all columns, privileged ones included, when the env has them (rsl_rl's critic then reads this group)
CRITIC_GROUP = "critic"
#: the runner's ``clip_actions`` on Isaac Lab: the MuJoCo envs clip policy actions to [-1, 1] before mapping them
CLIP_ACTIONS = 1.0
#: rsl_rl's data augmentation function for ``algo.params.symmetry`` (it reads the env's ``mirror_maps``)
SYMMETRY_FUNC = "dexwheel.rl.rsl.symmetry:mirrored"
#: ``algo.params`` keys of the imitation before PPO (:mod:`dexwheel.rl.rsl.imitation`), which rsl_rl never sees
IMITATION_KEYS = ("teacher", "teacher_steps", "teacher_std", "critic_warmup", "teacher_guide", "guide_steps",
                  "guide_focus", "teacher_expert")  # fmt: skip


def runner_cfg(params: Mapping[str, Any], policy: Mapping[str, Any], normalize_obs: bool,
               critic_group: str = POLICY_GROUP) -> dict[str, Any]:  # fmt: skip
    """rsl_rl's train_cfg dict from ``algo.params`` (runner and PPO settings) and ``algo.policy`` (both models);
    the critic reads ``critic_group`` (:data:`CRITIC_GROUP` for an asymmetric actor-critic)."""
    algorithm = dict(OmegaConf.to_container(params, resolve=True) if isinstance(params, DictConfig) else params)
    steps = algorithm.pop("num_steps_per_env")
    compile_mode = algorithm.pop("torch_compile_mode", None)  # a runner setting in rsl_rl, not PPO's
    overlap = bool(algorithm.pop("overlap", False))  # dexwheel's loop (dexwheel.rl.rsl.overlap), not PPO's
    for key in IMITATION_KEYS:  # dexwheel's imitation before PPO (dexwheel.rl.rsl.imitation), not PPO's
        algorithm.pop(key, None)
    if algorithm.pop("symmetry", False):  # mirrored mini-batches (dexwheel.rl.rsl.symmetry)
        algorithm["symmetry_cfg"] = {"use_data_augmentation": True, "use_mirror_loss": False,
                                     "data_augmentation_func": SYMMETRY_FUNC}  # fmt: skip
    model = {
        "class_name": "MLPModel",
        "hidden_dims": list(policy["net_arch"]),
        "activation": policy["activation"],
        "obs_normalization": bool(normalize_obs),
    }
    gaussian = {"class_name": "GaussianDistribution", "init_std": math.exp(policy["log_std_init"])}
    if policy.get("min_std") is not None:  # the std is clamped to it in every sample and log-prob
        gaussian["std_range"] = [float(policy["min_std"]), 1e6]
    return {
        "num_steps_per_env": int(steps),
        "save_interval": 1 << 62,  # the runner never saves on its own: RslLearner checkpoints (atomically)
        "torch_compile_mode": compile_mode,
        "overlap": overlap,
        "obs_groups": {"actor": [POLICY_GROUP], "critic": [critic_group]},
        "algorithm": {"class_name": "PPO", **algorithm},
        "actor": {**model, "distribution_cfg": gaussian},
        "critic": dict(model),
    }
