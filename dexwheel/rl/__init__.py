"""Glue to stable-baselines3: env factories, vec-env adapter, checkpoints, callbacks, evaluation metrics."""
