"""What the training, run and config tests share: the repository's paths, Hydra composition and the short
run settings every test training uses (imported by name: ``from cfgutil import compose_cfg, short``)."""

import hashlib
from pathlib import Path

from hydra import compose, initialize_config_dir

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
SHORT = [
    "train.total_timesteps=2048",
    "train.num_envs=4",
    "train.eval_every_steps=1024",
    "train.eval_episodes=1",
    "train.checkpoint_every_steps=1024",
    "train.progress_bar=false",
]
#: each learner's short update (the algo is named: a robot may default to another one)
SHORT_ALGO = {
    "ppo": ["algo=ppo", "algo.params.n_steps=128", "algo.params.batch_size=256", "algo.params.n_epochs=2"],
    "rsl_ppo": ["algo=rsl_ppo", "algo.params.num_steps_per_env=64", "algo.params.num_learning_epochs=2"],
}
#: each task's short episodes (its own key: task.<task>.*)
SHORT_EPISODES = {
    "hand_pose": "max_episode_steps=50",
    "velocity": "episode_length_s=2.0",
    "velocity_rough": "episode_length_s=2.0",
    "in_hand_rotate": "episode_length_s=1.0",
    "in_hand_rotate_z": "episode_length_s=1.0",
    "in_hand_reorient": "episode_length_s=1.0",
}


def compose_cfg(name="train", *overrides):
    with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
        return compose(config_name=name, overrides=list(overrides))


def short(robot, *extra, algo="ppo"):
    task = next((e.partition("=")[2] for e in extra if e.startswith("task=")), None)
    task = task or ("hand_pose" if robot.startswith("g20") else "velocity")
    return [f"robot={robot}", *SHORT, *SHORT_ALGO[algo], f"task.{task}.{SHORT_EPISODES[task]}", *extra]


def digest(folder: Path) -> dict[str, str]:
    """Every file of ``folder`` by its SHA-256: what a refused command must leave unchanged."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*")
            if p.is_file()}  # fmt: skip
