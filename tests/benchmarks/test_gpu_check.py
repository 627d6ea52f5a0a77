"""benchmarks/gpu_check.py's own bookkeeping (its pipeline runs in tests/isaaclab/test_gpu_check.py)."""

import json
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_each_step_records_the_cuda_modules_it_compiled(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import gpu_check

    cache = tmp_path / "warp"
    carried = cache / "1.17.0" / "wp_a_1" / "wp_a_1.sm75.ptx"
    carried.parent.mkdir(parents=True)
    carried.write_bytes(b"carried")
    path = tmp_path / "gpu_check.json"
    check = gpu_check.Check(gpu_check.smoke_plan(), path, tmp_path, cuda_binaries={"1.17.0/wp_a_1/wp_a_1.sm75.ptx"})
    check.result = {"started": "now", "command": "gpu_check", "host": "here", "device": "cuda:0", "steps": {},
                    "warp_cache": {"dir": str(cache), "cuda_binaries_at_start": 1}}  # fmt: skip

    def compiles_two(rec, cap):  # as warp does on a miss: a module folder and its binary
        for name in ("wp_b_2", "wp_c_3"):
            (cache / "1.17.0" / name).mkdir()
            (cache / "1.17.0" / name / f"{name}.sm75.ptx").write_bytes(b"compiled here")
        (cache / "1.17.0" / "wp_b_2" / "wp_b_2.cpu8b7bf9eb.o").write_bytes(b"and for this CPU")

    check.step("tests", 60, compiles_two)
    check.step("step_rate", 60, lambda rec, cap: None)
    saved = json.loads(path.read_text())
    assert [saved["steps"][s]["warp_cuda_compiled"] for s in ("tests", "step_rate")] == [2, 0]
    assert [saved["steps"][s]["warp_cpu_compiled"] for s in ("tests", "step_rate")] == [1, 0]
    table = path.with_suffix(".md").read_text()
    assert "held 1 CUDA binaries (PTX, CUBIN) at the start" in table
    assert "| tests | yes |" in table and table.split("| tests | yes | ")[1].split(" | ")[1] == "2 / 1"
    sys.modules.pop("gpu_check", None)
