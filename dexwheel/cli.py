"""Bad command-line input as the project reports it: one line ``error: <option>: ...`` on stderr, exit status 2,
before any work starts."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn


def refuse(message: str) -> NoReturn:
    """Print ``error: <message>`` (it starts with the option it is about) and exit 2."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose own errors (an unknown choice, a bad value) are :func:`refuse`'s one line, not
    the usage followed by ``prog: error: argument --x: ...``."""

    def error(self, message: str) -> NoReturn:
        refuse(message.removeprefix("argument "))


def hydra_main(config_name: str) -> Callable[[Callable[[Any], Any]], Callable[..., Any]]:
    """``hydra.main`` on ``configs/<config_name>.yaml`` whose entry first checks the command line's overrides: a
    typo (``robot=solenopsys``, ``drive=PD``, a misspelt key) is :func:`refuse`'s one line naming it and the closest
    valid name, where Hydra would print 7-12 lines advising ``+key=...`` (:mod:`dexwheel.overrides`). The folder it
    runs in is on the module path (after the installed packages), for a user's own terms."""
    import hydra

    from dexwheel import run_folders
    from dexwheel.overrides import CONFIG_DIR, check_command_line

    def decorate(task: Callable[[Any], Any]) -> Callable[..., Any]:
        entry = hydra.main(config_path=str(CONFIG_DIR), config_name=config_name, version_base="1.3")(task)

        @functools.wraps(task)
        def main(*args: Any) -> Any:
            run_folders.register()  # configs/train.yaml's run folder names
            if why := check_command_line(config_name, sys.argv[1:]):
                refuse(why)
            # a user's own modules (terms: func: "mypkg.terms:f") in the folder the script runs in, as `python -m`
            # and `python -c` find them; Python puts only scripts/ on the path. Last: they shadow no package.
            if os.getcwd() not in sys.path:
                sys.path.append(os.getcwd())
            return entry(*args)

        return main

    return decorate
