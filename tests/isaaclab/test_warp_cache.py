"""dexwheel.warp_cache.compile_loaded: warp's CUDA binaries built without a GPU, where warp's loader looks for them."""

import json
import os
import subprocess
import sys
import textwrap

from dexwheel.isaaclab.cross_backend import REPO

KERNELS = """
import warp as wp

@wp.kernel
def add(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + b[i]
"""
# a fresh process: compile_loaded takes every module the process loaded, and the test session's are many
CHILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import warp as wp
    wp.config.log_level = wp.LOG_WARNING  # no init banner in the JSON output
    import kernels
    from dexwheel import warp_cache
    a = wp.zeros(4, dtype=float, device="cpu")
    wp.launch(kernels.add, dim=4, inputs=[a, wp.ones(4, dtype=float, device="cpu")], device="cpu")
    first = warp_cache.compile_loaded([(75, True), (90, False)])
    again = warp_cache.compile_loaded([(75, True), (90, False)])
    module = wp.get_module("kernels")
    expected = [str(Path(wp.config.kernel_cache_dir) / module.get_module_identifier()
                    / module._get_compile_output_name(None, output_arch=arch, use_ptx=ptx))  # the loader's name
                for arch, ptx in ((75, True), (90, False))]
    name = module.get_module_identifier()
    warp_cache.prefer_cubin()  # not part of the module's hash: the folder the cache holds stays the one looked for
    module.hashers.clear()
    print(json.dumps({"first": first, "again": again, "expected": expected, "cache": wp.config.kernel_cache_dir,
                      "cuda_output": wp.config.cuda_output, "same_name": module.get_module_identifier() == name}))
""")


def test_a_loaded_module_is_compiled_for_cuda_where_warp_loads_it(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    cache = tmp_path / "cache"
    env = {**os.environ, "WARP_CACHE_PATH": str(cache), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["first"]["modules"] >= 1 and seen["first"]["compiled"] == 2 * seen["first"]["modules"]
    assert seen["again"] == {"modules": seen["first"]["modules"], "compiled": 0, "cached": seen["first"]["compiled"]}
    assert seen["cuda_output"] == "cubin" and seen["same_name"]
    ptx, cubin = seen["expected"]
    assert ptx.endswith(".sm75.ptx") and cubin.endswith(".sm90.cubin")
    for binary in (ptx, cubin):
        assert os.path.getsize(binary) > 0 and os.path.exists(
            os.path.splitext(os.path.splitext(binary)[0])[0] + ".meta"
        )
    from dexwheel import warp_cache

    assert {os.path.relpath(p, cache) for p in (ptx, cubin)} <= warp_cache.cuda_binaries(cache)


def test_the_physics_config_asks_warp_for_cubin_unless_the_process_chose():
    import warp as wp

    from dexwheel.isaaclab.sim import physics_cfg

    chosen = wp.config.cuda_output
    try:
        wp.config.cuda_output = None  # warp's own default: PTX wherever the driver is as new as its NVRTC
        physics_cfg("cpu")
        assert wp.config.cuda_output == "cubin"
        wp.config.cuda_output = "ptx"  # a user's choice stands
        physics_cfg("cuda:0")
        assert wp.config.cuda_output == "ptx"
    finally:
        wp.config.cuda_output = chosen
