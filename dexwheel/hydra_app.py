"""The scripts' Hydra entry point (:func:`hydra_main`): the command line checked first, in the project's one-line
style (:mod:`dexwheel.overrides`), the run folders' names registered (:mod:`dexwheel.run_folders`)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

from dexwheel.cli import refuse


def hydra_main(config_name: str) -> Callable[[Callable[[Any], Any]], Callable[..., Any]]:
    """``hydra.main`` on ``configs/<config_name>.yaml`` whose entry first checks the command line's overrides: a
    typo (``robot=solenopsys``, ``drive=PD``, a misspelt key) is :func:`refuse`'s one line naming it and the closest
    valid name, where Hydra would print 7-12 lines advising ``+key=...`` (:mod:`dexwheel.overrides`). The folder it
    runs in is on the module path (after the installed packages), for a user's own terms."""
    import hydra

    from dexwheel import run_folders
    from dexwheel.overrides import CONFIG_DIR, check_command_line
    from dexwheel.renames import translate_overrides
    from dexwheel.tasks.registry import TaskRegistryError, load_user_tasks

    def decorate(task: Callable[[Any], Any]) -> Callable[..., Any]:
        entry = hydra.main(config_path=str(CONFIG_DIR), config_name=config_name, version_base="1.3")(task)

        @functools.wraps(task)
        def main(*args: Any) -> Any:
            run_folders.register()  # configs/train.yaml's run folder names
            sys.argv[1:], notes = translate_overrides(sys.argv[1:])  # old task names and keys: one table
            for note in notes:
                print(f"warning: {note}", file=sys.stderr)
            # a user's own modules (terms: func: "mypkg.terms:f") in the folder the script runs in, as `python -m`
            # and `python -c` find them; Python puts only scripts/ on the path. Last: they shadow no package.
            if os.getcwd() not in sys.path:
                sys.path.append(os.getcwd())
            try:  # a user's own tasks (DEXWHEEL_TASKS, the dexwheel.tasks entry points), from that folder too
                load_user_tasks()
            except TaskRegistryError as e:
                refuse(str(e))
            if why := check_command_line(config_name, sys.argv[1:]):
                refuse(why)
            return entry(*args)

        return main

    return decorate
