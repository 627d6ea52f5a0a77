"""A Hydra override that does not compose, explained in one line: the override as typed, what is wrong, and the
closest valid name (:func:`dexwheel.fields.closest`) or the valid ones.

Hydra's own report of a typo (``robot=solenopsys``, ``drive=PD``, ``train.totl_timesteps=5``) is 7-12 lines and
advises ``+key=...``, which adds a key nothing reads instead of fixing the name. Every script's ``hydra.main``
(:func:`dexwheel.hydra_app.hydra_main`) runs :func:`check_command_line` first, and
:func:`dexwheel.rl.run_config.compose` reports its failures with :func:`explain`, so every script answers a typo
the same way. Nothing here imports :mod:`dexwheel.rl` (nor so MuJoCo): ``bridge.py`` must choose its OpenGL
platform before MuJoCo is imported. A config that pulls the env defaults (``configs/train.yaml``) needs them
registered first (importing :mod:`dexwheel.rl` does).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from dexwheel.fields import closest

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
_ABSENT = object()


@contextmanager
def initialized() -> Iterator[None]:
    """Hydra initialized on ``configs/`` for the block (as it already is inside a Hydra app)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        yield
        return
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        yield


def hydra_compose(name: str, overrides: list[str], hydra_config: bool = False) -> DictConfig:
    """Hydra's composition of ``configs/<name>.yaml`` (with its ``hydra`` node when ``hydra_config``); Hydra's own
    errors."""
    from hydra import compose

    with initialized():
        return compose(config_name=name, overrides=overrides, return_hydra_config=hydra_config)


def _values(o: Any) -> list[str]:
    """The option names a group override selects (each value of a sweep ``robot=a,b``; none of a glob)."""
    if o.is_sweep_override():
        try:
            return list(o.sweep_string_iterator())
        except Exception:  # noqa: BLE001 - a glob sweep: its options are Hydra's to expand
            return []
    return [o.value()] if isinstance(o.value(), str) else []


def _line(o: Any) -> str:
    return o.input_line or o.key_or_group


def _first(o: Any) -> str | None:
    """The override with a sweep's first value (what a check composes); None for a glob sweep."""
    if not o.is_sweep_override():
        return _line(o)
    values = _values(o)
    return f"{o.get_key_element()}={values[0]}" if values else None


def _keys(node: Any) -> list[str]:
    return [str(k) for k in node] if isinstance(node, DictConfig) else []


def _exists(cfg: DictConfig, key: str) -> bool:
    return OmegaConf.select(cfg, key, default=_ABSENT, throw_on_missing=False) is not _ABSENT


def missing_key(cfg: DictConfig, key: str) -> str | None:
    """Why the dotted ``key`` is not in ``cfg``, with the nearest existing key or the keys where it would go; None
    when it is there."""
    parts = key.split(".")
    node: Any = cfg
    for i, part in enumerate(parts):
        keys = _keys(node)
        if part in keys:
            node = node[part]
            continue
        where, typed = ".".join(parts[:i]), ".".join(parts[: i + 1])
        if not keys:
            return f"no key {key}: {where} is a value, not a section"
        near = closest(part, keys)
        fixed = ".".join([*parts[:i], near, *parts[i + 1 :]]) if near is not None else None
        if fixed is not None and _exists(cfg, fixed):
            return f"no key {key}; did you mean {fixed}?"
        # a misspelt or misremembered section (``rotation.trial``): the rest matched in each section here
        found = [(f, ".".join([*parts[:i], k, f])) for k in keys if (f := _within(node[k], parts[i + 1 :])) is not None]
        if found:  # the nearest fits only (``trial``: ``steps.trials``, not ``task.train``)
            best = max(_likeness(parts[-1], f.split(".")[-1]) for f, _ in found)
            shown = [path for f, path in found if _likeness(parts[-1], f.split(".")[-1]) == best]
            return f"no key {key}; did you mean {' or '.join(shown)}?"
        # a section left out (``drive.hand.slew_rad_s``: ``drive.hand.drive.slew_rad_s``)
        deeper = [".".join([*parts[:i], k, f]) for k in keys if (f := _within(node[k], parts[i:])) is not None]
        if near is None and deeper:
            return f"no key {key}; did you mean {' or '.join(deeper)}?"
        if near is None:
            return f"no key {typed}; the keys {f'of {where}' if where else 'at the top'}: {', '.join(keys)}"
        return f"no key {key}; did you mean {'.'.join([*parts[:i], near])}?"
    return None


def _likeness(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def _within(section: Any, rest: list[str]) -> str | None:
    """``rest`` (a dotted key's remaining parts) in ``section``, its last part the nearest key there (``trial`` ->
    ``trials``); None when ``rest`` is empty, a part is missing or nothing is near."""
    if not rest:
        return None
    node = section
    for part in rest[:-1]:
        if part not in _keys(node):
            return None
        node = node[part]
    near = closest(rest[-1], _keys(node))
    return ".".join([*rest[:-1], near]) if near is not None else None


def _adds_only_known_keys(name: str, chosen: list[str], line: str) -> bool:
    """Whether ``+<line>`` composes and sets only keys the config has (``+experiment=rough_climb``), rather than
    adding a section nothing reads (``bridge.py +drive=pd``): only then is the ``+`` the fix."""
    try:
        added = hydra_compose(name, [*chosen, f"+{line}"])
    except Exception:  # noqa: BLE001 - it does not compose: no advice to give
        return False
    return set(_keys(added)) <= set(_keys(hydra_compose(name, chosen)))


def explain(name: str, lines: list[str]) -> str | None:
    """The first of ``lines`` (Hydra overrides of ``configs/<name>.yaml``) that names no config group option or
    no key, in one line (``<line>: <why>; did you mean <nearest>?``); None when each names something there."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.types import OverrideType

    parsed, error = _parse(lines)
    if error:
        return error
    with initialized():
        loader = GlobalHydra.instance().config_loader()

        def is_group(key: str) -> bool:
            parent, _, leaf = key.rpartition("/")
            return "." not in key and leaf in loader.list_groups(parent)

        chosen: list[str] = []  # the group selections checked so far
        choices = hydra_compose(name, chosen, hydra_config=True).hydra.runtime.choices
        keyed = []  # the key overrides, checked once every group is chosen
        for o in parsed:
            line, key = _line(o), o.key_or_group
            if o.type == OverrideType.FORCE_ADD:  # ++key: adds or sets, whatever is there
                continue
            if (key in choices and o.type != OverrideType.DEL) or (o.type == OverrideType.ADD and is_group(key)):
                options = loader.get_group_options(key)
                bad = [v for v in _values(o) if v not in options]
                if bad:
                    near, listed = closest(bad[0], options), f"{key}: {', '.join(options)}"
                    return f"{line}: no {key} option {bad[0]}; {f'did you mean {near}? ({listed})' if near else listed}"
                if (first := _first(o)) is not None:
                    chosen.append(first)
                    choices = hydra_compose(name, chosen, hydra_config=True).hydra.runtime.choices
            elif o.type == OverrideType.CHANGE and is_group(key) and _adds_only_known_keys(name, chosen, line):
                return f"{line}: {key} is no default group of {name}.yaml; select it with +{line}"
            elif o.type != OverrideType.ADD:
                keyed.append(o)
        cfg = hydra_compose(name, chosen, hydra_config=True)
        for o in keyed:
            if why := missing_key(cfg, o.key_or_group):
                return f"{_line(o)}: {why}"
    return None


def _parse(lines: list[str]) -> tuple[list[Any], str | None]:
    """Hydra's parse of ``lines``, or a syntax error as one line naming the override."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for line in lines:
        try:
            parser.parse_override(line)
        except Exception as e:  # noqa: BLE001 - Hydra's syntax errors, as one line
            return [], f"{line}: {' '.join(str(e).split())}"
    return parser.parse_overrides(list(lines)), None


def command_line_overrides(argv: list[str]) -> list[str]:
    """The overrides among a Hydra script's arguments (its flags, ``-m``, ``--cfg job``, ... left out)."""
    from hydra._internal.utils import get_args_parser

    return list(get_args_parser().parse_known_args(argv)[0].overrides or [])


def check_command_line(name: str, argv: list[str]) -> str | None:
    """Why a Hydra script on ``configs/<name>.yaml`` cannot start with the arguments ``argv``, in one line naming
    the override; None when they compose. A sweep (``-m robot=a,b``) composes with its first value, and each of
    its option names is checked."""
    lines = command_line_overrides(argv)
    parsed, error = _parse(lines)
    if error:
        return error
    try:
        hydra_compose(name, [f for o in parsed if (f := _first(o)) is not None], hydra_config=True)
    except Exception as e:  # noqa: BLE001 - Hydra's composition errors, as one line
        return explain(name, lines) or " ".join(str(e).split())
    return explain(name, lines) if any(o.is_sweep_override() for o in parsed) else None
