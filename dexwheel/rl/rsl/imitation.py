"""Imitation before PPO (``algo.params.teacher``): the actor learns a scripted teacher's actions by DAgger,
then PPO trains on from there (docs/how-to/train-on-terrain.md#from-a-teacher-the-documented-run).

Each round collects one rollout (``num_steps_per_env`` x num_envs steps) in the training env. Early rounds act
with the teacher in a share of the envs that falls from 1 to 0 over the first half of the rounds, the rest with
the student (the actor's mean plus ``teacher_std`` noise), so the student also meets the states its own
mistakes lead to (DAgger); the teacher labels every state. The samples are aggregated (the latest
``BUFFER_ROUNDS`` rounds), and after each round the actor's mean takes ``GRADIENT_STEPS`` Adam steps on the
squared error to the labels over random mini-batches of them. The actor's and critic's observation normalisers
see every observation. Afterwards the actor's action std is ``teacher_std``, and PPO's first
``critic_warmup`` iterations leave the actor alone (its parameters frozen) while the critic learns the student's
values, so the first policy updates do not follow an untrained critic's advantages.

With ``algo.params.teacher_expert`` (a trained run, e.g. the flat-ground default), the teacher is the scripted
gait near an edge and the expert's policy everywhere else (:class:`WithExpert`): the gait climbs, the expert
tracks the command and turns, which the gait does poorly.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from rsl_rl.models import MLPModel
from tensordict import TensorDict

from dexwheel.rl.rsl.cfg import POLICY_GROUP
from dexwheel.rl.schema import RSL_ALGOS, ConfigError

#: Adam steps on the actor's mean after each round's rollout, and their mini-batch size.
GRADIENT_STEPS, MINI_BATCH = 16, 1024
#: How many rounds of samples the aggregated data keeps (the oldest go first).
BUFFER_ROUNDS = 64
LEARNING_RATE = 1e-3
#: the share of each mini-batch drawn from the teacher's focus states (the guide's: ``algo.params.guide_focus``)
FOCUS_SHARE = 0.5

Teacher = Callable[[], np.ndarray]


def teacher_for(name: str, venv, expert: str | None = None) -> Teacher:
    """The scripted teacher ``name`` (one of :data:`~dexwheel.rl.schema.TEACHERS`) acting on the MuJoCo rsl_rl
    env ``venv``'s envs, reading their current states; with ``expert`` (a run folder or checkpoint), the
    expert's policy where the scripted teacher is not active."""
    env = getattr(venv, "env", venv)
    task = getattr(env.unwrapped, "task", None)
    if name == "finger_gait":
        return _finger_gait(name, env, task) if expert is None else WithExpert(_finger_gait(name, env, task),
                                                                               load_expert(expert, task), venv)  # fmt: skip
    from dexwheel.tasks.velocity.task import WheelLegTask
    from dexwheel.tasks.velocity.teacher import ClimbingTeacher

    if not isinstance(task, WheelLegTask) or task.terrain is None:
        raise ConfigError(f"algo.params.teacher={name}: the climbing teacher reads the terrain under each wheel in "
                          "the MuJoCo wheel-leg task on terrain (task=velocity_rough, backend=mujoco); this run's env is "
                          f"{type(env.unwrapped).__name__}{'' if task is None else ' without terrain'}")  # fmt: skip
    try:
        teacher = ClimbingTeacher(task)
    except ValueError as e:
        raise ConfigError(f"algo.params.teacher={name}: {e}") from None
    return teacher if expert is None else WithExpert(teacher, load_expert(expert, task), venv)


def _finger_gait(name: str, env, task) -> Teacher:
    """The G20 rolling task's finger gait (:class:`dexwheel.tasks.in_hand.teacher.FingerGaitTeacher`)."""
    from dexwheel.tasks.in_hand.task import InHandTask
    from dexwheel.tasks.in_hand.teacher import TEACHER_TASKS, FingerGaitTeacher

    if not isinstance(task, InHandTask) or task.cfg.task not in TEACHER_TASKS:
        what = type(env.unwrapped).__name__ + ("" if not isinstance(task, InHandTask) else f" (task {task.cfg.task!r})")
        raise ConfigError(f"algo.params.teacher={name}: the finger gait rolls the cylinder of the G20 rolling task "
                          f"(task=in_hand_rotate, backend=mujoco); this run's env is {what}")  # fmt: skip
    try:
        return FingerGaitTeacher(task)
    except ValueError as e:
        raise ConfigError(f"algo.params.teacher={name}: {e}") from None


def load_expert(path: str, task) -> MLPModel:
    """The actor of the rsl_rl run (folder: its final checkpoint) or checkpoint ``path``, checked to read a
    leading part of ``task``'s policy columns, term by term, and to act on its joints with the same action
    mapping; refused by name (``algo.params.teacher_expert``) otherwise."""
    from dexwheel.rl.checkpoints import CHECKPOINT_DIR, CheckpointError, check_checkpoint, resolve_checkpoint
    from dexwheel.rl.env_factory import make_env
    from dexwheel.rl.rsl import load_actor
    from dexwheel.rl.run_config import CONFIG_FILE, run_config

    key = f"algo.params.teacher_expert={path}"
    given = Path(path)
    run_dir = given.parent.parent if given.is_file() and given.parent.name == CHECKPOINT_DIR else given
    if not (run_dir / CONFIG_FILE).is_file():
        raise ConfigError(f"{key}: not a run folder or a checkpoint in one (no {run_dir / CONFIG_FILE}); train "
                          f"one: python scripts/train.py robot={task.cfg.robot} hydra.run.dir={run_dir}")  # fmt: skip
    cfg = run_config(run_dir)
    if cfg.algo.name not in RSL_ALGOS:
        raise ConfigError(f"{key}: the run trained {cfg.algo.name}; the expert must be an rsl_rl run {list(RSL_ALGOS)}")
    try:
        checkpoint = given if given.is_file() else resolve_checkpoint(run_dir, "final", cfg.algo.name)
    except CheckpointError as e:  # no final checkpoint: the message names those the run holds
        raise ConfigError(f"{key}: the run has no final checkpoint; give one of its checkpoints' paths ({e})") from None
    check_checkpoint(checkpoint)
    env = make_env(cfg)
    try:
        theirs = env.unwrapped.task
        if theirs.cfg.robot != task.cfg.robot:
            raise ConfigError(f"{key}: the expert acts on {theirs.cfg.robot}, this run on {task.cfg.robot}")
        mapping = {f.name: (getattr(theirs.cfg.actions, f.name), getattr(task.cfg.actions, f.name))
                   for f in dataclasses.fields(task.cfg.actions)}  # fmt: skip
        differing = {k: v for k, v in mapping.items() if v[0] != v[1]}
        if differing:
            raise ConfigError(f"{key}: the expert maps its actions otherwise, actions.<field>: (expert, this run) "
                              f"{differing}")  # fmt: skip
        layout, mine = theirs.obs_layout, task.obs_layout
        columns = {k: v for k, v in layout.slices.items() if v.stop <= layout.policy_dim}
        differing = [k for k, v in columns.items() if mine.slices.get(k) != v or v.stop > mine.policy_dim]
        if differing:
            raise ConfigError(f"{key}: the expert's policy columns {differing} are not this task's same columns "
                              f"(expert: {columns}; this task: {mine.slices})")  # fmt: skip
        actor = load_actor(checkpoint, cfg, env.action_space)
    finally:
        env.close()
    if actor.obs_dim != layout.policy_dim:
        raise ConfigError(f"{key}: the checkpoint reads {actor.obs_dim} columns, its run's policy {layout.policy_dim}")
    return actor


class WithExpert:
    """A scripted teacher near an edge (its ``near_edge``: the climbing gait with a rise or a drop ahead), a
    trained policy (the expert, reading the leading policy columns it was trained on) everywhere else. Every
    state has a label, so :attr:`active` is all envs: the guide keeps the expert's tracking as well as the
    gait's climbing and descending. The gait's states are :attr:`focus`: a few percent of the states, they
    make up half of each mini-batch, or a student may learn the expert's driving and not the gait's lift."""

    def __init__(self, teacher, expert: MLPModel, venv) -> None:
        self.teacher, self.expert, self.venv = teacher, expert, venv
        self.active = np.ones(venv.num_envs, dtype=bool)
        self.focus = np.zeros(venv.num_envs, dtype=bool)

    def __call__(self) -> np.ndarray:
        labels = self.teacher()
        self.focus = self.teacher.near_edge  # the gait's states: rare, so half of every mini-batch (_fit)
        obs = self.venv.get_observations()[POLICY_GROUP][:, : self.expert.obs_dim]
        with torch.no_grad():
            expert = self.expert(TensorDict({POLICY_GROUP: obs}, batch_size=[len(obs)])).clamp(-1.0, 1.0)
        return np.where(self.focus[:, None], labels, expert.numpy().astype(np.float32))


def _focus(teacher: Teacher, n: int) -> torch.Tensor:
    """The teacher's ``focus`` states ``(n,)`` of its latest call (none for a teacher without one)."""
    focus = getattr(teacher, "focus", None)
    return torch.as_tensor(focus) if focus is not None else torch.zeros(n, dtype=torch.bool)


def _fit(actor, optimizer, obs: torch.Tensor, labels: torch.Tensor, focus: torch.Tensor,
         rng: np.random.Generator, steps: int = GRADIENT_STEPS, focus_share: float = FOCUS_SHARE) -> float:  # fmt: skip
    """``steps`` Adam steps of the actor's mean toward ``labels`` over random mini-batches, ``focus_share`` of
    each drawn from the ``focus`` states where there are any; the last loss."""
    loss = float("nan")
    pool = torch.nonzero(focus).squeeze(1).numpy()
    for _ in range(steps):
        size = min(MINI_BATCH, len(obs))
        idx = rng.integers(len(obs), size=size)
        if len(pool):
            k = int(size * focus_share)
            idx[:k] = pool[rng.integers(len(pool), size=k)]
        idx = torch.as_tensor(idx)
        batch = TensorDict({POLICY_GROUP: obs[idx]}, batch_size=[len(idx)])
        err = torch.nn.functional.mse_loss(actor(batch), labels[idx])
        optimizer.zero_grad()
        err.backward()
        optimizer.step()
        loss = float(err.detach())
    return loss


class TeacherGuide:
    """PPO with the teacher kept where it is active (``algo.params.teacher_guide``): every env step records the
    states where ``teacher.active`` (the climbing teacher: a rise ahead; with an expert: every state) with its
    actions and ``focus``, and after each PPO update the actor's mean takes ``steps`` Adam steps toward them over
    the latest ``BUFFER_ROUNDS`` rollouts' such states (logged as ``Loss/imitation``), ``focus_share`` of each
    mini-batch from the ``focus`` states (``algo.params.guide_focus``). Elsewhere PPO alone shapes the policy."""

    def __init__(self, alg, venv, teacher: Teacher, steps: int = GRADIENT_STEPS,
                 focus_share: float = FOCUS_SHARE) -> None:  # fmt: skip
        self.alg, self.venv, self.teacher, self.steps, self.focus_share = alg, venv, teacher, steps, focus_share
        self.optimizer = torch.optim.Adam(alg.actor.mlp.parameters(), lr=LEARNING_RATE)
        self.rng = np.random.default_rng(1)
        #: per rollout (the latest BUFFER_ROUNDS), its steps' active states and the teacher's actions there
        self.rollouts: list[list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]] = [[]]
        self._step, self._update = venv.step, alg.update
        venv.step, alg.update = self.step, self.update

    def step(self, actions: torch.Tensor):
        labels = torch.as_tensor(self.teacher())
        active = torch.as_tensor(self.teacher.active)
        if active.any():
            obs = self.venv.get_observations()[POLICY_GROUP]
            focus = _focus(self.teacher, len(obs))
            self.rollouts[-1].append((obs[active], labels[active], focus[active]))
        return self._step(actions)

    def update(self, *args, **kwargs) -> dict[str, float]:
        losses = self._update(*args, **kwargs)
        steps = [step for rollout in self.rollouts for step in rollout]
        if steps:
            obs, labels, focus = (torch.cat(column) for column in zip(*steps, strict=True))
            loss = _fit(self.alg.actor, self.optimizer, obs, labels, focus, self.rng, self.steps, self.focus_share)
            losses = {**losses, "imitation": loss}
        self.rollouts.append([])
        del self.rollouts[:-BUFFER_ROUNDS]
        return losses


def imitate(alg, venv, teacher: Teacher, steps: int, std: float, log: Callable[[str], None]) -> int:
    """DAgger from ``teacher`` into ``alg``'s actor for about ``steps`` env steps; returns the steps taken."""
    actor, critic = alg.actor, alg.critic
    n = venv.num_envs
    per_round = alg.storage.num_transitions_per_env
    rounds = max(1, math.ceil(steps / (per_round * n)))
    optimizer = torch.optim.Adam(actor.mlp.parameters(), lr=LEARNING_RATE)
    buffer: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []  # per round: states, labels, focus
    rng = np.random.default_rng(0)
    obs = venv.get_observations()
    taken = 0
    for r in range(rounds):
        share = max(0.0, 1.0 - 2.0 * r / rounds)  # the teacher's share of the envs: 1 -> 0 over half the rounds
        by_teacher = torch.as_tensor(rng.random(n) < share)
        steps_of_round = []
        for _ in range(per_round):
            label = torch.as_tensor(teacher())
            with torch.no_grad():
                student = actor(obs) + std * torch.randn(n, label.shape[1])
            steps_of_round.append((obs[POLICY_GROUP].clone(), label, _focus(teacher, n)))
            actor.update_normalization(obs)
            critic.update_normalization(obs)
            obs, _, _, _ = venv.step(torch.where(by_teacher[:, None], label, student))
            taken += n
        buffer.append(tuple(torch.cat(column) for column in zip(*steps_of_round, strict=True)))
        del buffer[:-BUFFER_ROUNDS]
        loss = _fit(actor, optimizer, *(torch.cat(column) for column in zip(*buffer, strict=True)), rng)
        if (r + 1) % max(1, rounds // 10) == 0 or r + 1 == rounds:
            log(f"imitation round {r + 1}/{rounds} steps={taken} teacher_share={share:.2f} loss={loss:.4f}")
    dist = actor.distribution
    with torch.no_grad():
        if hasattr(dist, "std_param"):
            dist.std_param.fill_(std)
        else:
            dist.log_std_param.fill_(math.log(std))
    return taken
