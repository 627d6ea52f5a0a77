"""Evaluate a run (or a baseline policy) as ``scripts/evaluate.py`` does: table, JSON, optional video; the step
benchmark's plot.

``run=<run>`` evaluates the run as trained: its own ``config.yaml`` (:func:`dexwheel.rl.run_config.load_run_config`),
with what the command line changes applied (:func:`env_changes`): an env setting (``task.*``, ``drive=``,
``drive.*``, ``action``, ``composer``, ``collision``, ``env_overrides``) is applied and recorded, in the JSON
(``overrides``) and in the file name; anything that is no evaluation setting (``algo``, ``seed``,
``train.*``, another ``robot=``) is refused naming it, and so is a typed key of evaluate.py's own that this
evaluation would not use (:func:`unused`: ``steps.*`` without ``benchmark=steps``, ``onnx=`` without ``policy=onnx``,
...), naming what it needs.

Each evaluation is kept: its JSON is named by what was evaluated,
``<policy>[_<checkpoint>]_<robot>+<robot>_seed<eval_seed>_ep<episodes>[_<overrides>].json`` in ``<run>/eval/``
(or ``outputs/eval/`` without a run), with ``_2``, ``_3``, ... appended when that name is taken (created
exclusively: two evaluations finishing at once get two files); its videos are ``<same name>_<robot>.mp4``
next to it. ``out=<path>`` names the JSON instead and refuses an existing file; ``overwrite=true`` replaces
existing files instead of keeping them.

``benchmark=steps`` runs the step benchmark (:mod:`dexwheel.protocols.steps`, its protocol ``steps.*``) instead of
episodes, on MuJoCo (:mod:`dexwheel.rl.step_benchmark`) or with ``backend=isaaclab`` on Isaac Lab
(:mod:`dexwheel.isaaclab.step_benchmark`, in its venv): its table per robot, its JSON named
``steps_<policy>[_<checkpoint>]_<robots>[_isaaclab]_seed<eval_seed>_tr<trials>[_<overrides>].json``, kept the same
way, and its plot (:func:`dexwheel.rl.curves.step_benchmark_figure`: each height's shares of success, timeout and
fall) as ``<same name>.png`` next to it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from dexwheel.atomic import move_new, write_atomic, write_new
from dexwheel.cli import shown_path
from dexwheel.protocols import PROTOCOLS
from dexwheel.rl.checkpoints import check_checkpoint, resolve_checkpoint
from dexwheel.rl.env_factory import check_isaaclab_env, env_kwargs, make_env
from dexwheel.rl.evaluation import format_table, run_episodes
from dexwheel.rl.policies import POLICIES, baseline_policy, load_policy
from dexwheel.rl.run_config import (
    ENV_GROUPS,
    check_overrides_read,
    parse_overrides,
    run_config,
    selections,
    set_value,
    value_of,
)
from dexwheel.rl.schema import ConfigError, as_paths, check_device
from dexwheel.sim.rendering import check_offscreen
from dexwheel.tasks.registry import tasks

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
#: evaluate.py's own settings
OWN = ("run", "checkpoint", "policy", "onnx", "episodes", "eval_seed", "robots", "env_overrides", "video",
       "video_episodes", "out", "overwrite", "benchmark", "steps", "in_hand")  # fmt: skip
#: ``benchmark=``: the evaluation protocols run instead of episodes (:mod:`dexwheel.protocols`)
BENCHMARKS = tuple(PROTOCOLS)
#: settings of how the evaluation runs, taken as typed
RUNS_ON = ("backend", "train.device")
#: ``backend=``: the backends evaluations run on
BACKENDS = tuple(sorted(p.stem for p in (CONFIG_DIR / "backend").glob("*.yaml")))
#: an override list this long or longer is named by its start and a hash
NAME_MAX = 60


def with_robot(cfg: DictConfig, robot: str) -> DictConfig:
    """``cfg`` with its robot swapped for another of the same family (the cross-robot re-validation)."""
    path = CONFIG_DIR / "robot" / f"{robot}.yaml"
    if not path.exists():
        raise ConfigError(
            f"robots: unknown robot {robot!r}; choose from {sorted(p.stem for p in path.parent.glob('*.yaml'))}"
        )
    node = OmegaConf.load(path).robot
    if node.family != cfg.robot.family:
        raise ConfigError(
            f"robots: {robot} is a {node.family} robot; the policy was trained on a {cfg.robot.family} robot"
        )
    out = OmegaConf.create(OmegaConf.to_container(cfg, resolve=True))
    out.robot = node
    return out


def family_robots(family: str) -> list[str]:
    """The robots (``configs/robot/``) of a family, by name."""
    return sorted(p.stem for p in (CONFIG_DIR / "robot").glob("*.yaml") if OmegaConf.load(p).robot.family == family)


def robot_advice(line: str, trained: DictConfig, typed: dict) -> str:
    """Why ``robot=`` cannot change a run's robot, and what evaluates the policy on the typed one: ``robots=[...]``
    within the run's family; no command across families (the observations and actions differ)."""
    said = f"{line}: the run was trained on {trained.name}"
    if typed["family"] == trained.family:
        return f"{said}; evaluate it on another robot of its family with robots=[{typed['name']}]"
    return (f"{said}, a {trained.family} robot, and {typed['name']} is a {typed['family']} robot: a policy runs only "
            f"on its own family's robots ({', '.join(family_robots(trained.family))})")  # fmt: skip


def env_changes(
    cfg: DictConfig, env_cfg: DictConfig, overrides: list[str], has_run: bool
) -> tuple[DictConfig, list[str]]:
    """The env config to evaluate (``env_cfg``, the run's, with the typed env settings applied; ``cfg`` is
    Hydra's composition of them) and the overrides that changed something, as typed. One that is no
    evaluation setting is refused (:class:`ConfigError` naming it)."""
    env_cfg = OmegaConf.create(OmegaConf.to_container(env_cfg, resolve=True))
    changed: list[str] = []
    parsed = parse_overrides(overrides)
    env_keys = [o for o in parsed if not (o.root in RUNS_ON or o.key in RUNS_ON or o.root in OWN)]
    check_overrides_read("evaluate", env_cfg, env_keys, open_roots=())  # another family's key, a +typo: refused
    for o in parsed:
        if o.hydra or o.root in RUNS_ON or o.key in RUNS_ON or (o.root in OWN and o.root != "env_overrides"):
            continue
        if o.delete:
            raise ConfigError(f"{o.line}: an evaluation cannot delete a config key")
        if o.root == "env_overrides":
            changed.append(o.line)
            continue
        new = value_of(cfg, o.key)
        if o.group:
            same = selections(OmegaConf.to_container(env_cfg), (o.key,)) == selections({o.key: new}, (o.key,))
        else:
            same = OmegaConf.select(env_cfg, o.key, default=object()) == new
        if not has_run:  # Hydra composed the env as typed: nothing to apply
            if o.root in ENV_GROUPS and not o.key.startswith("task.train"):
                changed.append(o.line)
                continue
            if o.root == "robot":
                continue  # the robot evaluated, named in the file name already
        elif same:
            continue  # the run's own value (also each group option scripts/evaluate.py selects for the run)
        elif o.root in ENV_GROUPS and not o.key.startswith("task.train"):
            set_value(env_cfg, o.key, new)
            changed.append(o.line)
            continue
        elif o.root == "robot":
            raise ConfigError(robot_advice(o.line, env_cfg.robot, value_of(cfg, "robot")))
        raise ConfigError(
            f"{o.line}: not an evaluation setting (the policy and its training are the run's); evaluate.py takes "
            f"{', '.join(f'{k}=' for k in OWN)}, backend=, train.device= and env settings "
            f"({', '.join(f'{g}.*' for g in ENV_GROUPS)}, a group option such as drive=pd)"
        )
    return env_cfg, changed


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", text).strip("-.") or "x"


def overrides_tag(lines: list[str]) -> str:
    """``drive-pd+task.hand_pose.goal_mode-random``: the overrides, filesystem-safe; a long list as its start and
    a hash of all of it."""
    text = "+".join(_safe(line.lstrip("+")) for line in lines)
    if len(text) < NAME_MAX:
        return text
    digest = hashlib.sha1("\n".join(lines).encode()).hexdigest()[:10]
    return f"{text[: NAME_MAX - 20].rstrip('-.+')}-{digest}"


def eval_name(policy: str, checkpoint: str | None, robots: list[str], seed: int, episodes: int,
              backend: str = "mujoco", overrides: list[str] = (), benchmark: str | None = None) -> str:  # fmt: skip
    """``trained_final_solenopsis+m20_legacy_seed20000_ep10``: what was evaluated, filesystem-safe (another
    backend than MuJoCo is named after the robots: ``..._solenopsis_isaaclab_seed...``; the overrides that
    changed the env at the end: ``..._ep10_drive-pd``). A benchmark comes first and counts trials:
    ``steps_trained_final_solenopsis_seed20000_tr20``."""
    count = f"tr{episodes}" if benchmark else f"ep{episodes}"
    parts = [*([benchmark] if benchmark else []), policy, *([checkpoint] if checkpoint else []), "+".join(robots),
             *([backend] if backend != "mujoco" else []), f"seed{seed}", count]  # fmt: skip
    name = "_".join(_safe(p) for p in parts)
    return f"{name}_{overrides_tag(list(overrides))}" if overrides else name


#: A step benchmark's plot: ``<the JSON's name>.png``
PLOT_SUFFIX = ".png"


def video_suffix(robot: str) -> str:
    return f"_{robot}.mp4"


def companion(json_path: Path, suffix: str) -> Path:
    """A file that goes with the JSON: its video (:func:`video_suffix`) or plot (:data:`PLOT_SUFFIX`)."""
    return json_path.with_name(f"{json_path.stem}{suffix}")


def _taken(path: Path, suffixes: list[str]) -> bool:
    return any(p.exists() for p in [path, *(companion(path, s) for s in suffixes)])


def _candidates(path: Path):
    """``path``, then ``<stem>_2.json``, ``_3``, ..."""
    yield path
    n = 2
    while True:
        yield path.with_name(f"{path.stem}_{n}{path.suffix}")
        n += 1


def output_path(cfg: DictConfig, out_dir: Path, name: str, suffixes: list[str]) -> Path:
    """Where this evaluation's JSON is meant to go (:func:`save` claims the name when it is written); ``suffixes``:
    its companion files'."""
    if cfg.out:
        path = Path(cfg.out)
        if _taken(path, suffixes) and not cfg.overwrite:
            taken = next(p for p in [path, *(companion(path, s) for s in suffixes)] if p.exists())
            raise ConfigError(f"out: {taken} already exists; choose another path or pass overwrite=true")
        return path
    return out_dir / f"{name}.json"


def save(path: Path, text: str, companions: dict[str, Path], fixed: bool, overwrite: bool) -> Path:
    """Write the JSON (and move its companion files, written under temporary names and keyed by their suffix
    (:func:`companion`), next to it) without ever replacing an existing file unless ``overwrite``: the first
    free name from ``path`` on, created exclusively, so two evaluations finishing at once keep both results.
    ``fixed`` (``out=``): that name or an error."""
    if overwrite:
        for suffix, tmp in companions.items():
            os.replace(tmp, companion(path, suffix))
        write_atomic(path, text)
        return path
    for candidate in [path] if fixed else _candidates(path):
        if not fixed and _taken(candidate, list(companions)):
            continue
        try:
            write_new(candidate, text)
        except FileExistsError:
            if fixed:
                raise ConfigError(
                    f"out: {candidate} already exists; choose another path or pass overwrite=true"
                ) from None
            continue
        for suffix, tmp in companions.items():  # this evaluation owns the name: its companions take it too
            move_new(tmp, companion(candidate, suffix))
        return candidate
    raise AssertionError("unreachable")


def _check(cfg: DictConfig) -> None:
    if cfg.policy not in POLICIES:
        raise ConfigError(f"policy: {cfg.policy!r} is not one of {list(POLICIES)}")
    for key in ("episodes", "video_episodes"):
        if not isinstance(cfg[key], int) or isinstance(cfg[key], bool) or cfg[key] < 1:
            raise ConfigError(f"{key}: must be an integer >= 1, got {cfg[key]!r}")
    for key in ("video", "overwrite"):
        if not isinstance(cfg[key], bool):
            raise ConfigError(f"{key}: must be true or false, got {cfg[key]!r}")
    if cfg.policy == "climbing" and cfg.backend.name != "mujoco":
        raise ConfigError(f"policy=climbing: the climbing gait reads MuJoCo's terrain under each wheel; it runs on "
                          f"backend=mujoco, not backend={cfg.backend.name}")  # fmt: skip
    if cfg.policy == "teacher" and cfg.backend.name != "mujoco":
        raise ConfigError(f"policy=teacher: the finger gait reads the MuJoCo task's joint command and episode time; "
                          f"it runs on backend=mujoco, not backend={cfg.backend.name}")  # fmt: skip
    if cfg.get("benchmark") is not None and cfg.benchmark not in BENCHMARKS:
        raise ConfigError(f"benchmark: {cfg.benchmark!r} is not one of {list(BENCHMARKS)} (or null: episodes)")


def unused(cfg: DictConfig) -> dict[str, str]:
    """The keys of evaluate.py (and ``backend.*``, ``train.device``) this evaluation does not read, each with what
    it needs: typed, they are refused (:func:`check_typed`), never dropped."""
    kind = cfg.get("benchmark")
    bench = kind is not None
    protocol = PROTOCOLS[kind].section if bench else None
    out = {"backend": f"the backend has no settings; choose it with backend=<{'|'.join(BACKENDS)}>"}
    if cfg.policy != "trained":
        out["checkpoint"] = f"a trained policy's checkpoint; needs policy=trained, not policy={cfg.policy}"
    if cfg.policy != "onnx":
        out["onnx"] = f"an exported policy; needs policy=onnx, not policy={cfg.policy}"
    if bench:
        out["episodes"] = f"benchmark={kind} runs trials, not episodes; set {protocol}.trials="
        out["video_episodes"] = f"benchmark={kind} records {PROTOCOLS[kind].video}; drop it"
    elif not cfg.video:
        out["video_episodes"] = "needs video=true"
    for section in {p.section for p in PROTOCOLS.values()} - {protocol}:
        users = " or ".join(f"benchmark={p.name}" for p in PROTOCOLS.values() if p.section == section)
        out[section] = f"the {'step' if section == 'steps' else 'in-hand'} benchmark's protocol; needs {users}"
    if cfg.backend.name != "isaaclab":
        out["train.device"] = "a MuJoCo evaluation runs on the CPU; needs backend=isaaclab"
    return out


def check_typed(cfg: DictConfig, overrides: list[str]) -> None:
    """Refuse a typed key this evaluation would not use (:func:`unused`), naming it and what it needs; only typed
    keys: the config's own defaults are never refused."""
    reasons = unused(cfg)
    for o in parse_overrides(overrides):
        key = next((k for k in reasons if o.key.startswith(f"{k}.") or o.key == k), None)
        if key is not None and not o.group:  # backend=isaaclab selects the backend: used
            raise ConfigError(f"{o.line}: {reasons[key]}")


def step_benchmark_cfg(cfg: DictConfig):
    """``steps.*`` as the protocol's config (:mod:`dexwheel.protocols.steps`), checked; trial ``k`` resets with
    ``eval_seed + k``. A bad value is refused in one line naming its key."""
    from dexwheel.fields import ConfigFieldError
    from dexwheel.protocols.steps import make_cfg

    changes = OmegaConf.to_container(cfg.steps, resolve=True) if cfg.get("steps") is not None else {}
    try:
        return make_cfg({**changes, "reset_seed": cfg.eval_seed})
    except (ConfigFieldError, TypeError) as e:
        raise ConfigError(" ".join(str(e).split())) from None


def check_protocol(kind: str, env_cfg: DictConfig) -> None:
    """Refuse a protocol that does not score the policy's task (each task's record names its protocol)."""
    scores = [name for name, record in tasks().items() if record.protocol == kind]
    if env_cfg.task.name not in scores:
        raise ConfigError(f"benchmark={kind}: it scores task={'|'.join(scores)} policies, not "
                          f"task={env_cfg.task.name}")  # fmt: skip


def in_hand_benchmark_cfg(cfg: DictConfig, env_cfg: DictConfig):
    """``in_hand.*`` as the in-hand benchmark's protocol (:mod:`dexwheel.protocols.in_hand`), checked against the
    policy's task and hand; trial ``k`` resets with ``eval_seed + k``. A bad value is refused in one line naming its
    key."""
    from dexwheel.fields import ConfigFieldError
    from dexwheel.protocols.in_hand import make_cfg
    from dexwheel.tasks.in_hand.objects import ObjectSpec

    changes = OmegaConf.to_container(cfg.in_hand, resolve=True) if cfg.get("in_hand") is not None else {}
    kwargs = env_kwargs(env_cfg)
    hand = kwargs.get("hand", "left")
    try:
        obj = kwargs.get("object")
        obj = OmegaConf.to_container(obj, resolve=True) if isinstance(obj, DictConfig) else obj
        training = ObjectSpec(**obj) if isinstance(obj, dict) else None
        return make_cfg({**changes, "reset_seed": cfg.eval_seed, "hand": hand}, training=training)
    except (ConfigFieldError, TypeError) as e:
        raise ConfigError(" ".join(str(e).split())) from None


def _exported(cfg: DictConfig):
    """``policy=onnx``: the exported policy ``onnx=`` names (onnxruntime loads only for it)."""
    from dexwheel.rl.export import ExportedPolicy

    return ExportedPolicy.load(cfg.get("onnx"))


def evaluate(cfg: DictConfig, overrides: list[str] = ()) -> dict[str, dict[str, float]]:
    """Evaluate as ``cfg`` says; ``overrides`` are the ones the user typed (scripts/evaluate.py passes Hydra's
    list): with a run, its config is used with exactly those applied (:func:`env_changes`)."""
    _check(cfg)
    as_paths(cfg, ("run", "checkpoint", "onnx", "out"))
    check_typed(cfg, list(overrides))  # before any work: a typed key is used or refused
    check_device(cfg.train.device)
    exported = _exported(cfg) if cfg.policy == "onnx" else None
    run = Path(cfg.run) if cfg.run else (exported.run if exported is not None else None)
    if cfg.policy == "trained" and run is None:
        raise ConfigError("run: a trained policy needs run=<training run folder> (or policy=random|zero)")
    run_cfg = run_config(run) if run is not None else cfg
    env_cfg, changed = env_changes(cfg, run_cfg, list(overrides), run is not None)
    robots = list(cfg.robots) or [env_cfg.robot.name]
    checkpoint = resolve_checkpoint(run, cfg.checkpoint, env_cfg.algo.name) if cfg.policy == "trained" else None
    if checkpoint is not None:
        check_checkpoint(checkpoint)  # before any work, on either backend (the Isaac Lab one starts in about 20 s)
    tag = checkpoint.stem if checkpoint else (exported.name if exported is not None else None)
    backend = cfg.backend.name
    if backend == "isaaclab" and cfg.video:
        raise ConfigError("video: videos are rendered on the MuJoCo backend; drop video=true or backend=isaaclab")
    if cfg.video:
        check_offscreen("video=true")  # before any episode runs: RenderingError saying what to set
    kind = cfg.get("benchmark")
    if kind is not None:
        check_protocol(kind, env_cfg)
    bench = step_benchmark_cfg(cfg) if kind == "steps" else None
    hand_bench = in_hand_benchmark_cfg(cfg, env_cfg) if kind and PROTOCOLS[kind].section == "in_hand" else None
    trials = bench.trials if bench else (hand_bench.trials if hand_bench else cfg.episodes)
    protocol = "steps" if bench is not None else "in_hand" if hand_bench is not None else None
    typed = [o.line for o in parse_overrides(list(overrides)) if protocol and o.key.startswith(f"{protocol}.")
             and o.key != f"{protocol}.trials"]  # a protocol changed from its defaults names its file too  # fmt: skip
    name = eval_name(cfg.policy, tag, robots, cfg.eval_seed, trials, backend, [*changed, *typed], cfg.get("benchmark"))
    plotted = bench is not None or hand_bench is not None
    suffixes = [*(video_suffix(r) for r in robots if cfg.video), *([PLOT_SUFFIX] if plotted else [])]
    out = output_path(cfg, (run / "eval") if run is not None else Path("outputs/eval"), name, suffixes)
    env_overrides = OmegaConf.to_container(cfg.env_overrides, resolve=True) if cfg.env_overrides else {}
    if bench is not None:
        _check_fixed(bench, env_overrides)
    clash = sorted({"object", "grasps", "episode_length_s"} & set(env_overrides)) if hand_bench is not None else []
    if clash:
        raise ConfigError(f"env_overrides: {clash} are fixed by the in-hand benchmark's protocol")
    configs = {r: env_cfg if r == env_cfg.robot.name else with_robot(env_cfg, r) for r in robots}  # all checked first
    for rcfg in configs.values():
        env_kwargs(rcfg)  # a group option of the other family, named before any episode runs
        if backend == "isaaclab":
            check_isaaclab_env(rcfg, **env_overrides)  # what Isaac Lab cannot run, named by its config key
    results: dict[str, dict[str, float]] = {}
    files: dict[str, Path] = {}  # companion files by suffix, under temporary names until the JSON's name is claimed
    try:
        for robot, rcfg in configs.items():
            if backend == "isaaclab":
                results[robot] = _on_isaaclab(cfg, rcfg, checkpoint, exported, env_overrides, bench, hand_bench)
                continue
            render = {"render_mode": "rgb_array"} if cfg.video else {}
            video = _temporary(out, video_suffix(robot)) if cfg.video else None
            if video is not None:
                files[video_suffix(robot)] = video
            if bench is not None:
                results[robot] = _step_benchmark(cfg, bench, rcfg, run, run_cfg, checkpoint, exported, robot,
                                                 {**render, **env_overrides}, video)  # fmt: skip
                continue
            if hand_bench is not None:
                results[robot] = _in_hand_benchmark(cfg, hand_bench, rcfg, run, run_cfg, checkpoint, exported, robot,
                                                    {**render, **env_overrides}, video)  # fmt: skip
                continue
            env = make_env(rcfg, **render, **env_overrides)
            if checkpoint is not None:
                policy = load_policy(run, str(checkpoint), run_cfg)
            elif exported is not None:
                policy = exported.policy(env, robot)  # refuses an env whose observation size differs
            else:
                policy = baseline_policy(cfg.policy, env, cfg.eval_seed)
            try:
                result = run_episodes(env, policy, rcfg.task.name, cfg.episodes, cfg.eval_seed,
                                      video_path=video, progress=True,
                                      video_episodes=cfg.video_episodes)  # fmt: skip
            finally:
                env.close()
            results[robot] = result.summary()
        record = {
            "policy": cfg.policy,
            "run": str(run) if run else None,
            "checkpoint": str(checkpoint) if checkpoint else (exported.metadata["checkpoint"] if exported else None),
            **({"onnx": str(exported.path)} if exported is not None else {}),
            "robots": robots,
            "backend": backend,
            "eval_seed": cfg.eval_seed,
            **(
                {"benchmark": cfg.benchmark, "protocol": _protocol(bench or hand_bench)}
                if plotted
                else {"episodes": cfg.episodes}
            ),
            "overrides": changed,
            "env_overrides": env_overrides,
            "results": results,
        }
        if bench is not None:
            from dexwheel.rl.curves import plot_step_benchmark

            files[PLOT_SUFFIX] = plot_step_benchmark(_temporary(out, PLOT_SUFFIX),
                                                     {r: res["rows"] for r, res in results.items()}, name)  # fmt: skip
        elif hand_bench is not None:
            from dexwheel.rl.curves import plot_in_hand_benchmark

            files[PLOT_SUFFIX] = plot_in_hand_benchmark(_temporary(out, PLOT_SUFFIX),
                                                        {r: res["rows"] for r, res in results.items()}, name)  # fmt: skip
        out = save(out, json.dumps(record, indent=1), files, fixed=bool(cfg.out), overwrite=cfg.overwrite)
    finally:
        for tmp in files.values():
            tmp.unlink(missing_ok=True)
    if bench is not None:
        from dexwheel.protocols.steps import format_table as steps_table

        for robot, result in results.items():
            print(steps_table(result["rows"], f"step benchmark: {robot}"))
    elif hand_bench is not None:
        from dexwheel.protocols.in_hand import format_table as in_hand_table

        for robot, result in results.items():
            print(in_hand_table(result["rows"], f"{cfg.benchmark} benchmark: {robot}"))
    else:
        print(format_table(results))
    for robot in robots if cfg.video else []:
        what = (PROTOCOLS[cfg.benchmark].video if bench or hand_bench
                else f"{min(cfg.video_episodes, cfg.episodes)} episode(s)")  # fmt: skip
        print(f"video: {shown_path(companion(out, video_suffix(robot)))} ({what})")
    if plotted:
        print(f"plot: {shown_path(companion(out, PLOT_SUFFIX))}")
    print(f"metrics: {shown_path(out)}")
    return results


def _temporary(out: Path, suffix: str) -> Path:
    """Where a companion file of ``out`` is written until :func:`save` gives it its name."""
    return out.with_name(f".{out.stem}{suffix}.{os.getpid()}.tmp{Path(suffix).suffix}")


def _protocol(bench: Any) -> dict[str, Any]:
    import dataclasses

    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(bench).items()}


def _protocol_changes(bench: Any) -> dict[str, Any]:
    """The in-hand protocol as ``make_cfg`` takes it (its fields less the specs it derives)."""
    return {k: v for k, v in _protocol(bench).items() if k != "specs"}


def _step_benchmark(cfg: DictConfig, bench: Any, rcfg: DictConfig, run: Path | None, run_cfg: DictConfig,
                    checkpoint: Path | None, exported: Any, robot: str, env_kwargs_: dict[str, Any],
                    video: Path | None) -> dict[str, Any]:  # fmt: skip
    """The step benchmark on ``rcfg``'s env (:mod:`dexwheel.rl.step_benchmark`) with the policy evaluated."""
    from dexwheel.rl.step_benchmark import benchmark_env_kwargs, run_step_benchmark

    fixed = benchmark_env_kwargs(bench)
    trained = load_policy(run, str(checkpoint), run_cfg) if checkpoint is not None else None

    def policy_for(env):
        if trained is not None:
            return trained
        if exported is not None:
            return exported.policy(env, robot)
        return baseline_policy(cfg.policy, env, cfg.eval_seed)

    return run_step_benchmark(lambda desc: make_env(rcfg, terrain=desc, **fixed, **env_kwargs_), policy_for, bench,
                              video_path=video, progress=True)  # fmt: skip


def _in_hand_benchmark(cfg: DictConfig, bench: Any, rcfg: DictConfig, run: Path | None, run_cfg: DictConfig,
                       checkpoint: Path | None, exported: Any, robot: str, env_kwargs_: dict[str, Any],
                       video: Path | None) -> dict[str, Any]:  # fmt: skip
    """The in-hand benchmark (:mod:`dexwheel.protocols.in_hand`) on ``rcfg``'s env with each object."""
    from dexwheel.protocols import in_hand

    trained = load_policy(run, str(checkpoint), run_cfg) if checkpoint is not None else None

    def run_trials(spec, video_path):

        fixed = in_hand.trial_env_kwargs(spec, bench.seconds, env_kwargs(rcfg, env_kwargs_))
        env = make_env(rcfg, **{**env_kwargs_, **fixed})
        try:
            if trained is not None:
                policy = trained
            elif exported is not None:
                policy = exported.policy(env, robot)
            else:
                policy = baseline_policy(cfg.policy, env, cfg.eval_seed)
            print(f"{cfg.benchmark} benchmark: {in_hand.label(spec)}: {bench.trials} trials", flush=True)
            done = run_episodes(env, policy, rcfg.task.name, bench.trials, bench.reset_seed, video_path=video_path,
                                progress=True)  # fmt: skip
        finally:
            env.close()
        return done.episodes

    return in_hand.run(bench, run_trials, video)


def _check_fixed(bench: Any, env_overrides: dict[str, Any]) -> None:
    """Refuse an ``env_overrides`` key the step benchmark's protocol sets (either backend, before anything runs)."""
    from dexwheel.rl.step_benchmark import benchmark_env_kwargs

    clash = sorted(set(benchmark_env_kwargs(bench)) & set(env_overrides))
    if clash:
        raise ConfigError(f"env_overrides: {clash} are fixed by the step benchmark's protocol")


def _on_isaaclab(cfg: DictConfig, rcfg: DictConfig, checkpoint: Path | None, exported: Any,
                 overrides: dict[str, Any], bench: Any = None, hand_bench: Any = None) -> dict[str, Any]:  # fmt: skip
    """``cfg.episodes`` episodes of ``rcfg``'s Isaac Lab task, or with ``bench`` the step benchmark
    (:mod:`dexwheel.isaaclab.step_benchmark`), with ``hand_bench`` the in-hand benchmark
    (:func:`dexwheel.isaaclab.evaluate.in_hand_benchmark`), in the Isaac Lab venv (sim-to-sim)."""
    from dexwheel.rl.isaaclab_launch import evaluate_on_isaaclab

    if checkpoint is not None and checkpoint.suffix != ".pt":
        raise ConfigError(
            f"backend=isaaclab: {checkpoint} is a stable-baselines3 checkpoint; export it (scripts/export.py "
            f"run=...) and evaluate the export: policy=onnx onnx=<run>/export/policy.onnx backend=isaaclab"
        )
    return evaluate_on_isaaclab(
        rcfg, cfg.policy, cfg.episodes, cfg.eval_seed, device=cfg.train.device, checkpoint=checkpoint,
        onnx=exported.path if exported is not None else None,
        metadata=exported.metadata if exported is not None else None, overrides=overrides,
        steps=_protocol(bench) if bench is not None else None,
        in_hand=_protocol_changes(hand_bench) if hand_bench is not None else None,
    )  # fmt: skip
