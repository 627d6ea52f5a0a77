"""Training and evaluation, one subpackage per learner and the rest shared by both.

* :mod:`dexwheel.rl.rsl`: rsl_rl's PPO (``algo=rsl_ppo``, the default), its runner config, vector-env
  adapter and mirrored mini-batches; the same learner trains on Isaac Lab;
* :mod:`dexwheel.rl.sb3`: stable-baselines3's PPO and SAC (``algo=ppo|sac``) and their vec-env adapter;
* shared: the training loop (:mod:`.training`), config checks and defaults (:mod:`.schema`,
  :mod:`.config_defaults`, :mod:`.run_config`), env construction (:mod:`.env_factory`), checkpoints,
  evaluation and metrics, policies and ONNX export.
"""

from dexwheel.rl import config_defaults  # noqa: F401  (registers the Hydra nodes of the env defaults)
