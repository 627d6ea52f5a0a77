"""dexwheel.warp_cache: which cache a process uses, and which of its modules are compiled for CUDA."""

import re
from pathlib import Path

from dexwheel import warp_cache

ROOT = Path(__file__).resolve().parents[1]


def test_the_cache_is_warp_cache_path_else_dexwheels_default(tmp_path):
    assert warp_cache.cache_dir({"WARP_CACHE_PATH": str(tmp_path)}) == tmp_path
    assert warp_cache.cache_dir({}) == warp_cache.cache_dir({"WARP_CACHE_PATH": ""}) == warp_cache.DEFAULT
    make = re.search(r"^export WARP_CACHE_PATH \?= \$\(HOME\)/(\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert Path.home() / make.group(1) == warp_cache.DEFAULT  # make's runs and the scripts' share one cache
    env = {"OTHER": "1"}
    assert warp_cache.with_cache(env) is env and env["WARP_CACHE_PATH"] == str(warp_cache.DEFAULT)
    assert warp_cache.with_cache({"WARP_CACHE_PATH": "/elsewhere"})["WARP_CACHE_PATH"] == "/elsewhere"


def test_cuda_binaries_are_the_ptx_and_cubin_files_of_module_folders(tmp_path):
    files = ["1.17.0/wp_a_1/wp_a_1.sm75.ptx", "1.17.0/wp_a_1/wp_a_1.sm90.cubin", "1.17.0/wp_a_1/wp_a_1.meta",
             "1.17.0/wp_a_1/wp_a_1.cu", "1.17.0/wp_b_2/wp_b_2.cpu8b7bf9eb.o", "1.17.0/wp_b_2/wp_b_2.meta",
             "1.17.0/lto/0d43e2f8.lto", "1.16.0/wp_c_3/wp_c_3.sm90.cubin"]  # fmt: skip
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b"x")
    assert warp_cache.cuda_binaries(tmp_path) == {files[0], files[1], files[-1]}
    assert warp_cache.cuda_binaries(tmp_path / "missing") == set()
    assert warp_cache.cpu_objects(tmp_path) == {files[4]} and warp_cache.cpu_objects(tmp_path / "missing") == set()
