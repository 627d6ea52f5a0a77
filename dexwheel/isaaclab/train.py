"""rsl_rl training on Isaac Lab: ``python -m dexwheel.isaaclab.train <job.json>`` in the Isaac Lab venv.

``scripts/train.py ... backend=isaaclab`` checks the config in the core venv and starts this with a job file: the
resolved config, the run folder and the command's start (:func:`dexwheel.rl.isaaclab_launch.train_on_isaaclab`). The
run's ``config.yaml`` is written here once the env and the learner exist (:func:`~dexwheel.rl.training.run_training`),
as on MuJoCo: a launch that fails before leaves a resumed run's config as it was.

The run is the MuJoCo backend's rsl_ppo run with another env: the same learner (:class:`~dexwheel.rl.rsl.RslLearner`
over Isaac Lab's ``RslRlVecEnvWrapper``, ``clip_actions`` 1.0 as the MuJoCo envs clip), the same run loop
(:func:`~dexwheel.rl.training.run_training`: checkpoints, resume, TensorBoard, progress lines, Ctrl-C), the
same checkpoint format, so ``scripts/evaluate.py`` and ``scripts/export.py`` take the run as any other.
Evaluations run deterministic episodes on the training envs themselves (Isaac Lab keeps one simulation
per process): each resets every env with the evaluation seed, and training continues from there.
"""

from __future__ import annotations

import json
from pathlib import Path

from omegaconf import OmegaConf

from dexwheel.isaaclab.episodes import action_bounds, actor_batch_policy, isaac_episodes, make_task_venv
from dexwheel.rl.checkpoints import check_checkpoint, latest_checkpoint
from dexwheel.rl.isaaclab_launch import child_main
from dexwheel.rl.rsl import RslLearner
from dexwheel.rl.schema import validate
from dexwheel.rl.training import Evaluator, run_training


class IsaacRslLearner(RslLearner):
    #: the actions the task takes (:func:`~dexwheel.isaaclab.episodes.action_bounds`; None: +-1)
    bounds = None

    def policy(self):
        """Deterministic batched actions for the Isaac Lab evaluation episodes."""
        actor = self.runner.alg.get_policy()
        actor.eval()  # rsl_rl's learn() switches back to training mode
        return actor_batch_policy(actor, self.bounds)


def train(job_path: Path) -> dict[str, float]:
    """The job :func:`~dexwheel.rl.isaaclab_launch.train_on_isaaclab` wrote (checked there, in the core venv)."""
    job = json.loads(Path(job_path).read_text())
    cfg, run_dir = OmegaConf.create(job["config"]), Path(job["run_dir"])
    train_cfg, _, params, policy = validate(cfg)
    checkpoint = latest_checkpoint(run_dir) if train_cfg.resume else None
    if checkpoint is not None:
        check_checkpoint(checkpoint)
    venv = make_task_venv(cfg, train_cfg.num_envs, train_cfg.device, cfg.seed)
    learner = IsaacRslLearner(cfg, train_cfg, params, policy, run_dir, checkpoint, venv=venv)
    learner.bounds = action_bounds(venv)

    def episodes(act, n_episodes: int, seed: int):
        return isaac_episodes(venv, act, cfg.task.name, n_episodes, seed)

    evaluator = Evaluator(cfg, train_cfg, run_dir, episodes=episodes)
    return run_training(cfg, train_cfg, learner, evaluator, run_dir, launched=job.get("launched"))


if __name__ == "__main__":
    child_main(train)
