"""The rolling task's finger gait (dexwheel/tasks/in_hand/teacher.py): its gate on fresh grasps, the same gait in
the single and the vector env, and its wiring (evaluate.py policy=teacher, algo.params.teacher=finger_gait)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from cfgutil import compose_cfg

from dexwheel.envs import register_envs
from dexwheel.rl.schema import ConfigError
from dexwheel.tasks.in_hand.teacher import DEFAULT_GAIT, PARAM_DIM, FingerGaitTeacher, GaitParams, gait_targets

register_envs()
#: The rotation benchmark's reset seeds (evaluate.py's eval_seed, trial k: + k): fresh grasps, never searched on.
GATE_SEED = 20000


def _gate(num: int, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``num`` fresh grasps' mean rate (rad/s: the turn about the axis over ``seconds``, a drop ending it)
    and whether it dropped, the gait on every env of one vector env."""
    venv = gym.make_vec("G20Rotate-v0", num_envs=num, vectorization_mode="vector_entry_point",
                        episode_length_s=seconds + 1.0)  # fmt: skip
    venv.reset(seed=GATE_SEED)
    task = venv.unwrapped.task
    teacher = FingerGaitTeacher(task)
    turned, dropped, done = np.zeros(num), np.zeros(num, bool), np.zeros(num, bool)
    for _ in range(round(seconds / task.dt)):
        _, _, terminated, truncated, info = venv.step(teacher())
        live = ~done & ~terminated & ~truncated
        turned[live] += info["rotation_rate"][live] * task.dt
        dropped |= terminated & ~done
        done |= terminated | truncated
    venv.close()
    return turned / seconds, dropped


def test_the_gait_passes_its_gate_on_fresh_grasps():
    """8 fresh grasps (the benchmark's seeds), 10 s: the gait turns the capsule at >= 0.15 rad/s on average, every
    grasp forward, none dropped (the 64-grasp gate: docs/how-to/in-hand.md)."""
    rate, dropped = _gate(8, 10.0)
    assert rate.mean() >= 0.15 and (rate > 0.0).all() and not dropped.any()


def test_holding_still_does_not_turn_it():
    """The zero action from the same grasps turns the capsule by less than a hundredth of the gait's rate."""
    venv = gym.make_vec("G20Rotate-v0", num_envs=4, vectorization_mode="vector_entry_point")
    venv.reset(seed=GATE_SEED)
    turned = np.zeros(4)
    for _ in range(100):
        _, _, terminated, _, info = venv.step(np.zeros((4, 16), dtype=np.float32))
        assert not terminated.any()
        turned += info["rotation_rate"] * venv.unwrapped.task.dt
    assert np.abs(turned).max() / (100 * venv.unwrapped.task.dt) < 0.01


def test_the_single_env_plays_the_gait_as_the_vector_env_does():
    venv = gym.make_vec("G20Rotate-v0", num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=5)
    teacher = FingerGaitTeacher(venv.unwrapped.task)
    singles = [gym.make("G20Rotate-v0") for _ in range(2)]
    policies = []
    from dexwheel.tasks.in_hand.teacher import gait_policy

    for i, env in enumerate(singles):
        env.reset(seed=5 + i)
        policies.append(gait_policy(env))
    for _ in range(30):
        actions = teacher()
        for i, policy in enumerate(policies):
            np.testing.assert_array_equal(actions[i], policy(None))
        obs, *_ = venv.step(actions)
        for i, env in enumerate(singles):
            o, *_ = env.step(actions[i])
            np.testing.assert_array_equal(obs[i], o)


def test_the_gait_ramps_from_the_start_pose_onto_its_cycle():
    p = DEFAULT_GAIT.vector()[None]
    start = np.full((1, 16), 0.3)
    np.testing.assert_allclose(gait_targets(p, np.zeros(1), start), np.clip(start, *_limits()))
    later = DEFAULT_GAIT.ramp + 0.25
    np.testing.assert_array_equal(gait_targets(p, np.array([later]), start), gait_targets(p, np.array([later])))
    assert GaitParams.from_vector(DEFAULT_GAIT.vector()) == DEFAULT_GAIT and len(DEFAULT_GAIT.vector()) == PARAM_DIM
    with pytest.raises(ValueError, match=r"^joints: \['wrist'\] are not the gait's"):
        GaitParams(joints={"wrist": (0.0, 0.0, 0.0)})


def _limits():
    from dexwheel.control import G20_MIMIC

    return G20_MIMIC.active_lower, G20_MIMIC.active_upper


def test_evaluate_scores_the_teacher_on_the_rotation_protocol(tmp_path, monkeypatch):
    from dexwheel.rl.eval_job import evaluate

    monkeypatch.chdir(tmp_path)
    typed = ["policy=teacher", "benchmark=rotation", "in_hand.trials=2", "in_hand.seconds=4",
             "in_hand.objects=[{shape: capsule, size: 0.045, mass: 0.1, length: 0.08, orientation: across}]"]  # fmt: skip
    rows = evaluate(compose_cfg("evaluate", "robot=g20_left", "task=in_hand_rotate", *typed), typed)["g20_left"]["rows"]
    assert rows[0]["object"] == "capsule 45x80 mm 100 g" and rows[0]["drop_rate"] == 0.0 and rows[0]["rate_mean"] > 0.1


def test_the_teacher_is_refused_where_it_has_no_gait():
    from dexwheel.rl.eval_job import evaluate
    from dexwheel.rl.policies import baseline_policy
    from dexwheel.rl.rsl.imitation import teacher_for

    env = gym.make("G20RotateZ-v0")
    with pytest.raises(
        ConfigError, match=r"^policy=teacher: the finger gait rolls the cylinder of the G20 rolling task"
    ):
        baseline_policy("teacher", env, 0)
    with pytest.raises(ConfigError, match=r"^algo.params.teacher=finger_gait: the finger gait rolls .* this run's env is "
                                          r"G20InHandEnv \(task 'rotate_z'\)"):  # fmt: skip
        teacher_for("finger_gait", env)
    typed = ["policy=teacher", "backend=isaaclab"]
    with pytest.raises(ConfigError, match=r"^policy=teacher: the finger gait reads the MuJoCo task's joint command"):
        evaluate(compose_cfg("evaluate", "robot=g20_left", "task=in_hand_rotate", *typed), typed)


def test_algo_params_teacher_finger_gait_resolves_on_the_rolling_task():
    from dexwheel.rl.rsl.imitation import teacher_for

    venv = gym.make_vec("G20Rotate-v0", num_envs=3, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    teacher = teacher_for("finger_gait", venv)
    actions = teacher()
    assert actions.shape == (3, 16) and actions.dtype == np.float32 and teacher.active.all()
    assert np.abs(actions).max() <= 1.0 and np.abs(actions).max() > 0.0


def test_the_rolling_experiment_is_the_documented_run():
    """``+experiment=in_hand_roll`` (docs/results.md#g20-in-hand-rotation): rsl_ppo, 524,288 steps imitating the
    finger gait with std 0.3, then PPO guided by it, 4.5M steps in all; the actor reads the gait's clock."""
    cfg = compose_cfg("train", "robot=g20_left", "task=in_hand_rotate", "+experiment=in_hand_roll")
    p = cfg.algo.params
    assert cfg.algo.name == "rsl_ppo" and (p.teacher, p.teacher_steps, p.teacher_std) == ("finger_gait", 524288, 0.3)
    assert p.teacher_guide is True and cfg.task.train.total_timesteps == 4_500_000
    gait = cfg.task.in_hand_rotate.observations.gait_phase
    assert gait.group == "policy" and gait.params.period == 0.52


@pytest.mark.slow
def test_a_run_imitates_the_finger_gait_before_ppo(tmp_path):
    """``algo.params.teacher=finger_gait`` on the rolling task resolves to the gait; DAgger rounds from it bring the
    student's actions on the gait's own states closer to the gait's (a 0.52 s cycle read from three frames of
    joint positions: slow to learn, a tenth off in 8192 steps)."""
    import torch
    from cfgutil import short
    from tensordict import TensorDict

    from dexwheel.rl.rsl import RslLearner
    from dexwheel.rl.rsl.imitation import imitate
    from dexwheel.rl.schema import validate

    cfg = compose_cfg("train", *short("g20_left", "task=in_hand_rotate", "algo.params.teacher=finger_gait",
                                      "algo.params.teacher_steps=1024", "algo.params.critic_warmup=1", algo="rsl_ppo"))  # fmt: skip
    train_cfg, _, params, policy = validate(cfg)
    run = RslLearner(cfg, train_cfg, params, policy, tmp_path, None)
    try:
        assert isinstance(run.teacher, FingerGaitTeacher)
        alg = run.runner.alg
        states, labels = [], []
        for _ in range(40):  # states the gait visits, with its actions there
            obs = run.venv.get_observations()
            states.append(obs["policy"].clone())
            labels.append(torch.as_tensor(run.teacher()))
            run.venv.step(labels[-1])
        batch = TensorDict({"policy": torch.cat(states)}, batch_size=[len(states) * run.venv.num_envs])
        target = torch.cat(labels)

        def error() -> float:
            with torch.no_grad():
                return float((alg.actor(batch) - target).abs().mean())

        before = error()
        for _ in range(2):  # two calls of 16 rounds (the optimizer afresh each): 8192 steps
            assert imitate(alg, run.venv, run.teacher, 4096, 0.2, lambda line: None) == 4096
        assert error() < 0.9 * before  # measured 0.163 -> 0.133 (0.121 after 16384 steps)
    finally:
        run.close()


def test_the_gait_search_writes_its_best_candidate(tmp_path):
    """scripts/tune_in_hand_gait.py at a tiny budget: its result holds a gait the teacher takes, and an existing
    result is refused unless --overwrite."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[3] / "scripts" / "tune_in_hand_gait.py"
    out = tmp_path / "gait.json"
    args = [sys.executable, str(script), "--out", str(out), "--rounds", "1", "--population", "3", "--elites", "1",
            "--trials", "1", "--seconds", "0.5"]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert GaitParams(**result["best"]).period > 0 and result["log"][0]["round"] == 0 and 0.0 <= result["drops"] <= 1
    again = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and again.stderr.strip().endswith("exists; choose another --out or pass --overwrite")
