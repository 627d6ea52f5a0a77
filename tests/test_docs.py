"""The documentation: every ```python block of README.md and docs/ runs, README.md stays small, the site builds.

Each block runs in a fresh namespace with the repository root as working directory; the test id is
``file:line`` of the block's opening fence, and a traceback's line numbers are the file's. Commands that
take long (training, the bridge, videos) belong in ```bash blocks, sketches that must not run in ```text.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_LIMIT = 10_240  # bytes
# An opening fence (possibly indented, inside a list item), the code, the closing fence at the same indent.
PYTHON_FENCE = re.compile(r"^(?P<indent>[ ]*)```python[ \t]*\n(?P<code>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
# Inline links and images to relative targets: [text](target) with no scheme and no leading '#' or '/'.
RELATIVE_LINK = re.compile(r"\]\((?!https?:|mailto:|#|/)(?P<target>[^)\s#]+)(?:#[^)\s]*)?\)")
# The vendor documents are "the vendor documents" / "the spec"; "seed" means only an RNG seed.
OLD_WORDING = re.compile(r"the seed's|seed \d{3}\b|seed limits|seed section|seed 5\.|shared/spec|shared/seeds")


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def python_blocks() -> list:
    params = []
    for path in markdown_files():
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        for match in PYTHON_FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            code = textwrap.dedent(match.group("code"))
            params.append(pytest.param(rel, line, code, id=f"{rel}:{line}"))
    return params


BLOCKS = python_blocks()


def test_the_docs_have_python_blocks():
    files = {p.values[0] for p in BLOCKS}
    assert "README.md" in files and len(files) >= 3, f"python blocks found only in {sorted(files)}"


@pytest.mark.parametrize(("path", "line", "code"), BLOCKS)
def test_python_block_runs(path: str, line: int, code: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)
    # Pad with the lines above the block, so a traceback points at the line in the Markdown file.
    source = "\n" * line + code
    namespace = {"__name__": "__docs__", "__file__": str(ROOT / path)}
    exec(compile(source, str(ROOT / path), "exec"), namespace)


def test_readme_size():
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_LIMIT, f"README.md has {size} bytes, over {README_LIMIT}: move detail into docs/"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_exist(path: Path):
    """README.md's links are not checked by mkdocs (it is outside docs/); docs/ gets the same check cheaply."""
    text = PYTHON_FENCE.sub("", path.read_text(encoding="utf-8"))
    missing = [m["target"] for m in RELATIVE_LINK.finditer(text) if not (path.parent / m["target"]).exists()]
    assert not missing, f"{path.relative_to(ROOT)} links to files that do not exist: {missing}"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_vendor_document_wording(path: Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    old = [f"{i}: {line.strip()}" for i, line in enumerate(lines, 1) if OLD_WORDING.search(line)]
    assert not old, (
        f"{path.relative_to(ROOT)}: write 'vendor document 001', 'vendor limits', 'the vendor bridge', "
        f"'vendor bridge §5.4' and docs/spec/ ('seed' means only an RNG seed):\n" + "\n".join(old)
    )


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path: Path):
    needed = {"mkdocs": "mkdocs", "material": "mkdocs-material", "mkdocstrings_handlers.python": "mkdocstrings[python]"}
    absent = [pkg for module, pkg in needed.items() if importlib.util.find_spec(module.split(".")[0]) is None]
    if absent:
        pytest.skip(f"{', '.join(absent)} not installed: pip install -e '.[docs]' (the Makefile installs it)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's banner about MkDocs 2
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    assert (tmp_path / "site" / "index.html").is_file()


def heading_anchors(page: Path) -> set[str]:
    """The anchors mkdocs gives ``page``'s headings (Python-Markdown's toc slugs; a repeated one gets ``_1``...)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    anchors: set[str] = set()
    for title in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        slug = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", re.sub(r"`", "", title)).strip().lower())
        anchor, k = slug, 0
        while anchor in anchors:
            k += 1
            anchor = f"{slug}_{k}"
        anchors.add(anchor)
    return anchors


def code_files() -> list[Path]:
    """What the code and configs are: every place a comment or message may cite a manual page."""
    return [*sorted((ROOT / "dexwheel").rglob("*.py")), *sorted((ROOT / "scripts").glob("*.py")),
            *sorted((ROOT / "configs").rglob("*.yaml")), ROOT / "Makefile", ROOT / "pyproject.toml"]  # fmt: skip


DOCS_CITATION = re.compile(r"docs/(?P<page>[\w/.-]+?\.md)(?:#(?P<anchor>[\w-]+))?")
FILE_CITATION = re.compile(r"(?<![\w/])(?P<path>configs/[\w/.-]+\.yaml)")


def test_the_code_cites_manual_pages_and_headings_that_exist():
    """A config's comment linked a heading the page no longer has (issue 68): every ``docs/<page>.md#<anchor>`` the
    code and configs cite names a page and one of its headings."""
    dead = []
    for path in code_files():
        for m in DOCS_CITATION.finditer(path.read_text(encoding="utf-8")):
            page = ROOT / "docs" / m["page"]
            if not page.is_file() or (m["anchor"] and m["anchor"] not in heading_anchors(page)):
                dead.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    assert not dead, "citations of pages or headings that do not exist:\n" + "\n".join(sorted(set(dead)))


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_manual_names_config_files_that_exist(path: Path):
    """train-on-terrain.md named configs/task/rough.yaml after it was renamed (issue 68)."""
    if "notes" in path.parts:  # the dated history names what was there then
        return
    gone = {
        m["path"] for m in FILE_CITATION.finditer(path.read_text(encoding="utf-8")) if not (ROOT / m["path"]).exists()
    }
    assert not gone, f"{path.relative_to(ROOT)} names config files that do not exist: {sorted(gone)}"
