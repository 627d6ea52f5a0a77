"""Regenerate the golden trajectories (tests/golden/*.npz) on purpose, and print what changed.

python scripts/regen_golden.py                 # every case
python scripts/regen_golden.py solenopsis_random g20_left_pd_normalized_random
python scripts/regen_golden.py --check         # compare only, write nothing (exit 1 when any differs)

Per file: "unchanged", "new", the first divergent quantity, step and env and the largest deviation, or
"unreadable (<why>)" for a damaged file (regenerated; counted as changed under --check).
Review that summary (it belongs in the commit message), then commit the files.
"""

from __future__ import annotations

import argparse
import sys
import time
import zipfile
import zlib

from dexwheel import golden

#: what np.load and the metadata's parse raise on a truncated or damaged file
UNREADABLE = (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile, zlib.error)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--check", action="store_true", help="compare with the files, write nothing")
    args = parser.parse_args(argv)
    try:
        cases = [golden.case_named(n) for n in args.cases] if args.cases else list(golden.CASES)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    print(f"golden trajectories, {golden.versions()}")
    changed = 0
    for i, case in enumerate(cases, 1):
        start = time.perf_counter()
        trajectory = golden.record(case)
        if case.path.exists():
            try:
                meta, old = golden.load(case.path)
            except UNREADABLE as e:  # a damaged file counts as changed and is rewritten like one (not under --check)
                status = f"unreadable ({type(e).__name__}: {' '.join(str(e).split())})"
                status += "" if args.check else ": regenerated"
                changed += 1
            else:
                result = golden.compare(old, trajectory)
                status = result.summary()
                if meta.get("versions") != golden.versions():
                    status += f" (file made with {meta.get('versions')})"
                changed += not result.equal
        else:
            status, changed = "new", changed + 1
        if not args.check:
            golden.save(case, trajectory)
        size = case.path.stat().st_size / 1e3 if case.path.exists() else 0.0
        print(
            f"[{i}/{len(cases)}] {case.name}: {status} ({time.perf_counter() - start:.1f} s, {size:.0f} kB)", flush=True
        )
    known = {c.path.name for c in golden.CASES}
    for stale in sorted(p.name for p in golden.GOLDEN_DIR.glob("*.npz") if p.name not in known):
        print(f"stale file with no case: tests/golden/{stale} (delete it)")
    print(f"{changed} of {len(cases)} changed" + ("" if args.check else "; files written"))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
