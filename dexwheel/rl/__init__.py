"""Glue to stable-baselines3: env factories, vec-env adapter, checkpoints, callbacks, evaluation metrics."""

from dexwheel.rl import config_defaults  # noqa: F401  (registers the Hydra nodes of the env defaults)
