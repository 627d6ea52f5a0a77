"""Every ```bash block of the manual runs here at a tiny budget, or names the test that covers it as a long command.

The manual is README.md and docs/ (not docs/notes/, the dated history, nor the generated reference). A block runs
in a fresh folder, its commands one after the other as a user types them (``python scripts/<x>.py ...`` from the
repository's scripts/; a ``VAR=value`` prefix sets the variable), each with the budget overrides of :data:`TINY`
(a typed budget is replaced by the tiny one, and a key the command types is not added again); ``make <target>`` is
checked with ``make -n`` (what it would run, without running it: ``make test`` is what CI runs). A block that
cannot run so (a full training, a GPU, a display, Isaac Lab at scale, a ROS 2 install, a package install) is
marked just above its fence::

    <!-- long: tests/rl/test_training.py::test_resume_continues_the_step_count -->

naming the tests that run what it shows; :func:`test_every_bash_block_runs_or_names_real_tests` checks that
each named test exists and that every other block holds only commands this runner can run. A page's blocks run
in one folder, in order (a run one block trains, the next evaluates). The runs are marked
``docs_bash`` (and ``slow``: ``make test-fast`` leaves them out; ``make test`` runs them).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BASH_FENCE = re.compile(r"^(?P<indent>[ ]*)```bash[ \t]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
LONG = re.compile(r"<!--\s*long:\s*(?P<tests>[^>]*?)\s*-->\s*$")
#: the scripts a block may run, each with its tiny budget (:func:`tiny`)
RUNNABLE = {"train.py", "evaluate.py", "export.py", "results.py", "soak.py"}
#: a training's tiny budget: a typed value of these keys is replaced, a missing one added
TINY_TRAIN = {
    "train.total_timesteps": "2048",
    "train.num_envs": "4",
    "train.eval_every_steps": "1024",
    "train.eval_episodes": "1",
    "train.checkpoint_every_steps": "1024",
    "train.progress_bar": "false",
}
#: keys whose typed value becomes the tiny budget's (a task's budget is the run's default budget)
SAME_AS = {"task.train.total_timesteps": "train.total_timesteps", "task.train.num_envs": "train.num_envs"}
#: the imitation phases of a run with a teacher, shortened so that PPO still runs within the tiny budget
TINY_TEACHER = {"algo.params.teacher_steps": "256", "algo.params.critic_warmup": "1"}
TINY_EPISODE = {"hand": "task.hand.max_episode_steps=50", "wheel_leg": "task.wheel_leg.episode_length_s=2.0"}
#: tasks whose episodes are shortened by a key of their own (their config's ``episode_length_s``)
TINY_TASK_EPISODE = {t: f"task.{t}.episode_length_s=1.0" for t in ("in_hand_rotate", "in_hand_reorient")}
#: the in-hand benchmark's tiny protocol
TINY_IN_HAND = {"in_hand.trials": "1", "in_hand.seconds": "0.5"}
TINY_STEPS = {"steps.trials": "1", "steps.heights": "[0.05]", "steps.stairs": "false", "steps.directions": "[up]",
              "steps.time_limit_s": "2.0"}  # fmt: skip
#: what a runnable block must not hold: it would run long or need what CI lacks
NOT_HERE = {"backend=isaaclab": "Isaac Lab", "-m": "a sweep", "--multirun": "a sweep", "hydra/launcher": "a sweep"}


def manual_files() -> list[Path]:
    docs = [p for p in sorted((ROOT / "docs").rglob("*.md")) if "notes" not in p.relative_to(ROOT / "docs").parts]
    return [ROOT / "README.md", *docs]


@dataclass(frozen=True)
class Block:
    path: str  # relative to the repository
    line: int  # of the opening fence
    commands: tuple[str, ...]
    long: tuple[str, ...]  # the tests a long block names; empty: it runs here

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"


def commands(code: str) -> tuple[str, ...]:
    """The commands of a block: continuation lines joined, blank and comment lines left out."""
    out, current = [], ""
    for raw in textwrap.dedent(code).splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        line = current + line
        current = ""
        if line.strip() and not line.strip().startswith("#"):
            out.append(line.strip())
    return tuple(out)


def bash_blocks() -> list[Block]:
    blocks = []
    for path in manual_files():
        text = path.read_text(encoding="utf-8")
        for m in BASH_FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            above = [x for x in text[: m.start()].splitlines() if x.strip()]
            marker = LONG.search(above[-1]) if above else None
            tests = tuple(re.split(r"[\s,]+", marker["tests"])) if marker else ()
            blocks.append(Block(path.relative_to(ROOT).as_posix(), line, commands(m["code"]), tests))
    return blocks


BLOCKS = bash_blocks()


def split(command: str) -> tuple[dict[str, str], list[str]]:
    """``VAR=value ... program args`` as the variables and the argument list (shell quoting and comments)."""
    words = shlex.split(command, comments=True)
    env = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        key, _, val = words.pop(0).partition("=")
        env[key] = val
    return env, words


def why_not_runnable(command: str) -> str | None:
    """Why this runner cannot run ``command`` (None: it can)."""
    _, words = split(command)
    if not words:
        return "no command"
    if words[0] == "make":
        return None
    if words[0] != "python" or len(words) < 2 or not words[1].startswith("scripts/"):
        return f"{words[0]} {words[1] if len(words) > 1 else ''}".strip() + " is no script this runner runs"
    if Path(words[1]).name not in RUNNABLE:
        return f"{words[1]} is not run here (it runs: {sorted(RUNNABLE)})"
    for word in words[2:]:
        if "<" in word and ">" in word:
            return f"{word} is a placeholder: write a concrete value"
        for token, what in NOT_HERE.items():
            if word == token or word.startswith(token + "="):
                return f"{word}: {what}"
    return None


def test_the_manual_has_runnable_and_long_bash_blocks():
    runnable = [b for b in BLOCKS if not b.long]
    assert runnable and len(BLOCKS) > len(runnable), [b.id for b in BLOCKS]


def _test_exists(node_id: str) -> str | None:
    """Why ``tests/x.py::test_y`` (or ``::Class::test_y``) names no test (None: it does)."""
    file, _, name = node_id.partition("::")
    path = ROOT / file
    if not (file.startswith("tests/") and path.is_file()):
        return f"{file} is no test file"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scope: list[ast.stmt] = tree.body
    for part in name.split("::"):
        part = part.split("[", 1)[0]
        found = [n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                 and n.name == part]  # fmt: skip
        if not found:
            return f"{file} has no {part}"
        scope = found[0].body if isinstance(found[0], ast.ClassDef) else []
    return None if name.split("::")[-1].startswith("test") else f"{name} is no test"


def test_every_bash_block_runs_or_names_real_tests():
    problems = []
    for block in BLOCKS:
        if block.long:
            problems += [f"{block.id}: long: {why}" for t in block.long if (why := _test_exists(t))]
            continue
        problems += [f"{block.id}: {c}\n    {why}" for c in block.commands if (why := why_not_runnable(c))]
    assert not problems, (
        "bash blocks that neither run here nor name the test that covers them (mark such a block with "
        "<!-- long: tests/<file>.py::<test> --> just above its fence):\n" + "\n".join(problems)
    )


def _key(word: str) -> str:
    return word.split("=", 1)[0].lstrip("+~") if "=" in word else ""


def _family(words: list[str], cwd: Path) -> str:
    """The robot family a training or evaluation command runs: its ``robot=``, else its run's, else Solenopsis."""
    for word in words:
        if word.startswith("robot="):
            return "hand" if word.split("=", 1)[1].startswith("g20") else "wheel_leg"
        if word.startswith(("run=", "train.resume=")):
            config = cwd / word.split("=", 1)[1] / "config.yaml"
            if config.is_file():
                return yaml.safe_load(config.read_text())["robot"]["family"]
    return "wheel_leg"


def tiny(words: list[str], cwd: Path) -> list[str]:
    """``python scripts/<x>.py args`` with the tiny budget: typed budgets replaced, missing ones added."""
    script, args = Path(words[1]).name, words[2:]
    typed = {_key(w) for w in args}
    if script == "train.py":
        resume = "train.resume" in typed
        budget = {**TINY_TRAIN, "train.total_timesteps": "4096" if resume else "2048"}
        if "experiment" in typed or "algo.params.teacher" in typed:
            budget |= TINY_TEACHER
        out = []
        for w in args:
            key = SAME_AS.get(_key(w), _key(w))
            out.append(f"{_key(w)}={budget[key]}" if key in budget else w)
        out += [f"{k}={v}" for k, v in budget.items() if k not in typed and k not in {SAME_AS.get(t) for t in typed}]
        task = next((w.split("=", 1)[1] for w in args if w.startswith("task=")), None)
        episode = TINY_TASK_EPISODE.get(task) or TINY_EPISODE[_family(args, cwd)]
        if not resume and _key(episode) not in typed:
            out.append(episode)
        return out
    if script == "evaluate.py":
        if "benchmark" in typed:
            tiny = TINY_STEPS if "benchmark=steps" in args else TINY_IN_HAND
            return [*[f"{_key(w)}={tiny[_key(w)]}" if _key(w) in tiny else w for w in args],
                    *[f"{k}={v}" for k, v in tiny.items() if k not in typed]]  # fmt: skip
        return [*[w for w in args if _key(w) != "episodes"], "episodes=1"]
    if script == "results.py":
        return [*args, "seeds=[0]", "sets=[20000]", "stress=false", "physics_steps=1024",
                *[f"{k}={v}" for k, v in TINY_TRAIN.items()], TINY_EPISODE[_family(args, cwd)]]  # fmt: skip
    if script == "soak.py":
        return [*args, "--steps", "300"]
    return args


def run_command(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env_vars, words = split(command)
    env = {**os.environ, **env_vars}
    if words[0] == "make":
        argv = ["make", "-n", "-C", str(ROOT), *words[1:]]
    else:
        argv = [sys.executable, str(ROOT / words[1]), *tiny(words, cwd)]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def pages_to_run() -> dict[str, list[Block]]:
    """The runnable blocks by page, in page order: a page's blocks share a folder, as its reader's commands do (a
    run trained in one block is evaluated in the next)."""
    out: dict[str, list[Block]] = {}
    for block in BLOCKS:
        if not block.long:
            out.setdefault(block.path, []).append(block)
    return out


@pytest.mark.slow
@pytest.mark.docs_bash
@pytest.mark.parametrize("page", list(pages_to_run()))
def test_bash_blocks_run(page: str, tmp_path: Path):
    for block in pages_to_run()[page]:
        for command in block.commands:
            if why_not_runnable(command):
                pytest.fail(f"{block.id}: {command}: {why_not_runnable(command)}")
            done = run_command(command, tmp_path)
            assert done.returncode == 0, (
                f"{block.id}: `{command}` exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n"
                f"--- stderr\n{done.stderr[-3000:]}"
            )


def test_documented_installs_name_real_extras():
    """A ``pip install -e ".[...]"`` the manual shows names extras pyproject.toml has, and the Makefile's install
    line installs every extra (what `make` gives is what the manual says it gives)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    shown = []
    for path in manual_files():
        for m in re.finditer(r"pip install[^\n`]*?-e\s+[\"']?\.\[(?P<extras>[\w,\s-]+)\]", path.read_text()):
            shown.append((path.relative_to(ROOT).as_posix(), {e.strip() for e in m["extras"].split(",")}))
    assert shown, "the manual shows no pip install -e '.[...]'"
    unknown = [(page, sorted(names - extras)) for page, names in shown if names - extras]
    assert not unknown, f"extras pyproject.toml lacks: {unknown}"
    make = re.search(r"pip install --quiet -e \"\.\[(?P<extras>[^\]]+)\]\"", (ROOT / "Makefile").read_text())
    assert make and set(make["extras"].split(",")) == extras, "the Makefile installs other extras than pyproject's"
