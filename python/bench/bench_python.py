#!/usr/bin/env python3
"""Benchmarks of the Python package (BENCHMARKS.md, "Python package").

    python python/bench/bench_python.py bench/data/workload.jsonl [--runs 5]

Run with the release wheel installed (scripts/python-bench does it). Times,
on the batch benchmark workload (bench/gen_workload.py, 2,000 requests):

1. ``verify_many`` end to end: read the file, split it into lines (``str``),
   ``verify_many(lines, output="dict")``; and the call alone. Against the
   Python baseline of the seed's rule, ``bench/baseline_verify.py``, run as
   a subprocess on the same file (what a Python team runs today).
2. One ``verify`` call on a typical request (the workload's first
   answerable request with the median total size: 20 chunks of about 2 KB),
   JSON text in, JSON text out, against the Rust verifier called in the same
   process (``_native._time_verify``: parse, verify, serialize, in a Rust
   loop). Also ``output="dict"`` and ``output="model"`` (Pydantic), reported
   separately.

Prints a JSON report on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import groundcite
from groundcite import _native

ROOT = pathlib.Path(__file__).resolve().parents[2]


def timed(fn: Callable[[], Any], runs: int, warmup: int = 1) -> dict[str, float]:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"mean": statistics.mean(times), "median": statistics.median(times),
            "min": min(times), "max": max(times), "runs": runs}


def per_call(fn: Callable[[], Any], seconds: float = 1.0, repeats: int = 7) -> dict[str, float]:
    """Seconds per call: the median of `repeats` timed loops of ~`seconds`."""
    fn()
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < 0.2:
        fn()
        n += 1
    loops = max(1, int(n * seconds / 0.2))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter() - t0) / loops)
    return {"median": statistics.median(samples), "min": min(samples), "loops": loops}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline-runs", type=int, default=3)
    args = ap.parse_args()
    path = pathlib.Path(args.workload)
    report: dict[str, Any] = {"cores": os.cpu_count(), "python": sys.version.split()[0],
                              "groundcite": groundcite.__version__}

    # 1. verify_many vs the Python baseline.
    lines = path.read_text(encoding="utf-8").splitlines()

    def end_to_end() -> None:
        text = path.read_text(encoding="utf-8")
        out = groundcite.verify_many(text.splitlines(), output="dict")
        assert len(out) == 2000 or len(out) == len(lines)

    report["verify_many_end_to_end"] = timed(end_to_end, args.runs)
    report["verify_many_call_dicts"] = timed(
        lambda: groundcite.verify_many(lines, output="dict"), args.runs)
    report["verify_many_call_json"] = timed(
        lambda: groundcite.verify_many(lines, output="json"), args.runs)
    report["verify_many_call_dicts_jobs1"] = timed(
        lambda: groundcite.verify_many(lines, output="dict", jobs=1), args.runs)
    baseline = [sys.executable, str(ROOT / "bench/baseline_verify.py"), str(path)]
    report["python_baseline"] = timed(
        lambda: subprocess.run(baseline, check=True, stdout=subprocess.DEVNULL),
        args.baseline_runs, warmup=0)
    report["ratio_baseline_over_verify_many_end_to_end"] = (
        report["python_baseline"]["mean"] / report["verify_many_end_to_end"]["mean"])

    # 2. One typical request.
    requests = [json.loads(l) for l in lines]
    answerable = [r for r in requests if r["answer"]["answerable"]]
    answerable.sort(key=lambda r: len(json.dumps(r)))
    typical = answerable[len(answerable) // 2]
    answer = json.dumps(typical["answer"], ensure_ascii=False)
    chunks = json.dumps(typical["chunks"], ensure_ascii=False)
    report["typical_request"] = {
        "chunks": len(typical["chunks"]), "claims": len(typical["answer"]["claims"]),
        "answer_bytes": len(answer.encode()), "chunks_bytes": len(chunks.encode()),
    }
    rust = []
    for _ in range(7):
        rust.append(_native._time_verify(answer, chunks, 2000))
    report["verify_rust_in_process"] = {"median": statistics.median(rust), "min": min(rust)}
    report["verify_json"] = per_call(lambda: groundcite.verify(answer, chunks, output="json"))
    report["verify_dict"] = per_call(lambda: groundcite.verify(answer, chunks, output="dict"))
    report["verify_model"] = per_call(lambda: groundcite.verify(answer, chunks))
    report["ratio_verify_json_over_rust"] = (
        report["verify_json"]["median"] / report["verify_rust_in_process"]["median"])
    report["ratio_verify_model_over_rust"] = (
        report["verify_model"]["median"] / report["verify_rust_in_process"]["median"])
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
