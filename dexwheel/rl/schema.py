"""Typed schemas for the non-env parts of the Hydra config: a bad key or value fails before anything runs.

Env parameters are checked by the env constructors themselves (each names the field and the allowed
range); these dataclasses cover training and the algorithms.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException


class ConfigError(ValueError):
    """A config key or value that cannot be used, named with its full dotted path."""


def as_paths(cfg: DictConfig, keys: tuple[str, ...]) -> None:
    """Make the path settings ``keys`` of a script's config text, in place. Hydra reads ``run=5`` as the integer 5:
    a whole number is that name (``5``); any other non-text value is refused naming the key, since what was typed
    is lost (``run=1.50`` reads as 1.5, ``run=true`` as a bool)."""
    for key in keys:
        value = cfg.get(key)
        if value is None or isinstance(value, str):
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            cfg[key] = str(value)
            continue
        raise ConfigError(f"{key}: a path, got {value!r}; quote a path Hydra would read as a value: {key}=\"'<path>'\"")


@dataclass
class TrainCfg:
    total_timesteps: int = 1_000_000
    num_envs: int = 16
    vectorization: str = "native"  # native | subproc | dummy
    normalize_obs: bool = True
    eval_every_steps: int = 50_000
    eval_episodes: int = 5
    eval_seed: int = 10_000  # evaluation seeds never overlap training seeds
    checkpoint_every_steps: int = 100_000
    keep_checkpoints: int = 3
    resume: str | None = None
    progress_bar: bool = True
    device: str = "cpu"
    torch_threads: int = 1
    #: torch threads for rsl_ppo's updates (PPO.update), while the vector env's threads are idle. 2 helps only
    #: with the cores to itself; two such trainings at once ran several times slower, and on some CPUs it
    #: changes the weights (docs/reference/training.md).
    learner_threads: int = 1
    #: rsl_ppo's updates compute the critic's half of each mini-batch on a second thread beside the actor's
    #: (:mod:`dexwheel.rl.rsl.parallel`): the same weights to the bit in less time. None: on when the learner
    #: runs on the CPU on one thread (``device`` cpu, ``learner_threads`` 1) and not beside the rollouts
    #: (``algo.params.overlap``, which already takes the second core)
    critic_thread: bool | None = None


def critic_thread(train: TrainCfg, overlap: bool) -> bool:
    """Whether rsl_ppo's updates put the critic on a thread of its own (``train.critic_thread``, resolved)."""
    if train.critic_thread is not None:
        return train.critic_thread
    return train.device == "cpu" and train.learner_threads == 1 and not overlap


@dataclass
class PPOParams:
    learning_rate: float = 3e-4
    n_steps: int = 2048
    batch_size: int = 64
    n_epochs: int = 10
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    use_sde: bool = False


@dataclass
class SACParams:
    learning_rate: float = 3e-4
    buffer_size: int = 1_000_000
    learning_starts: int = 100
    batch_size: int = 256
    tau: float = 0.005
    gamma: float = 0.99
    train_freq: int = 1
    gradient_steps: int = 1
    ent_coef: str = "auto"


@dataclass
class RslPPOParams:
    """rsl_rl's runner and PPO settings (``OnPolicyRunner`` train_cfg, ``algorithm`` section); defaults are
    rsl_rl's and Isaac Lab's locomotion ones."""

    num_steps_per_env: int = 24  # x num_envs samples per update
    num_learning_epochs: int = 5
    num_mini_batches: int = 4
    learning_rate: float = 1e-3
    schedule: str = "adaptive"  # adaptive (KL-driven) | fixed
    desired_kl: float = 0.01
    gamma: float = 0.99
    lam: float = 0.95
    clip_param: float = 0.2
    entropy_coef: float = 0.005
    value_loss_coef: float = 1.0
    max_grad_norm: float = 1.0
    use_clipped_value_loss: bool = True
    #: also learn each mini-batch mirrored left-right (dexwheel.rl.rsl.symmetry); None: when the env has a mirror
    symmetry: bool | None = None
    #: ``torch.compile`` the actor and critic (rsl_rl's ``torch_compile_mode``: "default" or
    #: "max-autotune-no-cudagraphs"); None: eager
    torch_compile_mode: str | None = None
    #: collect the next rollout while PPO updates on the last (one update of policy lag;
    #: :mod:`dexwheel.rl.rsl.overlap`)
    overlap: bool = False
    #: imitate a scripted teacher before PPO (:mod:`dexwheel.rl.rsl.imitation`): "climbing" (the wheel-leg
    #: velocity task's gait on terrain), "finger_gait" (the G20 rolling task's gait); None: PPO from scratch
    teacher: str | None = None
    teacher_steps: int = 1_000_000  # env steps of DAgger rounds (counted in train.total_timesteps)
    teacher_std: float = 0.3  # the student's action noise in the rounds, and the actor's std after them
    critic_warmup: int = 10  # PPO iterations after imitation with the actor frozen (the critic learns first)
    #: keep imitating the teacher during PPO where it is active (:class:`dexwheel.rl.rsl.imitation.TeacherGuide`)
    teacher_guide: bool = True
    guide_steps: int = 16  # the guide's Adam steps after each PPO update
    guide_focus: float = 0.5  # the share of each guide mini-batch drawn from the teacher's focus states
    #: a trained rsl_ppo run (folder or checkpoint) whose policy is the teacher away from the scripted one's edges
    #: (:class:`dexwheel.rl.rsl.imitation.WithExpert`); None: the scripted teacher alone
    teacher_expert: str | None = None


@dataclass
class PolicyCfg:
    net_arch: list[int] = field(default_factory=lambda: [256, 256])
    activation: str = "tanh"  # tanh | relu | elu
    log_std_init: float = 0.0
    #: rsl_ppo: a floor under the Gaussian's std, every action (rsl_rl's ``std_range``); None: no floor
    min_std: float | None = None


ALGO_PARAMS = {"ppo": PPOParams, "sac": SACParams, "rsl_ppo": RslPPOParams}
#: rsl_rl's runner (:mod:`dexwheel.rl.rsl`); the others are stable-baselines3's (:mod:`dexwheel.rl.sb3`)
RSL_ALGOS = ("rsl_ppo",)
VECTORIZATION = ("native", "subproc", "dummy")
ACTIVATIONS = ("tanh", "relu", "elu")
COMPILE_MODES = (None, "default", "max-autotune-no-cudagraphs")
#: ``train.device``: the torch devices a run or an Isaac Lab evaluation takes
DEVICE = re.compile(r"cpu|cuda(:\d+)?")


def check_device(device: Any) -> None:
    """``train.device`` is a device the learner and Isaac Lab take; anything else fails here, not in torch."""
    if not (isinstance(device, str) and DEVICE.fullmatch(device)):
        raise ConfigError(f"train.device: {device!r} is not one of cpu, cuda, cuda:<index> (cuda:0, cuda:1, ...)")


def _checked(schema: Any, node: Any, where: str) -> DictConfig:
    try:
        plain = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else node
        return OmegaConf.merge(OmegaConf.structured(schema), plain)
    except OmegaConfBaseException as e:
        key = getattr(e, "full_key", "") or ""
        raise ConfigError(f"{where}{'.' + key if key else ''}: {e.msg if hasattr(e, 'msg') else e}") from None


#: the scripted teachers ``algo.params.teacher`` names (:func:`dexwheel.rl.rsl.imitation.teacher_for`)
TEACHERS = ("climbing", "finger_gait")


def _check_imitation(params: DictConfig) -> None:
    if params.teacher is not None and params.teacher not in TEACHERS:
        raise ConfigError(f"algo.params.teacher: {params.teacher!r} is not one of {list(TEACHERS)} or null")
    for key, low in (("teacher_steps", 1), ("critic_warmup", 0), ("guide_steps", 1)):
        if params[key] < low:
            raise ConfigError(f"algo.params.{key}: must be >= {low}, got {params[key]}")
    if params.teacher_expert is not None and params.teacher is None:
        raise ConfigError(f"algo.params.teacher_expert={params.teacher_expert}: an expert completes a scripted "
                          f"teacher; set algo.params.teacher (one of {list(TEACHERS)})")  # fmt: skip
    if params.teacher is not None and params.teacher_guide and params.overlap:
        raise ConfigError("algo.params.teacher_guide: records the teacher's actions in the rollout that PPO's update "
                          "overlaps with algo.params.overlap=true; set one of them false")  # fmt: skip
    if not 0.0 <= params.guide_focus <= 1.0:
        raise ConfigError(f"algo.params.guide_focus: expected in [0, 1] (a share of each mini-batch), "
                          f"got {params.guide_focus}")  # fmt: skip
    if not 0.0 < params.teacher_std <= 1.0:
        raise ConfigError(f"algo.params.teacher_std: expected in (0, 1] (the action range's half-width is 1), "
                          f"got {params.teacher_std}")  # fmt: skip


def imitation_steps(params: DictConfig, num_envs: int) -> tuple[int, int]:
    """The env steps a fresh run with a teacher spends before PPO's own updates (:mod:`dexwheel.rl.rsl.imitation`):
    the imitation's rounds of one rollout each (``teacher_steps`` rounded up to whole rounds) and the critic
    warm-up's ``critic_warmup`` PPO iterations of one rollout each."""
    rollout = params.num_steps_per_env * num_envs
    return max(1, math.ceil(params.teacher_steps / rollout)) * rollout, params.critic_warmup * rollout


def _check_imitation_budget(params: DictConfig, train: DictConfig) -> None:
    """Refuse a fresh run's budget that the phases before PPO would overrun: they run whole, whatever the budget."""
    imitation, warmup = imitation_steps(params, train.num_envs)
    if params.teacher is None or train.resume or train.total_timesteps >= imitation + warmup:
        return
    rollout = params.num_steps_per_env * train.num_envs
    raise ConfigError(f"train.total_timesteps={train.total_timesteps}: the phases before PPO alone take "
                      f"{imitation + warmup} env steps (algo.params.teacher_steps={params.teacher_steps}: {imitation} "
                      f"in rollouts of {rollout}, then algo.params.critic_warmup={params.critic_warmup} iterations: "
                      f"{warmup}); give a budget of at least that, or lower those (one rollout is "
                      f"task.train.steps_per_env={params.num_steps_per_env} x train.num_envs={train.num_envs})")  # fmt: skip


def _check_critic_thread(train: DictConfig, algo: str) -> None:
    if not train.critic_thread:
        return
    if algo != "rsl_ppo":
        raise ConfigError(f"train.critic_thread=true: only rsl_ppo's updates have one (algo={algo}); set it null")
    if train.device != "cpu":
        raise ConfigError(f"train.critic_thread=true: a CPU learner's option; train.device={train.device} computes "
                          f"both halves of the update itself: set it null or false")  # fmt: skip
    if train.learner_threads > 1:
        raise ConfigError(f"train.critic_thread=true with train.learner_threads={train.learner_threads}: each half "
                          f"of the update would spin its own {train.learner_threads} threads on the cores; set one "
                          f"of them back (train.critic_thread=false or train.learner_threads=1)")  # fmt: skip


def validate(cfg: DictConfig) -> tuple[TrainCfg, str, DictConfig, DictConfig]:
    """Check ``train``, ``algo`` and ``seed``; returns typed train config, algo name, params, policy."""
    train = _checked(TrainCfg, cfg.train, "train")
    if train.vectorization not in VECTORIZATION:
        raise ConfigError(f"train.vectorization: {train.vectorization!r} is not one of {list(VECTORIZATION)}")
    check_device(train.device)
    for key in (
        "total_timesteps",
        "num_envs",
        "eval_every_steps",
        "eval_episodes",
        "checkpoint_every_steps",
        "torch_threads",
        "learner_threads",
    ):
        if train[key] <= 0:
            raise ConfigError(f"train.{key}: must be > 0, got {train[key]}")
    name = cfg.algo.name
    if name not in ALGO_PARAMS:
        raise ConfigError(f"algo.name: {name!r} is not one of {sorted(ALGO_PARAMS)}")
    _check_critic_thread(train, name)
    params = _checked(ALGO_PARAMS[name], cfg.algo.params, "algo.params")
    policy = _checked(PolicyCfg, cfg.algo.policy, "algo.policy")
    if name == "rsl_ppo" and params.schedule not in ("adaptive", "fixed"):
        raise ConfigError(f"algo.params.schedule: {params.schedule!r} is not one of ['adaptive', 'fixed']")
    if name == "rsl_ppo" and params.torch_compile_mode not in COMPILE_MODES:
        raise ConfigError(f"algo.params.torch_compile_mode: {params.torch_compile_mode!r} is not one of "
                          f"{list(COMPILE_MODES)} (rsl_rl refuses the CUDA-graph modes)")  # fmt: skip
    if name == "rsl_ppo":
        _check_imitation(params)
        _check_imitation_budget(params, train)
        backend = OmegaConf.select(cfg, "backend.name", default="mujoco")
        if params.teacher is not None and backend != "mujoco":
            what = "the terrain under each wheel" if params.teacher == "climbing" else "the joint command, episode time"
            raise ConfigError(f"algo.params.teacher={params.teacher}: the teacher reads the MuJoCo task's state ({what}); "
                              f"backend={backend} has none: train on backend=mujoco")  # fmt: skip
    if policy.min_std is not None and (name != "rsl_ppo" or not 0.0 < policy.min_std < 1e6):
        raise ConfigError(f"algo.policy.min_std: {policy.min_std!r}: a floor in (0, 1e6) under rsl_ppo's action std "
                          f"(null: none); {name}'s policy has none")  # fmt: skip
    if policy.activation not in ACTIVATIONS:
        raise ConfigError(f"algo.policy.activation: {policy.activation!r} is not one of {list(ACTIVATIONS)}")
    if not isinstance(cfg.seed, int):
        raise ConfigError(f"seed: must be an integer, got {cfg.seed!r}")
    return OmegaConf.to_object(train), name, params, policy  # type: ignore[return-value]
