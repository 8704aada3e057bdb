#!/usr/bin/env python3
"""Issue 19's speed figures, one run, release build (BENCHMARKS.md, "Hybrid
retrieval and `ask` on held-out questions"):

1. index time of corpus/sample with and without sentence vectors (fresh
   index each time, median of RUNS);
2. `groundcite ask` wall time over every held-out suite's answerable
   questions (eval/*-heldout*.toml, each over its own corpus), one fresh
   process each (model loads included), indexes built, default settings:
   the median and the spread, per suite and pooled;
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
# Every held-out suite (eval/*-heldout.toml, eval/*-heldoutN.toml), each over
# the corpus its [corpus] docs names; one index per corpus.
SUITES = sorted(
    p.stem for p in (ROOT / "eval").glob("*-heldout*.toml")
)
# The three suites the first figures (before 2026-12-03) were measured on.
FIRST = {"lumen-bank-heldout", "northwind-handbook-heldout", "sqlite-docs-heldout"}


def corpus_of(suite: str) -> tuple[dict, str]:
    doc = tomllib.loads((ROOT / "eval" / f"{suite}.toml").read_text())
    docs = doc["corpus"]["docs"]
    return doc, os.path.normpath(os.path.join("eval", docs))


def spread(label: str, xs: list[float]) -> str:
    xs = sorted(xs)
    if len(xs) < 2:
        return f"| {label} ({len(xs)}) | n/a | |"
    q = statistics.quantiles(xs, n=10)
    return (f"| {label} ({len(xs)}) | median {statistics.median(xs):.2f} s | "
            f"p10 {q[0]:.2f} s, p90 {q[-1]:.2f} s, max {xs[-1]:.2f} s |")


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

    walls: dict[str, list[float]] = {}
    answered: dict[str, list[float]] = {}
    indexed: dict[str, Path] = {}
    for suite in SUITES:
        doc, corpus = corpus_of(suite)
        if corpus not in indexed:
            idx = work / f"index-{len(indexed)}"
            subprocess.run(
                [gc, "index", corpus, "--index", str(idx)],
                cwd=ROOT, check=True, capture_output=True,
            )
            indexed[corpus] = idx
        idx = indexed[corpus]
        walls[suite], answered[suite] = [], []
        for case in doc["cases"]:
            if case["kind"] == "unanswerable":
                continue
            s = time.perf_counter()
            out = subprocess.run(
                [gc, "ask", case["question"], "--docs", corpus,
                 "--index", str(idx), "--database", str(work / "traces.sqlite3"),
                 "--format", "json"],
                cwd=ROOT, check=True, capture_output=True,
            )
            walls[suite].append(time.perf_counter() - s)
            if json.loads(out.stdout)["answerable"]:
                answered[suite].append(walls[suite][-1])

    # Retrieval latency last: `eval --retrieval bm25` leaves the index
    # without sentence vectors, and the next hybrid `ask` would embed the
    # whole corpus again.
    for corpus, idx in indexed.items():
        suite = next(x for x in SUITES if corpus_of(x)[1] == corpus)
        for mode in ["hybrid", "bm25"]:
            out = work / f"ret-{suite}-{mode}"
            subprocess.run(
                [gc, "eval", f"eval/{suite}.toml", "--index", str(idx),
                 "--out", str(out), "--no-progress", "--retrieval-only",
                 "--retrieval", mode],
                cwd=ROOT, check=True, capture_output=True,
            )
            v = json.loads((out / "results.json").read_text())["metrics"]["values"]
            print(f"| {corpus} retrieval ({mode}) | p50 {v['latency_p50_ms']:.1f} ms | "
                  f"p95 {v['latency_p95_ms']:.1f} ms |")

    def pooled(d: dict[str, list[float]], pick) -> list[float]:
        return [x for k, xs in d.items() if pick(k) for x in xs]

    print()
    print("| held-out answerable questions, one fresh `ask` each | median | spread |")
    print("|---|---|---|")
    for suite in SUITES:
        print(spread(suite, walls[suite]))
    for label, pick in [("the first three suites", lambda k: k in FIRST),
                        ("the later suites", lambda k: k not in FIRST),
                        ("all", lambda k: True)]:
        print(spread(f"{label}: all", pooled(walls, pick)))
        print(spread(f"{label}: answered", pooled(answered, pick)))


if __name__ == "__main__":
    main()
