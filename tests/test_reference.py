"""The manual's generated reference pages (scripts/gen_reference.py) say what the code says today.

The term tables, config fields, Hydra keys, ids and API pages under docs/reference/ are written by the script;
a change to a task's table, a config field or a config file that is not followed by ``python
scripts/gen_reference.py`` fails here, naming the page. Terms are found by name within their id's section, never
by position.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
import typing
from pathlib import Path

import gymnasium as gym
import pytest

from dexwheel.tasks.registry import tasks
from dexwheel.tasks.terms import Check, func_path, resolve

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


gen = _load_generator()


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return gen.pages()


def _section(page: str, heading: str) -> str:
    """The text under the ``## ``/``### `` heading that contains ``heading``, up to the next heading of its level."""
    lines = page.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#") and heading in line:
            level = line.split(" ", 1)[0]
            end = next((j for j in range(i + 1, len(lines)) if lines[j].split(" ", 1)[0] in ("#", "##", level)),
                       len(lines))  # fmt: skip
            return "\n".join(lines[i:end])
    raise AssertionError(f"no heading with {heading!r}")


def _row(text: str, first_cell: str) -> str:
    rows = [line for line in text.splitlines() if line.startswith(f"| {first_cell} |")]
    assert len(rows) == 1, f"{len(rows)} rows start with {first_cell!r} in:\n{text}"
    return rows[0]


def test_the_committed_pages_are_a_fresh_generation(pages):
    stale = [rel for rel, text in pages.items()
             if not (REFERENCE / rel).is_file() or (REFERENCE / rel).read_text(encoding="utf-8") != text]  # fmt: skip
    assert not stale, f"stale generated pages {stale}: run python scripts/gen_reference.py and commit them"


def test_every_id_has_each_of_its_terms_with_its_function_and_checks(pages):
    page = pages["terms.md"]
    for env_id in gen.registered_ids():
        env = gym.make(env_id)
        cfg = gen.task_config(env)
        env.close()
        text = _section(page, env_id)
        first = text.splitlines()[0].removeprefix("## ").split(", ")[0]
        for section in gen.SECTIONS:
            table = _section(text, f"{first}: {section}")
            for name, entry in getattr(cfg, section).items():
                row = _row(table, f"`{name}`")
                assert gen.short_path(func_path(entry.func)) in row, (env_id, section, name)
                func = resolve(entry.func, name)
                hints = typing.get_type_hints(func, include_extras=True)
                for param, hint in hints.items():
                    for check in getattr(hint, "__metadata__", ()):
                        if isinstance(check, Check) and gen.check_text(check):
                            assert gen.check_text(check) in row, (env_id, name, param, row)


def test_the_isaac_lab_counterparts_are_read_without_importing_isaac_lab():
    code = (
        "import sys, importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('g', {str(ROOT / 'scripts' / 'gen_reference.py')!r})\n"
        "g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)\n"
        "m = g.isaaclab_counterparts()\n"
        "assert not [k for k in sys.modules if k.split('.')[0] in ('isaaclab', 'newton', 'warp')], 'imported'\n"
        "print(len(m))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 10


def test_every_default_term_has_its_isaac_lab_counterpart_named():
    """Each default table of each id with an Isaac Lab task runs on Isaac Lab (tests/isaaclab build them): the page
    names its function; so do the optional randomisation events of the object tasks."""
    counterparts = gen.isaaclab_counterparts()
    folders = {r.isaaclab_cfg.split(".")[3] for r in tasks().values() if r.isaaclab}  # dexwheel.isaaclab.tasks.<folder>
    assert folders == {
        "velocity",
        "hand_pose",
        "in_hand",
    }  # a new Isaac Lab family: its MuJoCo ids join the check below
    from dexwheel.tasks.in_hand import events

    for event in events.MODEL_EVENTS:
        assert counterparts.get(func_path(event)), f"{event.__name__}: no Isaac Lab function read"
    assert "none: refused on Isaac Lab" not in (gen.ROOT / "docs/reference/terms.md").read_text()
    for env_id in gen.registered_ids():
        env = gym.make(env_id)
        cfg = gen.task_config(env)
        env.close()
        for section in gen.SECTIONS:
            for name, entry in getattr(cfg, section).items():
                assert counterparts.get(func_path(entry.func)), f"{env_id} {section}.{name}: no Isaac Lab function read"


def test_every_config_field_and_section_field_has_a_row(pages):
    from dexwheel.tasks.hand_pose.config import G20HandConfig
    from dexwheel.tasks.in_hand.config import InHandCfg
    from dexwheel.tasks.velocity.config import WheelLegEnvCfg

    page = pages["config.md"]
    for cfg in (WheelLegEnvCfg(), G20HandConfig(), InHandCfg()):
        for f in dataclasses.fields(cfg):
            assert f"| `{f.name}` |" in page, f.name
            sub = getattr(cfg, f.name)
            if dataclasses.is_dataclass(sub):
                for g in dataclasses.fields(sub):
                    assert f"| `{f.name}.{g.name}` |" in page, f"{f.name}.{g.name}"


def test_every_config_group_option_and_script_key_is_listed(pages):
    page = pages["hydra.md"]
    for option in (ROOT / "configs").rglob("*.yaml"):
        group = option.parent.relative_to(ROOT / "configs").as_posix()
        if group != ".":
            assert f"| `{group}` | `{option.stem}` |" in page, option
    assert "| `train.total_timesteps` |" in page and "| `steps.trials` |" in page


def test_every_registered_id_and_isaac_lab_id_is_listed(pages):
    page = pages["ids.md"]
    for env_id in gen.registered_ids():
        assert f"| `{env_id}` |" in page
    for task in (i for r in tasks().values() for i in r.isaaclab.values()):
        assert f"| `{task}` |" in page


def test_every_package_has_an_api_page_in_the_nav(pages):
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for package in gen.packages():
        assert f"api/{package}.md" in pages, package
        assert f"reference/api/{package}.md" in nav, f"mkdocs.yml's nav lacks reference/api/{package}.md"


@pytest.mark.slow
def test_check_names_a_stale_page_and_a_page_no_longer_generated(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "REFERENCE", tmp_path / "docs" / "reference")
    assert gen.main([]) == 0
    assert gen.main(["--check"]) == 0
    capsys.readouterr()
    terms = tmp_path / "docs" / "reference" / "terms.md"
    terms.write_text(terms.read_text() + "\nedited by hand\n")
    (tmp_path / "docs" / "reference" / "api" / "gone.md").write_text("# gone\n")
    assert gen.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "stale: docs/reference/terms.md" in out and "not generated any more: docs/reference/api/gone.md" in out
    assert terms.read_text().endswith("edited by hand\n")  # --check writes nothing
    assert gen.main([]) == 0
    assert not (tmp_path / "docs" / "reference" / "api" / "gone.md").exists()
    assert gen.main(["--check"]) == 0
