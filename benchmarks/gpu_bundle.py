"""Carry both venvs to a GPU machine that cannot install packages: pack them here, unpack them there.

A lent GPU machine may start bare: Python 3.12 with a CUDA build of torch, no package index, and a cap on each
upload (64 MiB here, the working tree included). ``pack`` finds what the GPU check imports (``gpu_check.py
--smoke`` and a collection of ``tests/isaaclab``, traced in both venvs), keeps the distributions the machine
lacks (``--have``: its ``pip list --format=freeze``, or one name per line; torch, triton and the nvidia-* CUDA
libraries are always the machine's own), rebuilds compiled ones for its Python, compiles warp's CUDA modules of
every Isaac Lab task for ``--cuda-arch`` (``benchmarks/warp_cuda_cache.py``: NVRTC needs no GPU, and a cold GPU
machine would spend minutes of its lease on it), and writes them as xz parts, one folder per upload (``<out>/1``,
``<out>/2``, ...), each at most ``--part-mb``::

    python benchmarks/gpu_bundle.py pack --have benchmarks/gpu_image_packages.txt --out .gpu   # here, 12 minutes
    python3 benchmarks/gpu_bundle.py stage .gpu/1                        # there: one upload per folder ...
    python3 benchmarks/gpu_bundle.py unpack .gpu/4 && .venv/bin/python benchmarks/gpu_check.py --out-dir "$OUT"

``stage`` copies a folder's parts to ``/tmp/dexwheel-bundle`` (uploads may land on a fresh copy of the repo);
``unpack`` stages its own folder, checks every part against ``SHA256SUMS`` (a missing or damaged part is named,
nothing is built), unpacks the site folders and makes ``.venv-isaaclab`` and ``.venv`` from the running Python,
each seeing its site folder, then that Python's own packages (torch), then the repo, and adds the CUDA modules to
warp's cache (``WARP_CACHE_PATH``, else dexwheel's default), keeping any file already there. It runs on the machine's
bare ``python3``, so this file uses the standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
VENVS = {"isaac": ROOT / ".venv-isaaclab", "core": ROOT / ".venv"}
STAGE = Path("/tmp/dexwheel-bundle")
#: distributions carried with all they require, beyond what the trace saw (processes that end by a signal, such
#: as the tests' bridges, leave no trace): the core venv's whole install with its bridge extra; for the Isaac Lab
#: venv the viewer's pyglet (its requirements would pull ~2 GB, open3d, pinocchio, ..., that nothing imports)
ROOTS = {"isaac": ("pyglet",), "core": ("dexwheel", "cyclonedds", "rosbags")}
SUMS = "SHA256SUMS"
#: the machine's own CUDA stack: never carried (a CUDA torch does not fit an upload)
MACHINE_OWN = re.compile(r"^(torch|triton|nvidia-.*|dexwheel)$")
#: manylinux tags pip may take when it fetches a compiled distribution for the machine's Python
PLATFORMS = ["manylinux1_x86_64", "manylinux2014_x86_64"] + [f"manylinux_2_{n}_x86_64" for n in range(17, 40)]
TRACER = """
import atexit, os, sys
def _dump():
    files = sorted({f for m in list(sys.modules.values()) if (f := getattr(m, "__file__", None)) and "-packages" in f})
    with open(os.path.join(os.environ["DEXWHEEL_BUNDLE_TRACE"], f"{os.getpid()}.json"), "w") as out:
        import json
        json.dump({"python": sys.executable, "files": files}, out)
atexit.register(_dump)
"""
DISTS = """
import importlib.metadata as md, json, re, sys, sysconfig
from pathlib import Path
site = Path(sysconfig.get_paths()["purelib"]).resolve()
asked = json.load(sys.stdin)
used = {str(Path(p).resolve()) for p in asked["files"]}
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
by_name = {norm(d.metadata["Name"]): d for d in md.distributions()}
needed, todo = set(), [norm(r) for r in asked["roots"]]
while todo:  # the roots' requirements, recursively (extras left out)
    name = todo.pop()
    if name in by_name and name not in needed:
        needed.add(name)
        todo += [norm(re.match(r"[A-Za-z0-9._-]+", r)[0]) for r in by_name[name].requires or []
                 if "extra ==" not in r.replace("extra==", "extra ==")]
dists = {}
for name, dist in by_name.items():
    files = [(site / f).resolve() for f in dist.files or []]
    files = [p for p in files if p.is_relative_to(site) and p.is_file() and "__pycache__" not in p.parts]
    if name in needed or any(str(p) in used for p in files):
        dists[dist.metadata["Name"]] = {"version": dist.version, "files": [str(p.relative_to(site)) for p in files]}
print(json.dumps({"site": str(site), "python": "%d.%d" % sys.version_info[:2], "dists": dists}))
"""


def _load(name: str) -> ModuleType:
    """A dexwheel module that needs only the standard library, loaded without the package (it needs gymnasium)."""
    spec = importlib.util.spec_from_file_location(f"_bundle_{name}", ROOT / "dexwheel" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


cli, atomic, warp_cache = _load("cli"), _load("atomic"), _load("warp_cache")
#: the archive of warp's compiled CUDA modules, unpacked into the machine's warp cache
WARP = "warp"


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_have(text: str) -> dict[str, str | None]:
    """The machine's distributions from ``pip list --format=freeze`` or names (``#`` comments, commas allowed)."""
    have: dict[str, str | None] = {}
    for line in text.splitlines():
        for item in line.split("#")[0].replace(",", " ").split():
            name, _, version = item.partition("==")
            have[normalized(name)] = version or None
    return have


def carried(dists: dict[str, dict], have: dict[str, str | None]) -> dict[str, dict]:
    """The traced distributions the machine lacks (its own CUDA stack never carried)."""
    return {name: d for name, d in sorted(dists.items())
            if normalized(name) not in have and not MACHINE_OWN.match(normalized(name))}  # fmt: skip


def version_notes(dists: dict[str, dict], have: dict[str, str | None]) -> list[str]:
    """The machine's versions that differ from the venv's for what the check uses there (torch, numpy, ...)."""
    return [f"{name} {d['version']} here, {have[normalized(name)]} there" for name, d in sorted(dists.items())
            if have.get(normalized(name)) not in (None, d["version"])]  # fmt: skip


def trace(commands: list[list[str]], workdir: Path) -> dict[str, set[str]]:
    """The site-packages files each venv's processes imported while ``commands`` ran, keyed by venv name."""
    hook, out = workdir / "hook", workdir / "trace"
    hook.mkdir()
    out.mkdir()
    (hook / "sitecustomize.py").write_text(TRACER)
    env = {**os.environ, "DEXWHEEL_BUNDLE_TRACE": str(out), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")]))}  # fmt: skip
    for cmd in commands:
        print(f"gpu_bundle: tracing {' '.join(cmd[1:4])} ...", flush=True)
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(cmd)} failed (exit {done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}"
            )
    used: dict[str, set[str]] = {name: set() for name in VENVS}
    for record in out.glob("*.json"):
        seen = json.loads(record.read_text())
        for name, venv in VENVS.items():
            if Path(seen["python"]).absolute().is_relative_to(venv.absolute()):
                used[name].update(seen["files"])
    return used


def venv_dists(venv: Path, files: set[str], roots: tuple[str, ...] = ()) -> dict:
    """The venv's site folder, Python version and the distributions that own any of ``files`` or that ``roots``
    require (recursively)."""
    asked = json.dumps({"files": sorted(files), "roots": list(roots)})
    done = subprocess.run([str(venv / "bin" / "python"), "-c", DISTS], input=asked,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout)


def gather(venv: dict, dists: dict[str, dict], python: str, into: Path) -> None:
    """Copy ``dists``' files into ``into``; a compiled one built for another Python is fetched for ``python``."""
    for name, d in dists.items():
        compiled = any(f.endswith((".so", ".pyd")) or ".so." in f for f in d["files"])
        if compiled and venv["python"] != python:
            fetched = into.parent / f"fetched-{name}"  # its own folder: mujoco and mujoco-core share mujoco/
            cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:",
                   "--python-version", python, "--implementation", "cp", "--target", str(fetched),
                   *[arg for tag in PLATFORMS for arg in ("--platform", tag)], f"{name}=={d['version']}"]  # fmt: skip
            subprocess.run(cmd, check=True)
            shutil.copytree(fetched, into, dirs_exist_ok=True)
            shutil.rmtree(fetched)
            continue
        for f in d["files"]:
            (into / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(venv["site"]) / f, into / f)
    shutil.rmtree(into / "bin", ignore_errors=True)  # console scripts: the machine runs `python -m ...`


def compress(site: Path, archive: Path) -> None:
    """``site`` as a .tar.xz (xz on all cores where it is installed, Python's lzma otherwise)."""
    if shutil.which("xz"):
        with archive.open("wb") as out:
            tar = subprocess.Popen(["tar", "-C", str(site), "-cf", "-", "."], stdout=subprocess.PIPE)
            subprocess.run(["xz", "-T0", "-6"], stdin=tar.stdout, stdout=out, check=True)
            if tar.wait() != 0:
                raise RuntimeError(f"tar of {site} failed")
    else:
        with tarfile.open(archive, "w:xz") as tar:
            tar.add(site, arcname=".")


def cuda_cache(cache: Path, into: Path) -> int:
    """Copy the compiled CUDA modules of warp's ``cache`` (binaries and kernel metadata) into ``into``, laid out
    as in the cache; how many binaries."""
    binaries = warp_cache.cuda_binaries(cache)
    folders = {Path(binary).parent for binary in binaries}
    for folder in folders:
        (into / folder).mkdir(parents=True)
    for name in [*binaries, *(str(folder / f"{folder.name}.meta") for folder in folders)]:
        shutil.copy2(cache / name, into / name)
    return len(binaries)


def install_cuda_cache(archive: Path, cache: Path) -> tuple[int, int]:
    """Extract the carried CUDA modules into warp's ``cache``, keeping any file already there (a module's name
    is its content hash, so an existing file is the same module); (files added, files kept)."""
    added = kept = 0
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar.getmembers():
            if member.isfile() and (cache / member.name).exists():
                kept += 1
            elif member.isfile():
                tar.extract(member, cache, filter="data")
                added += 1
    return added, kept


def split_uploads(archives: list[Path], out: Path, part_bytes: int) -> list[Path]:
    """Cut the archives, one after another, into upload folders 1, 2, ... of at most ``part_bytes`` each."""
    folders: list[Path] = []
    room = 0
    for archive in archives:
        with archive.open("rb") as src:
            for i in itertools.count():
                chunk = src.read(room or part_bytes)
                if not chunk:
                    break
                if not room:
                    folders.append(out / str(len(folders) + 1))
                    folders[-1].mkdir(parents=True)
                    room = part_bytes
                (folders[-1] / f"{archive.name}.part{i:02d}").write_bytes(chunk)
                room -= len(chunk)
        archive.unlink()
    sums = "".join(f"{sha256(p)}  {p.name}\n" for f in folders for p in sorted(f.iterdir()))
    for folder in folders:
        atomic.write_atomic(folder / SUMS, sums)
    return folders


def sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def pack(args: argparse.Namespace) -> int:
    have = read_have(args.have.read_text())
    for venv in VENVS.values():
        if not (venv / "bin" / "python").exists():
            cli.refuse(f"pack: no {venv.relative_to(ROOT)} here to pack (make test builds both venvs)")
    with tempfile.TemporaryDirectory(prefix="gpu_bundle-") as tmp:
        work = Path(tmp)
        used = trace([[str(VENVS["core"] / "bin" / "python"), "benchmarks/gpu_check.py", "--smoke", "--out-dir",
                       str(work / "smoke")],
                      [str(VENVS["isaac"] / "bin" / "python"), "-m", "pytest", "--collect-only", "-q", "-p",
                       "no:dash", "-p", "no:cacheprovider", "tests/isaaclab"]], work)  # fmt: skip
        stage = work / "out"
        stage.mkdir()
        print(f"gpu_bundle: compiling warp's CUDA modules for sm_{args.cuda_arch} (about 5 minutes) ...", flush=True)
        subprocess.run([str(VENVS["isaac"] / "bin" / "python"), "benchmarks/warp_cuda_cache.py", "--cache",
                        str(work / "warp-cache"), "--arch", str(args.cuda_arch)], cwd=ROOT, check=True)  # fmt: skip
        (work / "site-warp").mkdir()
        modules = cuda_cache(work / "warp-cache", work / "site-warp")
        compress(work / "site-warp", stage / f"{WARP}.tar.xz")
        archives, summary = [stage / f"{WARP}.tar.xz"], {WARP: {"cuda_binaries": modules, "arch": args.cuda_arch}}
        for name, venv in VENVS.items():
            found = venv_dists(venv, used[name], ROOTS[name])
            take = carried(found["dists"], have)
            for note in version_notes(found["dists"], have):
                print(f"gpu_bundle: {name}: differs: {note}")
            site = work / f"site-{name}"
            site.mkdir()
            gather(found, take, args.python, site)
            archive = stage / f"{name}.tar.xz"
            print(f"gpu_bundle: {name}: {len(take)} distributions, compressing ...", flush=True)
            compress(site, archive)
            archives.append(archive)
            summary[name] = {n: d["version"] for n, d in take.items()}
        folders = split_uploads(archives, stage, args.part_mb * 1_000_000)
        for folder in folders:
            atomic.write_atomic(folder / "bundle.json", json.dumps({"python": args.python, **summary}, indent=1))
            shutil.copytree(folder, args.out / folder.name)
    total = sum(p.stat().st_size for f in folders for p in (args.out / f.name).iterdir())
    print(f"gpu_bundle: {len(folders)} uploads in {args.out} ({total / 1e6:.0f} MB): carry {args.out}/1 ... "
          f"{args.out}/{len(folders)}, one per call; `stage` each, `unpack` the last")  # fmt: skip
    return 0


def stage(folder: Path) -> list[str]:
    """Copy ``folder``'s parts to :data:`STAGE`; the names of the parts still missing there."""
    STAGE.mkdir(parents=True, exist_ok=True)
    for path in folder.iterdir():
        shutil.copy2(path, STAGE / path.name)
    expected = [line.split()[1] for line in (STAGE / SUMS).read_text().splitlines()]
    return [name for name in expected if not (STAGE / name).exists()]


def unpack(folder: Path, replace: bool) -> int:
    torch = importlib.util.find_spec("torch")
    if torch is None or torch.origin is None:
        cli.refuse(f"unpack: {sys.executable} has no torch; the bundle carries none (the machine's CUDA torch)")
    existing = [str(v.relative_to(ROOT)) for v in VENVS.values() if v.exists()]
    if existing and not replace:
        cli.refuse(f"unpack: {', '.join(existing)} exists; --replace makes them again")
    missing = stage(folder)
    if missing:
        cli.refuse(f"unpack: parts not uploaded yet: {', '.join(missing)} (stage their folders first)")
    for line in (STAGE / SUMS).read_text().splitlines():
        digest, name = line.split()
        if sha256(STAGE / name) != digest:
            cli.refuse(f"unpack: {STAGE / name} is damaged (sha256 differs); upload its folder again")
    own_site = Path(torch.origin).parents[1]
    for name, venv in VENVS.items():
        site = STAGE / f"site-{name}"
        shutil.rmtree(site, ignore_errors=True)
        site.mkdir()
        parts = sorted(STAGE.glob(f"{name}.tar.xz.part*"))
        with _Joined(parts) as stream, tarfile.open(fileobj=stream, mode="r|xz") as tar:
            tar.extractall(site, filter="data")
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        Path(purelib, "dexwheel_bundle.pth").write_text(
            f"import site; site.addsitedir({str(site)!r}); site.addsitedir({str(own_site)!r})\n{ROOT}\n"
        )
        (venv / ".installed").touch()  # the Makefile's stamp: the venv is complete
        print(f"gpu_bundle: {venv.relative_to(ROOT)}: {site} + {own_site}", flush=True)
    parts = sorted(STAGE.glob(f"{WARP}.tar.xz.part*"))
    if parts:
        archive = STAGE / f"{WARP}.tar.xz"
        with archive.open("wb") as out, _Joined(parts) as stream:
            shutil.copyfileobj(stream, out)
        cache = warp_cache.cache_dir()
        added, kept = install_cuda_cache(archive, cache)
        print(f"gpu_bundle: warp's compiled CUDA modules: {added} files into {cache} ({kept} there already)")
    return 0


class _Joined:
    """The parts read one after another as one binary stream (for ``tarfile``'s stream mode)."""

    def __init__(self, parts: list[Path]) -> None:
        self.parts, self.current = list(parts), None

    def __enter__(self) -> _Joined:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.current:
            self.current.close()

    def read(self, size: int = -1) -> bytes:
        data = b""
        while size < 0 or len(data) < size:
            if self.current is None:
                if not self.parts:
                    break
                self.current = self.parts.pop(0).open("rb")
            chunk = self.current.read(-1 if size < 0 else size - len(data))
            if not chunk:
                self.current.close()
                self.current = None
            data += chunk
        return data


def main(argv: list[str] | None = None) -> int:
    parser = cli.Parser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("pack", help="here: trace, gather and split both venvs' packages the machine lacks")
    p.add_argument("--have", type=Path, required=True, help="the machine's packages (pip list --format=freeze)")
    p.add_argument("--out", type=Path, required=True, help="upload folders (keep it git-ignored)")
    p.add_argument(
        "--part-mb",
        type=int,
        default=56,
        help="the most MB an upload folder holds: an upload's cap less the working tree (default 56)",
    )
    p.add_argument("--python", default="3.12", help="the machine's Python (default 3.12)")
    p.add_argument("--cuda-arch", type=int, default=90, help="the GPU's compute capability (default 90: H100, H200)")
    s = sub.add_parser("stage", help="there: keep one upload's parts until the last arrives")
    s.add_argument("folder", type=Path)
    u = sub.add_parser("unpack", help="there: stage the last upload, check the parts, make both venvs")
    u.add_argument("folder", type=Path)
    u.add_argument("--replace", action="store_true", help="make .venv and .venv-isaaclab again if they exist")
    args = parser.parse_args(argv)
    if args.verb == "pack":
        if not args.have.is_file():
            cli.refuse(f"--have: no file {args.have}")
        if args.out.exists() and any(args.out.iterdir()):
            cli.refuse(f"--out: {args.out} exists and is not empty (an earlier bundle?); remove it or name another")
        if args.part_mb < 1:
            cli.refuse(f"--part-mb: {args.part_mb} is not a positive number of MB")
        if not re.fullmatch(r"3\.\d+", args.python):
            cli.refuse(f"--python: {args.python!r} is not a version like 3.12")
        if error := warp_cache.arch_error("--cuda-arch", args.cuda_arch):
            cli.refuse(error)
        try:
            return pack(args)
        except (RuntimeError, subprocess.CalledProcessError) as e:  # a traced run or a fetch failed: say which
            print(f"gpu_bundle: pack failed, nothing written to {args.out}: {e}", file=sys.stderr)
            return 1
    if not (args.folder / SUMS).is_file():
        cli.refuse(f"{args.verb}: {args.folder} holds no {SUMS}: not an upload folder of `pack`")
    if args.verb == "stage":
        missing = stage(args.folder)
        print(f"gpu_bundle: staged {args.folder} in {STAGE}; " + (f"still to come: {', '.join(missing)}" if missing
              else "all parts here: unpack next"))  # fmt: skip
        return 0
    return unpack(args.folder, args.replace)


if __name__ == "__main__":
    sys.exit(main())
