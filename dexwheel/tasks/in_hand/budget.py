"""The in-hand tasks' exploration budget (``python scripts/reward_budget.py``): what random actions at PPO's exploration
noise cost per step, term by term, against what the rotation term pays at the target rate.

Per noise level ``std`` (0: holding still): every env of the vector env steps with actions ``clip(std * N(0, 1), -1,
1)`` (what a Gaussian policy of that std explores around a zero mean; with the delta mapping a move of up to
``delta_scale`` rad per step), and each reward term's weighted contribution (``info["reward_<term>"]``) is averaged
over envs and steps; a drop's price is counted from the terminations (the vector env reports a reset env's info).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

TASK_TERM = "rotation_velocity"
DROP_TERM = "termination_penalty"


def measure(env_id: str, kwargs: dict, num_envs: int, steps: int, std: float, seed: int) -> dict[str, float]:
    """The mean per-step contribution of each reward term (and ``total``, ``drops``: drops per env-step,
    ``rate``: the mean rotation rate, rad/s) with random actions of noise ``std``."""
    venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    try:
        task = venv.unwrapped.task
        venv.reset(seed=seed)
        rng = np.random.default_rng(seed + 1)
        coef = dict(zip(task.cfg.rewards, task.terms.reward_coef, strict=True))
        sums: dict[str, float] = {f"reward_{k}": 0.0 for k in task.cfg.rewards}
        total = drops = rate = 0.0
        for _ in range(steps):
            a = np.clip(std * rng.standard_normal((num_envs, task.actions.dim)), -1.0, 1.0).astype(np.float32)
            _, reward, terminated, _, info = venv.step(a)
            for key in sums:
                column = np.asarray(info[key], dtype=np.float64)
                sums[key] += float(column[~terminated].sum())
            total += float(reward.sum())
            drops += float(terminated.sum())
            rate += float(np.asarray(info["rotation_rate"])[~terminated].sum())
        n = num_envs * steps
        out = {k.removeprefix("reward_"): v / n for k, v in sums.items()}
        if DROP_TERM in coef:
            out[DROP_TERM] = coef[DROP_TERM] * drops / n
        out.update(total=total / n, drops=drops / n, rate=rate / n)
        return out
    finally:
        venv.close()


def task_pay(env_id: str, kwargs: dict, target_rate: float) -> float:
    """What the rotation term pays per step at ``target_rate`` rad/s (its weight times the rate within its clip)."""
    from dexwheel.tasks.registry import record_of_env, resolve

    record, robot = record_of_env(env_id)
    cfg = resolve(record.make_config)(record.default_config(robot), **kwargs)
    term = cfg.rewards[TASK_TERM]
    clip = float(term.params.get("max_rate", np.inf))
    return float(term.weight) * min(target_rate, clip)


def budget(env_id: str, kwargs: dict, num_envs: int, steps: int, stds: list[float], seed: int,
           target_rate: float) -> dict:  # fmt: skip
    """Every noise level's measurement and the pay at the target rate."""
    rows = {f"{s:g}": measure(env_id, kwargs, num_envs, steps, s, seed) for s in stds}
    return {"env": env_id, "kwargs": kwargs, "num_envs": num_envs, "steps": steps, "seed": seed,
            "target_rate": target_rate, "task_pay": task_pay(env_id, kwargs, target_rate), "rows": rows}  # fmt: skip


def penalties(row: dict[str, float]) -> float:
    """The penalties' sum (every term's contribution but the task term's) per step."""
    return sum(v for k, v in row.items() if k not in (TASK_TERM, "total", "drops", "rate"))


def format_table(result: dict) -> str:
    rows = result["rows"]
    terms = [k for k in next(iter(rows.values())) if k not in ("total", "drops", "rate")]
    head = f"{'term':<22}" + "".join(f"{'std ' + s:>12}" for s in rows)
    lines = [f"{result['env']}: per-step reward contributions, {result['num_envs']} envs x {result['steps']} steps",
             head, "-" * len(head)]  # fmt: skip
    for t in terms:
        lines.append(f"{t:<22}" + "".join(f"{r[t]:>12.4f}" for r in rows.values()))
    lines.append(f"{'penalties':<22}" + "".join(f"{penalties(r):>12.4f}" for r in rows.values()))
    lines.append(f"{'total':<22}" + "".join(f"{r['total']:>12.4f}" for r in rows.values()))
    lines.append(f"{'drops per env-step':<22}" + "".join(f"{r['drops']:>12.4f}" for r in rows.values()))
    lines.append(f"{'rotation rate rad/s':<22}" + "".join(f"{r['rate']:>12.4f}" for r in rows.values()))
    pay = result["task_pay"]
    lines.append(f"the rotation term pays {pay:.4f} per step at {result['target_rate']:g} rad/s; the penalties at each "
                 "std are " + ", ".join(f"{-penalties(r) / pay:.0%}" for r in rows.values()) + " of it")  # fmt: skip
    return "\n".join(lines)
