"""The in-hand tasks' exploration budget: what random actions at PPO's exploration noise cost per step, term by term,
against what the rotation term pays at the target rate.

python scripts/reward_budget.py                                   # G20Rotate-v0, 32 envs x 100 steps, std 0 0.3 1
python scripts/reward_budget.py --env G20RotateZ-v0 --std 1.0 --json /tmp/budget.json
python scripts/reward_budget.py --set '{"rewards": {"joint_torques_l2": -1e-3}}'   # another weighting

Per noise level ``std`` (0: holding still), every env of the vector env (reset with ``--seed``) steps ``--steps`` times
with random actions of that noise (dexwheel/tasks/in_hand/budget.py). The budget line: the penalties' sum at each std against the rotation term's pay at
``--target-rate`` rad/s (its weight times the rate, within its clip). The task's penalties are scaled so that the
documented run's starting noise (std 1.0) costs less than a quarter of that pay
(``tests/tasks/in_hand/test_reward_budget.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import dexwheel  # noqa: F401  (registers the env ids)
from dexwheel.cli import Parser, refuse
from dexwheel.tasks.in_hand.budget import budget, format_table


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="G20Rotate-v0", choices=("G20Rotate-v0", "G20RotateZ-v0"))
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--std", type=float, nargs="+", default=[0.0, 0.3, 1.0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target-rate", type=float, default=0.25, help="rad/s (issue 70's PPO target)")
    parser.add_argument("--set", default="{}", help="env keyword changes, as JSON")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)
    try:
        kwargs = json.loads(args.set)
    except json.JSONDecodeError as e:
        refuse(f"--set: not JSON ({e})")
    if not isinstance(kwargs, dict):
        refuse(f"--set: expected a JSON object of env keywords, got {args.set}")
    if args.num_envs < 1 or args.steps < 1:
        refuse(f"--num-envs, --steps: expected integers >= 1, got {args.num_envs}, {args.steps}")
    if any(not 0.0 <= s <= 10.0 for s in args.std):
        refuse(f"--std: expected noise levels in [0, 10], got {args.std}")
    if not args.target_rate > 0:
        refuse(f"--target-rate: expected a rate > 0 rad/s, got {args.target_rate}")
    result = budget(args.env, kwargs, args.num_envs, args.steps, args.std, args.seed, args.target_rate)
    print(format_table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
