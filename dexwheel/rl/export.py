"""Export a trained policy as ONNX with a small JSON of what it expects and means; play an exported one.

``export_policy(run)`` writes ``<run>/export/policy.onnx`` and ``<run>/export/policy.json``. The graph takes
the env's raw float32 observations, ``obs`` of shape ``(batch, obs_size)``, and returns ``actions``
``(batch, action_size)``: the policy's deterministic action *before* clipping to the action space (the
Gaussian's mean; SAC: its tanh-squashed mean rescaled to the bounds). The consumer clips to the metadata's
``action.clip`` bounds, as rsl_rl's and SB3's own inference does (and rounds for ``action.integer``, the G20
``sdk255`` mapping). The observation normaliser is inside the graph:

* ``rsl_ppo``: rsl_rl's own ONNX module (``MLPModel.as_onnx``: ``(obs - mean) / (std + eps)``, the MLP);
* ``ppo`` / ``sac`` (stable-baselines3): the run's ``VecNormalize`` statistics as constants,
  ``clip((obs - mean) / sqrt(var + eps), -clip_obs, clip_obs)`` computed in float64 as SB3 does, then the
  policy's actor (PPO: ``action_net(mlp_extractor.forward_actor(features))``).

The metadata says which run, checkpoint and env it came from, the observation layout (term names and index
ranges, read from the env), the action joints in order, the action mapping and its bounds, the control rate,
the graph's input/output names and opset, the ONNX file's sha256 (a player refuses a ``policy.onnx`` of
another export), and the torch/onnx versions.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from omegaconf import DictConfig
from torch import nn

from dexwheel.atomic import write_atomic
from dexwheel.rl.checkpoints import check_checkpoint, load_rsl, load_vecnormalize, resolve_checkpoint
from dexwheel.rl.env_factory import make_env
from dexwheel.rl.evaluation import Policy
from dexwheel.rl.run_config import env_id, run_config
from dexwheel.rl.schema import RSL_ALGOS, ConfigError
from dexwheel.tasks.spaces import IntegerBox

OPSET = 18  # rsl_rl's export_policy_to_onnx
INPUT_NAME, OUTPUT_NAME = "obs", "actions"
EXPORT_DIR = "export"
ONNX_FILE = "policy.onnx"
FORMAT = "dexwheel-onnx-policy"
FORMAT_VERSION = 2  # 2: onnx.sha256, the ONNX file's digest (version 1 exports have none: played with a warning)
#: the metadata a player reads, by dotted key, and its JSON type
REQUIRED = {"run": str, "checkpoint": str, "observation.size": int, "action.clip": list, "onnx.input": str,
            "onnx.output": str}  # fmt: skip
#: exported and torch actions on the export's check observations must agree to this (float32 rounding)
CHECK_ATOL = 1e-4


# -- graphs ----------------------------------------------------------------------------------------------
class VecNormalizeObs(nn.Module):
    """SB3 ``VecNormalize.normalize_obs`` as constants: float64 like SB3's numpy code, float32 out."""

    def __init__(self, mean: np.ndarray, var: np.ndarray, epsilon: float, clip_obs: float):
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(np.asarray(mean, dtype=np.float64)))
        self.register_buffer("std", torch.as_tensor(np.sqrt(np.asarray(var, dtype=np.float64) + epsilon)))
        self.clip_obs = float(clip_obs)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = (obs.double() - self.mean) / self.std
        return x.clamp(-self.clip_obs, self.clip_obs).float()


class Sb3PpoActor(nn.Module):
    """An SB3 ``ActorCriticPolicy``'s deterministic action (the Gaussian's mean), unclipped."""

    def __init__(self, policy: Any, normalizer: nn.Module):
        super().__init__()
        self.normalizer = normalizer
        self.features = copy.deepcopy(policy.pi_features_extractor)
        self.mlp_extractor = copy.deepcopy(policy.mlp_extractor)
        self.action_net = copy.deepcopy(policy.action_net)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        features = self.features(self.normalizer(obs).float())
        return self.action_net(self.mlp_extractor.forward_actor(features))


class Sb3SacActor(nn.Module):
    """An SB3 SAC actor's deterministic action: ``tanh(mu)`` rescaled from [-1, 1] to the bounds (as
    ``policy.predict`` does with ``unscale_action``)."""

    def __init__(self, policy: Any, normalizer: nn.Module, low: np.ndarray, high: np.ndarray):
        super().__init__()
        actor = policy.actor
        self.normalizer = normalizer
        self.features = copy.deepcopy(actor.features_extractor)
        self.latent_pi = copy.deepcopy(actor.latent_pi)
        self.mu = copy.deepcopy(actor.mu)
        self.register_buffer("low", torch.as_tensor(np.asarray(low, dtype=np.float32)))
        self.register_buffer("high", torch.as_tensor(np.asarray(high, dtype=np.float32)))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        squashed = torch.tanh(self.mu(self.latent_pi(self.features(self.normalizer(obs).float()))))
        return self.low + (0.5 * (squashed + 1.0) * (self.high - self.low))


@dataclass
class Source:
    """What gets exported: the torch module (raw float32 obs -> raw action) and what the metadata says of it;
    the module reads the ``obs_size`` leading columns of the env's observation (all but privileged ones)."""

    module: nn.Module
    obs_size: int
    num_timesteps: int | None
    normalizer: str
    library: str


def _sb3_source(algo: str, checkpoint: Path, env: gym.Env, normalize_obs: bool) -> Source:
    from dexwheel.rl.sb3 import ALGORITHMS  # stable-baselines3 loads for SB3 runs only

    if algo not in ALGORITHMS:
        raise ConfigError(f"algo: {algo!r} is not a learner dexwheel knows; choose from {[*ALGORITHMS, *RSL_ALGOS]}")
    model = ALGORITHMS[algo].load(checkpoint, device="cpu")
    if not isinstance(model.observation_space, gym.spaces.Box) or not isinstance(model.action_space, gym.spaces.Box):
        raise ConfigError(f"checkpoint {checkpoint}: only Box observation and action spaces can be exported")
    if model.observation_space.shape != env.observation_space.shape:
        raise ConfigError(
            f"checkpoint {checkpoint}: the model takes observations of shape {model.observation_space.shape}, "
            f"the run's env gives {env.observation_space.shape}"
        )
    stats = load_vecnormalize(checkpoint, normalize_obs)
    if stats is not None:
        rms = stats.obs_rms
        normalizer: nn.Module = VecNormalizeObs(rms.mean, rms.var, stats.epsilon, stats.clip_obs)
        what = "VecNormalize (obs - mean) / sqrt(var + eps) clipped to +-clip_obs, inside the graph"
    else:
        normalizer, what = nn.Identity(), "none"
    policy = model.policy
    if algo == "ppo":
        if policy.squash_output:
            raise ConfigError(f"checkpoint {checkpoint}: a PPO policy with squash_output=True cannot be exported")
        module: nn.Module = Sb3PpoActor(policy, normalizer)
    elif algo == "sac":
        module = Sb3SacActor(policy, normalizer, model.action_space.low, model.action_space.high)
    else:
        raise ConfigError(f"algo: {algo!r} runs cannot be exported yet; ppo, sac and {', '.join(RSL_ALGOS)} can")
    size = int(np.prod(env.observation_space.shape))
    return Source(
        module.eval(), size, int(model.num_timesteps), what, f"stable-baselines3 {_version('stable_baselines3')}"
    )


def _rsl_source(checkpoint: Path, run_cfg: DictConfig, env: gym.Env) -> Source:
    from dexwheel.rl.rsl import load_actor  # rsl_rl and tensordict load only for rsl runs

    actor = load_actor(checkpoint, run_cfg, env.action_space)  # its input: the policy columns (checkpoint's size)
    steps = (load_rsl(checkpoint).get("infos") or {}).get("num_timesteps")
    what = "rsl_rl EmpiricalNormalization (obs - mean) / (std + eps), inside the graph"
    return Source(
        actor.as_onnx(verbose=False).eval(),
        int(actor.obs_dim),
        None if steps is None else int(steps),
        what if actor.obs_normalization else "none",
        f"rsl-rl-lib {_version('rsl-rl-lib')}",
    )


def _version(dist: str) -> str | None:
    try:
        return importlib_metadata.version(dist)
    except importlib_metadata.PackageNotFoundError:
        return None


@contextlib.contextmanager
def _quiet_exporter() -> Iterator[None]:
    """torch.onnx's exporter without its noise: deprecation warnings, the torchvision-ops notes, the graph
    optimiser's INFO lines (onnxscript, onnx_ir)."""
    names = ("torch.onnx._internal.exporter._registration", "onnxscript", "onnx_ir")
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def onnx_bytes(module: nn.Module, obs_size: int) -> bytes:
    """The serialised ONNX model (opset 18, one file, weights inside) with a dynamic batch axis."""
    import onnx  # noqa: F401  (the exporter needs it; a missing install fails here with its name)

    example = (torch.zeros(2, obs_size),)
    with _quiet_exporter(), torch.no_grad():
        program = torch.onnx.export(
            module,
            example,
            dynamo=True,
            opset_version=OPSET,
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            dynamic_shapes=({0: torch.export.Dim("batch")},),
            verbose=False,
            optimize=True,
        )
    return program.model_proto.SerializeToString()


# -- metadata --------------------------------------------------------------------------------------------
def observation_layout(env: gym.Env, size: int) -> list[dict[str, Any]]:
    """The terms of the observation's ``size`` leading columns in order, ``{"name", "start", "stop"}``, from the
    env's ``obs_slices``."""
    slices = getattr(env.unwrapped, "obs_slices", None)
    if not slices:
        return [{"name": "obs", "start": 0, "stop": size}]
    terms = sorted(((s.start, s.stop, name) for name, s in slices.items() if s.start < size), key=lambda t: t[0])
    out, at = [], 0
    for start, stop, name in terms:
        if start != at:
            raise ValueError(f"observation layout: {name} starts at {start}, expected {at} (terms {list(slices)})")
        out.append({"name": name, "start": int(start), "stop": int(stop)})
        at = stop
    if at != size:
        raise ValueError(f"observation layout: the terms cover {at} of {size} entries ({list(slices)})")
    return out


def action_description(env: gym.Env, run_cfg: DictConfig) -> dict[str, Any]:
    """The action's joints (or SDK channels) in order, its mapping and bounds, from the env."""
    u = env.unwrapped
    space = env.action_space
    size = int(np.prod(space.shape))
    low, high = [float(v) for v in space.low], [float(v) for v in space.high]
    out: dict[str, Any] = {"size": size, "mapping": str(run_cfg.action.name)}
    if hasattr(u, "policy_joints"):  # wheel-leg: the policy layer's joints, knees then wheels
        from dexwheel.robots.wheel_leg import KNEE_JOINTS

        a = u.cfg.actions
        stance = dict(zip(KNEE_JOINTS, u.cfg.stance_pose, strict=True))
        joints = list(u.policy_joints)
        out["joints"] = joints
        out["meaning"] = (
            "knee position target = stance + knee_scale * a (rad); wheel velocity target = "
            "wheel_velocity_scale * a (rad/s)"
        )
        out["scaling"] = {
            "knee_scale": float(a.knee_scale),
            "wheel_velocity_scale": float(a.wheel_velocity_scale),
            "stance": {j: float(stance[j]) for j in joints if j in stance},
        }
    else:  # G20: the 16 active joints, or the SDK's 20 channels
        from dexwheel.robots.g20 import ACTIVE_JOINTS, SDK_CHANNEL_JOINTS

        amap = u.task.actions
        kind = amap.kind
        if kind == "sdk255":
            out["joints"] = [j or f"reserved_{i}" for i, j in enumerate(SDK_CHANNEL_JOINTS)]
            out["meaning"] = "SDK channel values 0..255 in the SDK's channel order (integers: round)"
        else:
            out["joints"] = list(ACTIVE_JOINTS)
            out["meaning"] = {
                "normalized": "joint target = lower + (a + 1) / 2 * (upper - lower) (rad)",
                "nominal": "joint position target (rad)",
                "delta": "joint target += delta_scale * a (rad per control step)",
            }[kind]
            out["joint_range"] = {"lower": [float(v) for v in amap.lower], "upper": [float(v) for v in amap.upper]}
            if kind == "delta":
                out["scaling"] = {"delta_scale": float(amap.delta_scale[0])}
    if len(out["joints"]) != size:
        raise ValueError(f"action: {len(out['joints'])} joint names for an action of size {size}")
    out["low"], out["high"] = low, high
    out["clip"] = [low, high]
    out["integer"] = isinstance(space, IntegerBox)  # the env takes whole numbers: round after clipping
    return out


def _relative(path: Path, start: Path) -> str:
    """``path`` relative to ``start`` (``..`` as needed), POSIX separators: valid wherever both move together."""
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def build_metadata(run_dir: Path, run_cfg: DictConfig, algo: str, checkpoint: Path, env: gym.Env,
                   source: Source, onnx_path: Path) -> dict[str, Any]:  # fmt: skip
    """The export's metadata. ``run`` is the run folder relative to the metadata file's folder (an export and
    its run moved together still find each other), ``run_absolute`` where it was at export time (found when
    the export alone moves); ``checkpoint`` is relative to the run folder."""
    env_size, obs_size = int(np.prod(env.observation_space.shape)), source.obs_size
    reads = "all of it" if obs_size == env_size else f"its {obs_size} leading columns (the rest are privileged)"
    import onnx

    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "run": _relative(run_dir, onnx_path.parent),
        "run_absolute": str(Path(run_dir).resolve()),
        "robot": str(run_cfg.robot.name),
        "family": str(run_cfg.robot.family),
        "env_id": env_id(run_cfg),
        "task": str(run_cfg.task.name),
        "algo": algo,
        "checkpoint": _relative(checkpoint, run_dir),
        "num_timesteps": source.num_timesteps,
        "control_hz": round(1.0 / float(env.unwrapped.dt), 9),
        "observation": {
            "size": obs_size,
            "env_size": env_size,
            "reads": f"the env's observation ({env_size} float32 columns): {reads}",
            "dtype": "float32",
            "layout": observation_layout(env, obs_size),
            "normalization": source.normalizer,
        },
        "action": action_description(env, run_cfg),
        "onnx": {
            "file": onnx_path.name,
            "input": INPUT_NAME,
            "input_shape": ["batch", obs_size],
            "output": OUTPUT_NAME,
            "output_is": "the raw deterministic action, before clipping to action.clip (the consumer clips)",
            "opset": OPSET,
        },
        "versions": {
            "torch": torch.__version__,
            "onnx": onnx.__version__,
            "learner": source.library,
            "dexwheel": _version("dexwheel"),
        },
    }


def dumps(obj: Any, level: int = 0) -> str:
    """JSON, indented, each list or object of plain values on one line (bounds, joint names, a layout term)."""
    pad, end = " " * (level + 1), " " * level
    if isinstance(obj, dict) and any(isinstance(v, (dict, list)) for v in obj.values()):
        return "{\n" + ",\n".join(f"{pad}{json.dumps(k)}: {dumps(v, level + 1)}" for k, v in obj.items()) + f"\n{end}}}"
    if isinstance(obj, list) and any(isinstance(v, (dict, list)) for v in obj):
        return "[\n" + ",\n".join(pad + dumps(v, level + 1) for v in obj) + f"\n{end}]"
    return json.dumps(obj)


# -- export ----------------------------------------------------------------------------------------------
def output_paths(run_dir: Path, out: str | Path | None) -> tuple[Path, Path]:
    """``(onnx, json)``: ``out`` names the .onnx file, or a folder for ``policy.onnx``; default ``<run>/export``."""
    if out is None or str(out) == "":
        path = Path(run_dir) / EXPORT_DIR / ONNX_FILE
    else:
        path = Path(out)
        if path.suffix != ".onnx":
            path = path / ONNX_FILE
    return path, path.with_suffix(".json")


def _check_observations(env: gym.Env, n: int = 16, seed: int = 0) -> np.ndarray:
    """A few observations of the env under random actions (the export's self-check inputs)."""
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    rows = [obs]
    for _ in range(n - 1):
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        rows.append(obs)
        if terminated or truncated:
            obs, _ = env.reset()
    return np.asarray(rows, dtype=np.float32)


def session(model: Path | bytes) -> Any:
    """An onnxruntime session (a file or a serialised model) on the CPU, one thread: deterministic, and light
    next to a simulation."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])


def export_policy(run_dir: str | Path, checkpoint: str = "final", out: str | Path | None = None,
                  overwrite: bool = False) -> tuple[Path, Path]:  # fmt: skip
    """Export a run's checkpoint (``final``, ``best``, ``latest`` or a path) as ONNX plus JSON metadata.

    Returns ``(onnx_path, metadata_path)``. Existing files are refused (:class:`ConfigError` naming the path)
    unless ``overwrite``. The graph is checked against the torch policy on a few env observations first; then
    both files are written atomically, the ONNX first, then the metadata holding its sha256 (an interrupted
    overwrite leaves a pair a player refuses, never a silent mix).
    """
    if run_dir is None or str(run_dir) == "":
        raise ConfigError("run: export needs run=<training run folder>")
    run_dir = Path(run_dir)
    run_cfg = run_config(run_dir)
    algo = str(run_cfg.algo.name)
    path = resolve_checkpoint(run_dir, checkpoint, algo)
    check_checkpoint(path)
    onnx_path, meta_path = output_paths(run_dir, out)
    for p in (onnx_path, meta_path):
        if p.exists() and not overwrite:
            raise ConfigError(f"out: {p} already exists; choose another out= or pass overwrite=true")
    env = make_env(run_cfg)
    try:
        source = (
            _rsl_source(path, run_cfg, env)
            if algo in RSL_ALGOS
            else _sb3_source(algo, path, env, bool(run_cfg.train.normalize_obs))
        )
        meta = build_metadata(run_dir, run_cfg, algo, path, env, source, onnx_path)
        check = _check_observations(env)[:, : source.obs_size]
    finally:
        env.close()
    data = onnx_bytes(source.module, source.obs_size)
    got = session(data).run([OUTPUT_NAME], {INPUT_NAME: check})[0]  # checked before anything is written
    with torch.no_grad():
        want = source.module(torch.from_numpy(check)).numpy()
    diff = float(np.max(np.abs(got - want)))
    if not diff <= CHECK_ATOL:  # NaN fails too
        raise RuntimeError(f"export: the ONNX graph differs from the torch policy by {diff} (> {CHECK_ATOL})")
    meta["onnx"]["check_max_abs_diff"] = diff
    meta["onnx"]["sha256"] = hashlib.sha256(data).hexdigest()  # ties the two files: a player checks it
    write_atomic(onnx_path, data)
    write_atomic(meta_path, dumps(meta) + "\n")
    return onnx_path, meta_path


# -- playing an exported policy --------------------------------------------------------------------------
def _value(meta: dict[str, Any], key: str) -> Any:
    """``meta``'s value at a dotted ``key``, ``None`` where it is missing."""
    node: Any = meta
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def read_metadata(path: Path, meta_path: Path, data: bytes) -> dict[str, Any]:
    """``meta_path``'s metadata for the ONNX model ``data`` (read from ``path``), checked: a file that is no
    dexwheel export metadata, lacks a key a player reads, or records another model's sha256 is refused
    (:class:`ConfigError` naming the file). Version 1 exports, written before the digest, play with a warning."""
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:  # ValueError: invalid UTF-8 or JSON
        raise ConfigError(f"onnx: {meta_path} cannot be read as JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ConfigError(f"onnx: {meta_path} is not dexwheel export metadata (format {FORMAT!r})")
    for key, kind in REQUIRED.items():
        if not isinstance(_value(meta, key), kind):
            raise ConfigError(f"onnx: {meta_path} has no {key} ({kind.__name__}); export the run again")
    digest = _value(meta, "onnx.sha256")
    if digest is None and meta.get("format_version", 1) == 1:  # a user's older export stays playable
        warnings.warn(  # stacklevel 1: one location, so shown once although evaluate.py loads an export twice
            f"onnx: {meta_path} is a version 1 export, without the sha256 of {path.name}: the two files cannot "
            "be checked to belong together (export the run again to add it)",
            stacklevel=1,
        )
    elif not isinstance(digest, str):
        raise ConfigError(f"onnx: {meta_path} has no onnx.sha256 (str); export the run again")
    elif digest != hashlib.sha256(data).hexdigest():
        raise ConfigError(
            f"onnx: {path} is not the model {meta_path} describes (its onnx.sha256 differs): the two files come "
            "from different or interrupted exports; export the run again"
        )
    return meta


@dataclass
class ExportedPolicy:
    """An exported ONNX policy and its metadata (``<name>.json`` next to ``<name>.onnx``), the model checked
    against the metadata's digest and loaded (``model``: its onnxruntime session)."""

    path: Path
    metadata: dict[str, Any]
    model: Any = field(repr=False)

    @classmethod
    def load(cls, path: str | Path | None) -> ExportedPolicy:
        if path is None or str(path) == "":
            raise ConfigError("onnx: policy=onnx needs onnx=<path/to/policy.onnx>")
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"onnx: {path} does not exist")
        meta_path = path.with_suffix(".json")
        if not meta_path.is_file():
            raise ConfigError(f"onnx: no metadata {meta_path} next to {path} (scripts/export.py writes both)")
        try:
            data = path.read_bytes()  # read once: the bytes checked are the bytes played
        except OSError as e:
            raise ConfigError(f"onnx: {path} cannot be read ({e})") from None
        meta = read_metadata(path, meta_path, data)
        from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidGraph, InvalidProtobuf

        try:
            model = session(data)
        except (Fail, InvalidArgument, InvalidGraph, InvalidProtobuf) as e:
            raise ConfigError(f"onnx: {path} is not a valid ONNX model ({' '.join(str(e).split())})") from None
        return cls(path, meta, model)

    @property
    def run(self) -> Path:
        """The run folder: ``run`` relative to the metadata's folder, else ``run_absolute`` (an absolute ``run``,
        as exports before format details changed hold, is used as it is)."""
        rel = Path(self.metadata["run"])
        candidates = [rel if rel.is_absolute() else self.path.parent / rel]
        if self.metadata.get("run_absolute"):
            candidates.append(Path(self.metadata["run_absolute"]))
        found = next((p for p in candidates if (p / "config.yaml").is_file()), None)
        if found is None:
            raise ConfigError(
                f"onnx: {self.path}'s run folder is neither at {candidates[0]} nor at {candidates[-1]} "
                f"(its policy.json: run, run_absolute); pass run=<run folder>"
            )
        return found

    @property
    def name(self) -> str:
        """The exported checkpoint's name (``final``, ``best``, ``step_2048``)."""
        return Path(self.metadata["checkpoint"]).stem

    @property
    def obs_size(self) -> int:
        """The graph's input size: the leading columns of the env's observation it reads."""
        return int(self.metadata["observation"]["size"])

    @property
    def env_obs_size(self) -> int:
        """The size of the env's observation the policy was exported for."""
        return int(self.metadata["observation"].get("env_size", self.obs_size))

    def raw(self) -> Any:
        """``obs (batch, obs_size) float32 -> raw actions``, through onnxruntime."""
        sess = self.model
        names = [i.name for i in sess.get_inputs()], [o.name for o in sess.get_outputs()]
        inp, outp = self.metadata["onnx"]["input"], self.metadata["onnx"]["output"]
        if names != ([inp], [outp]):
            raise ConfigError(f"onnx: {self.path} has inputs/outputs {names}, its metadata says {inp} -> {outp}")
        return lambda obs: sess.run([outp], {inp: np.asarray(obs, dtype=np.float32)})[0]

    def policy(self, env: gym.Env, robot: str | None = None) -> Policy:
        """Single-observation actions for ``env``, clipped to the metadata's bounds; the env's observation
        size must be the policy's."""
        size = int(np.prod(env.observation_space.shape))
        if size != self.env_obs_size:
            where = f"robot {robot}'s env" if robot else "the env"
            raise ConfigError(
                f"onnx: {self.path} takes observations of size {self.env_obs_size}; {where} gives size {size}"
            )
        run, n = self.raw(), self.obs_size
        low, high = (np.asarray(b, dtype=np.float32) for b in self.metadata["action"]["clip"])

        def act(obs: np.ndarray) -> np.ndarray:
            return np.clip(run(np.asarray(obs, dtype=np.float32)[None, :n])[0], low, high)

        return act
