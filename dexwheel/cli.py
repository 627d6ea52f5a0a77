"""The command line as the project speaks it: bad input as one line ``error: <option>: ...`` on stderr, exit status
2, before any work starts; and the paths and commands it prints, as the user would type them from where they stand."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn


def refuse(message: str) -> NoReturn:
    """Print ``error: <message>`` (it starts with the option it is about) and exit 2."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose own errors (an unknown choice, a bad value) are :func:`refuse`'s one line, not
    the usage followed by ``prog: error: argument --x: ...``."""

    def error(self, message: str) -> NoReturn:
        refuse(message.removeprefix("argument "))


#: The repository's scripts (``python scripts/train.py ...``), whose commands the project prints.
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def shown_path(path: str | Path) -> str:
    """``path`` as the user types it from where they stand: relative to the working directory when inside it,
    else absolute; normalised (no ``..``), symlinks kept."""
    p = Path(os.path.abspath(path))
    cwd = Path(os.path.abspath(Path.cwd()))
    return p.relative_to(cwd).as_posix() if p.is_relative_to(cwd) else p.as_posix()


def python_command() -> str:
    """How the user starts this interpreter: ``python`` in an activated venv or outside any venv, else the venv's
    ``python`` by its path (``.venv/bin/python`` after ``make train``, which does not activate it)."""
    active = os.environ.get("VIRTUAL_ENV")
    if sys.prefix == sys.base_prefix or (active and Path(active).resolve() == Path(sys.prefix).resolve()):
        return "python"
    return shown_path(Path(sys.prefix) / "bin" / "python")


def script_command(script: str, *args: str) -> str:
    """The command line that runs ``scripts/<script>`` with ``args`` from where the user stands, with this
    interpreter (:func:`python_command`): a command the project prints works when pasted."""
    return " ".join([python_command(), shown_path(SCRIPTS / script), *args])
