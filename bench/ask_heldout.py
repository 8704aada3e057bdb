#!/usr/bin/env python3
"""Issue 19's speed figures, one run, release build (BENCHMARKS.md, "Hybrid
retrieval and `ask` on held-out questions"):

1. index time of corpus/sample with and without sentence vectors (fresh
   index each time, median of RUNS);
2. `groundcite ask` wall time over the held-out suites' answerable
   questions, one fresh process each (model loads included), indexes built,
   default settings: the median and the spread;
3. retrieval latency per question (hybrid and BM25) from
   `eval --retrieval-only`.

Usage: bench/ask_heldout.py [RUNS]   (builds the release binary first)
Prints Markdown rows to paste into BENCHMARKS.md. Run on a quiet machine.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITES = ["lumen-bank", "northwind-handbook", "sqlite-docs"]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    subprocess.run(
        ["cargo", "build", "-q", "--release", "--locked", "-p", "groundcite-cli"],
        cwd=ROOT,
        check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    gc = str(target / "release" / "groundcite")
    work = Path(tempfile.mkdtemp(prefix="groundcite-bench-"))

    print("| index of corpus/sample | median wall time |")
    print("|---|---|")
    for mode in ["bm25", "hybrid"]:
        times = []
        for i in range(runs):
            d = work / f"sample-{mode}-{i}"
            s = time.perf_counter()
            subprocess.run(
                [gc, "index", "corpus/sample", "--index", str(d), "--retrieval", mode],
                cwd=ROOT, check=True, capture_output=True,
            )
            times.append(time.perf_counter() - s)
        print(f"| {mode} | {statistics.median(times):.2f} s |")

    walls = []
    answered_walls = []
    for suite in SUITES:
        idx = work / f"index-{suite}"
        subprocess.run(
            [gc, "index", f"corpus/{suite}", "--index", str(idx)],
            cwd=ROOT, check=True, capture_output=True,
        )
        cases = tomllib.loads((ROOT / "eval" / f"{suite}-heldout.toml").read_text())["cases"]
        for case in cases:
            if case["kind"] == "unanswerable":
                continue
            s = time.perf_counter()
            out = subprocess.run(
                [gc, "ask", case["question"], "--docs", f"corpus/{suite}",
                 "--index", str(idx), "--database", str(work / "traces.sqlite3"),
                 "--format", "json"],
                cwd=ROOT, check=True, capture_output=True,
            )
            walls.append(time.perf_counter() - s)
            if json.loads(out.stdout)["answerable"]:
                answered_walls.append(walls[-1])
        for mode in ["hybrid", "bm25"]:
            out = work / f"ret-{suite}-{mode}"
            subprocess.run(
                [gc, "eval", f"eval/{suite}-heldout.toml", "--index", str(idx),
                 "--out", str(out), "--no-progress", "--retrieval-only",
                 "--retrieval", mode],
                cwd=ROOT, check=True, capture_output=True,
            )
            v = json.loads((out / "results.json").read_text())["metrics"]["values"]
            print(f"| {suite} retrieval ({mode}) | p50 {v['latency_p50_ms']:.1f} ms | "
                  f"p95 {v['latency_p95_ms']:.1f} ms |")
    walls.sort()
    q = statistics.quantiles(walls, n=10)
    print(f"| ask wall time over {len(walls)} held-out answerable questions "
          f"| median {statistics.median(walls):.2f} s | "
          f"p10 {q[0]:.2f} s | p90 {q[-1]:.2f} s | max {walls[-1]:.2f} s |")
    print(f"| of which answered ({len(answered_walls)}) "
          f"| median {statistics.median(answered_walls):.2f} s | "
          f"min {min(answered_walls):.2f} s | max {max(answered_walls):.2f} s |")


if __name__ == "__main__":
    main()
