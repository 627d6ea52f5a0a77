"""Bad command-line input as the project reports it: one line ``error: <option>: ...`` on stderr, exit status 2,
before any work starts."""

from __future__ import annotations

import argparse
import sys
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
