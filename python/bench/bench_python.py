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
   loop), timed in alternating rounds by the thread's CPU time. Also ``output="dict"`` and ``output="model"`` (Pydantic), reported
   separately.

Prints a JSON report on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import groundcite
from groundcite import _native

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn: Callable[[], Any], runs: int, warmup: int = 1) -> dict[str, float]:
    """Wall-clock statistics, and the mean CPU time (all threads): on a
    shared machine the CPU time is the steadier figure."""
    for _ in range(warmup):
        fn()
    times, cpu = [], []
    for _ in range(runs):
        c0, t0 = cpu_seconds(), time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(cpu_seconds() - c0)
    return {"mean": statistics.mean(times), "median": statistics.median(times),
            "min": min(times), "max": max(times), "cpu": statistics.mean(cpu), "runs": runs}


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
    for name in ("verify_many_call_dicts", "verify_many_call_json", "verify_many_end_to_end"):
        report[f"ratio_baseline_over_{name}"] = {
            "wall_mean": report["python_baseline"]["mean"] / report[name]["mean"],
            "cpu": report["python_baseline"]["cpu"] / report[name]["cpu"],
        }
    report["ratio_baseline_over_verify_many_end_to_end_wall"] = (
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
    # Rust and Python timed in alternation, 2,000 calls each per round, so
    # that both see the same machine; the ratio is the median of the rounds'.
    # CPU time of this thread (the Rust loop runs on it too, GIL released):
    # other tenants of a shared machine stretch wall time, not CPU time.
    def loop(fn: Callable[[], Any], n: int) -> float:
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        return (time.thread_time() - t0) / n

    def rust_loop(n: int) -> float:
        t0 = time.thread_time()
        _native._time_verify(answer, chunks, n)
        return (time.thread_time() - t0) / n

    n = 2000
    py_forms = {
        "verify_json": lambda: groundcite.verify(answer, chunks, output="json"),
        "verify_dict": lambda: groundcite.verify(answer, chunks, output="dict"),
        "verify_model": lambda: groundcite.verify(answer, chunks),
    }
    rounds: dict[str, list[float]] = {"verify_rust_in_process": [], **{k: [] for k in py_forms}}
    for fn in py_forms.values():
        loop(fn, 200)
    for _ in range(7):
        rust = rust_loop(n)
        rounds["verify_rust_in_process"].append(rust)
        for name, fn in py_forms.items():
            rounds[name].append(loop(fn, n) / rust)
    report["verify_rust_in_process"] = {
        "median_s": statistics.median(rounds["verify_rust_in_process"]),
        "min_s": min(rounds["verify_rust_in_process"]),
    }
    for name in py_forms:
        report[f"ratio_{name}_over_rust"] = {
            "median": statistics.median(rounds[name]), "min": min(rounds[name]),
            "max": max(rounds[name]),
        }
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
