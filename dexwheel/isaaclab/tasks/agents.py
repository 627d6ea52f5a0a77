"""rsl_rl PPO runners of the Isaac Lab tasks, from the one config both backends train with.

Runner, PPO and model settings are ``configs/algo/rsl_ppo.yaml`` (with ``configs/train.yaml``'s
``train.normalize_obs`` and the task's ``train.steps_per_env`` from its registry record) through
:func:`dexwheel.rl.rsl.cfg.runner_cfg`, the dict the MuJoCo side's rsl_rl learner runs; here they become Isaac Lab's ``RslRlOnPolicyRunnerCfg`` fields. Observation normalisation sits
in the actor and critic models, so an exported policy carries it along.

Isaac Lab's own, not in that dict: ``max_iterations`` (the MuJoCo side counts ``total_timesteps``),
``save_interval`` (dexwheel's learner checkpoints itself, so its runner never saves; Isaac Lab's train script
relies on the runner saving) and ``experiment_name``. ``clip_actions`` 1.0: the MuJoCo tasks clip actions to
[-1, 1] before they map them and observe the clipped action; the runner clipping them first makes the Isaac
Lab tasks see the same.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg
from omegaconf import OmegaConf

from dexwheel.rl.rsl.cfg import CLIP_ACTIONS, runner_cfg
from dexwheel.tasks.registry import task_record

REPO = Path(__file__).resolve().parents[3]
ALGO_CFG = REPO / "configs" / "algo" / "rsl_ppo.yaml"
TRAIN_CFG = REPO / "configs" / "train.yaml"
#: Fields of runner_cfg's dict that the Isaac Lab runners set otherwise (see the module docstring).
NOT_SHARED = ("save_interval",)


def shared_runner_cfg(task: str = "velocity") -> dict[str, Any]:
    """rsl_rl's train_cfg dict as the MuJoCo side builds it from ``rsl_ppo.yaml``, ``train.yaml`` and the registered
    task ``task`` (its record's budget: the rollout length per env, ``train.steps_per_env``)."""
    algo, train = OmegaConf.load(ALGO_CFG), OmegaConf.load(TRAIN_CFG)
    budget = dataclasses.asdict(task_record(task).train)
    root = OmegaConf.create({"algo": algo, "task": {"train": budget}})
    return runner_cfg(root.algo.params, root.algo.policy, bool(train.train.normalize_obs))


def _model(d: dict[str, Any]) -> RslRlMLPModelCfg:
    dist = dict(d.get("distribution_cfg") or {})
    if dist and dist.get("class_name") != "GaussianDistribution":
        raise ValueError(f"rsl_ppo.yaml: distribution {dist.get('class_name')!r} has no Isaac Lab config here")
    unknown = sorted(set(d) - {"class_name", "hidden_dims", "activation", "obs_normalization", "distribution_cfg"})
    if unknown:
        raise ValueError(f"rsl_ppo.yaml: model fields {unknown} have no Isaac Lab counterpart here")
    if "std_range" in dist:
        dist["std_range"] = tuple(dist["std_range"])
    return RslRlMLPModelCfg(
        class_name=d["class_name"],
        hidden_dims=list(d["hidden_dims"]),
        activation=d["activation"],
        obs_normalization=bool(d["obs_normalization"]),
        distribution_cfg=RslRlMLPModelCfg.GaussianDistributionCfg(**dist) if dist else None,
    )


def apply_runner_cfg(cfg: RslRlOnPolicyRunnerCfg, shared: dict[str, Any]) -> None:
    """Set ``cfg``'s fields from runner_cfg's dict (every field but :data:`NOT_SHARED`)."""
    unknown = sorted(set(shared) - {"num_steps_per_env", "obs_groups", "algorithm", "actor", "critic",
                                    "torch_compile_mode", "overlap", *NOT_SHARED})  # fmt: skip
    if unknown:
        raise ValueError(f"runner_cfg fields {unknown} have no Isaac Lab counterpart here")
    if shared["overlap"]:  # dexwheel's learner runs it (scripts/train.py backend=isaaclab); Isaac Lab's runner not
        raise ValueError("algo.params.overlap: Isaac Lab's own runner has no overlapping loop; train with "
                         "scripts/train.py backend=isaaclab")  # fmt: skip
    cfg.num_steps_per_env = int(shared["num_steps_per_env"])
    cfg.torch_compile_mode = shared["torch_compile_mode"]
    cfg.obs_groups = {k: list(v) for k, v in shared["obs_groups"].items()}
    cfg.algorithm = RslRlPpoAlgorithmCfg(**shared["algorithm"])  # an unknown PPO field raises, naming it
    cfg.actor = _model(shared["actor"])
    cfg.critic = _model(shared["critic"])


@configclass
class DexwheelPPORunnerCfg(RslRlOnPolicyRunnerCfg):
    """PPO from ``rsl_ppo.yaml`` and the registered task ``task``'s rollout length; each registered Isaac Lab id has
    a subclass naming its task and experiment (:mod:`dexwheel.isaaclab.tasks`)."""

    max_iterations = 500
    save_interval = 50
    experiment_name = "dexwheel"
    clip_actions = CLIP_ACTIONS
    task: str = "velocity"

    def __post_init__(self):
        apply_runner_cfg(self, shared_runner_cfg(self.task))
