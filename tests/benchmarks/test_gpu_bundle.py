"""benchmarks/gpu_bundle.py: what a bare GPU machine is sent, in uploads it takes, and the venvs it makes of them."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_bundle.py"


@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The module, with its repo, venvs and staging folder moved under ``tmp_path``."""
    spec = importlib.util.spec_from_file_location("gpu_bundle_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.setattr(module, "ROOT", repo)
    monkeypatch.setattr(module, "VENVS", {"isaac": repo / ".venv-isaaclab", "core": repo / ".venv"})
    monkeypatch.setattr(module, "STAGE", tmp_path / "stage")
    return module


def test_have_reads_pip_freeze_and_names() -> None:
    spec = importlib.util.spec_from_file_location("gpu_bundle_have", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    have = module.read_have("torch==2.11.0\n# the CUDA image\nPyYAML, numpy_stl\nbackports.zstd==1.8.0  # why\n")
    assert have == {"torch": "2.11.0", "pyyaml": None, "numpy-stl": None, "backports-zstd": "1.8.0"}
    dists = {n: {"version": v, "files": []} for n, v in
             [("torch", "2.11.0"), ("nvidia-cublas", "13.1"), ("triton", "3.6"), ("PyYAML", "6.0.4"),
              ("warp-lang", "1.17.0"), ("Backports.Zstd", "1.9.0"), ("dexwheel", "0.1.0")]}  # fmt: skip
    assert list(module.carried(dists, have)) == ["warp-lang"]  # the machine's CUDA stack and the project stay
    assert module.version_notes(dists, have) == ["Backports.Zstd 1.9.0 here, 1.8.0 there"]


def make_site(root: Path, package: str, payload: bytes) -> Path:
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("VALUE = 7\n")
    (root / package / "data.bin").write_bytes(payload)
    return root


def test_uploads_fit_their_cap_and_unpack_into_working_venvs(bundle, tmp_path: Path, monkeypatch) -> None:
    rng = random.Random(3)
    sites = {"isaac": make_site(tmp_path / "src-isaac", "bundled_isaac", rng.randbytes(9000)),
             "core": make_site(tmp_path / "src-core", "bundled_core", rng.randbytes(5000)),
             "warp": fake_cache(tmp_path / "src-warp", {"1.17.0/wp_a_1/wp_a_1.sm75.ptx": rng.randbytes(3000)})}  # fmt: skip
    monkeypatch.setenv("WARP_CACHE_PATH", str(tmp_path / "machine-warp"))
    archives = []
    for name, site in sites.items():
        archives.append(tmp_path / f"{name}.tar.xz")
        bundle.compress(site, archives[-1])
    whole = b"".join(a.read_bytes() for a in archives)
    folders = bundle.split_uploads(archives, tmp_path / "out", part_bytes=4000)
    assert [f.name for f in folders] == [str(i + 1) for i in range(len(folders))]
    assert len(folders) == -(-len(whole) // 4000)  # filled one after another: no upload wasted
    parts = [p for name in sites for f in folders for p in sorted(f.glob(f"{name}.tar.xz.part*"))]
    assert all(sum(p.stat().st_size for p in f.glob("*.part*")) <= 4000 for f in folders)
    assert b"".join(p.read_bytes() for p in parts) == whole

    # the last upload before the others arrived: refused, naming them, nothing built
    with pytest.raises(SystemExit) as refused:
        bundle.unpack(folders[-1], replace=False)
    assert refused.value.code == 2 and not bundle.VENVS["isaac"].exists()
    assert [bundle.stage(folder) for folder in folders][-1] == []
    # a damaged part: named, nothing built
    damaged = bundle.STAGE / parts[0].name
    damaged.write_bytes(b"x" + damaged.read_bytes()[1:])
    with pytest.raises(SystemExit):
        bundle.unpack(folders[-1], replace=False)
    assert not bundle.VENVS["core"].exists()
    bundle.stage(folders[0])

    assert bundle.unpack(folders[-1], replace=False) == 0
    for name, package in (("isaac", "bundled_isaac"), ("core", "bundled_core")):
        venv = bundle.VENVS[name]
        assert (venv / ".installed").exists()
        seen = subprocess.run([str(venv / "bin" / "python"), "-c", f"import sys, {package}, yaml; "
                               f"print({package}.VALUE, sys.path.index({str(bundle.ROOT)!r}) > 0)"],
                              capture_output=True, text=True, check=True)  # fmt: skip
        assert seen.stdout.split() == ["7", "True"]  # its own site folder, this Python's packages, the repo
    assert (tmp_path / "machine-warp/1.17.0/wp_a_1/wp_a_1.sm75.ptx").read_bytes() == (
        sites["warp"] / "1.17.0/wp_a_1/wp_a_1.sm75.ptx"
    ).read_bytes()
    with pytest.raises(SystemExit):  # made already: --replace says to make them again
        bundle.unpack(folders[-1], replace=False)
    assert bundle.unpack(folders[-1], replace=True) == 0


def fake_cache(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_the_compiled_cuda_modules_travel_and_join_the_machines_cache(bundle, tmp_path: Path) -> None:
    here = fake_cache(tmp_path / "here", {
        "1.17.0/wp_a_1/wp_a_1.sm75.ptx": b"ptx a", "1.17.0/wp_a_1/wp_a_1.sm90.cubin": b"cubin a",
        "1.17.0/wp_a_1/wp_a_1.meta": b"meta a", "1.17.0/wp_a_1/wp_a_1.cu": b"source: not needed there",
        "1.17.0/wp_b_2/wp_b_2.cpu8b7bf9eb.o": b"a CPU module", "1.17.0/wp_b_2/wp_b_2.meta": b"its meta",
        "1.17.0/lto/0d43e2f8.lto": b"a compile's input"})  # fmt: skip
    into = tmp_path / "site-warp"
    assert bundle.cuda_cache(here, into) == 2
    carried = sorted(str(p.relative_to(into)) for p in into.rglob("*") if p.is_file())
    assert carried == ["1.17.0/wp_a_1/wp_a_1.meta", "1.17.0/wp_a_1/wp_a_1.sm75.ptx", "1.17.0/wp_a_1/wp_a_1.sm90.cubin"]
    bundle.compress(into, tmp_path / "warp.tar.xz")
    there = fake_cache(tmp_path / "there", {"1.17.0/wp_a_1/wp_a_1.meta": b"compiled there already"})
    assert bundle.install_cuda_cache(tmp_path / "warp.tar.xz", there) == (2, 1)
    assert (there / "1.17.0/wp_a_1/wp_a_1.sm90.cubin").read_bytes() == b"cubin a"
    assert (there / "1.17.0/wp_a_1/wp_a_1.meta").read_bytes() == b"compiled there already"  # kept, not replaced
    assert bundle.install_cuda_cache(tmp_path / "warp.tar.xz", there) == (0, 3)


def test_unpack_names_missing_parts(bundle, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "isaac.tar.xz"
    bundle.compress(make_site(tmp_path / "s", "bundled_isaac", random.Random(1).randbytes(6000)),
                    archive)  # fmt: skip
    first, *rest = bundle.split_uploads([archive], tmp_path / "out", part_bytes=2500)
    with pytest.raises(SystemExit):
        bundle.unpack(first, replace=False)
    err = capsys.readouterr().err
    assert err.startswith("error: unpack: parts not uploaded yet: isaac.tar.xz.part01")
    assert rest and not bundle.VENVS["isaac"].exists()


@pytest.mark.slow
def test_trace_finds_the_distributions_a_venv_imported(bundle, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(bundle, "VENVS", {"core": Path(sys.prefix)})
    used = bundle.trace([[sys.executable, "-c", "import yaml"]], tmp_path)
    found = bundle.venv_dists(Path(sys.prefix), used["core"])
    assert "PyYAML" in found["dists"] and found["python"] == "{}.{}".format(*sys.version_info[:2])
    into = tmp_path / "site"
    into.mkdir()
    bundle.gather(found, {"PyYAML": found["dists"]["PyYAML"]}, found["python"], into)
    assert (into / "yaml" / "__init__.py").read_text() == (Path(found["site"]) / "yaml" / "__init__.py").read_text()
    # a root takes what it requires, recursively, imported or not (rsl-rl-lib -> tensordict -> pyvers)
    required = bundle.venv_dists(Path(sys.prefix), set(), ("rsl-rl-lib",))["dists"]
    assert {"rsl-rl-lib", "tensordict", "pyvers"} <= set(required) and "PyYAML" not in required


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["pack", "--have", "missing.txt", "--out", "o"], "error: --have: no file missing.txt"),
        (["stage", "."], "error: stage: . holds no SHA256SUMS"),
        (["pack", "--have", __file__, "--out", "o", "--python", "twelve"], "error: --python: 'twelve'"),
        (["pack", "--have", __file__, "--out", "o", "--cuda-arch", "9"], "error: --cuda-arch: 9 is not a CUDA"),
    ],
)
def test_bad_input_is_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith(message), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()
