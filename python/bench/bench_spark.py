#!/usr/bin/env python3
"""Spark local-mode throughput of groundcite.spark.verify_table
(BENCHMARKS.md, "Python package").

    python python/bench/bench_spark.py bench/data/workload.jsonl [--cores 1 2] [--runs 3]

Writes the workload as Parquet (line, request), then for each core count
starts a local[N] session and times reading the table, verifying it
(mapInArrow over verify_many, one thread per task) and writing the
contracts as Parquet. Prints rows/s and rows/s per core as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from groundcite.spark import verify_table


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--cores", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    lines = pathlib.Path(args.workload).read_text(encoding="utf-8").splitlines()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="groundcite-spark-bench"))
    table = tmp / "requests.parquet"
    pq.write_table(pa.table({"line": pa.array(range(1, len(lines) + 1), pa.int64()),
                             "request": pa.array(lines, pa.string())}), table, row_group_size=250)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    report: dict[str, object] = {"rows": len(lines)}
    for cores in args.cores:
        spark = (SparkSession.builder.master(f"local[{cores}]").appName("groundcite-bench")
                 .config("spark.ui.enabled", "false")
                 .config("spark.sql.execution.arrow.maxRecordsPerBatch", "250")
                 .config("spark.sql.files.maxPartitionBytes", str(8 << 20))
                 .getOrCreate())
        times = []
        for run in range(args.runs + 1):
            out = tmp / f"out-{cores}-{run}"
            t0 = time.perf_counter()
            verify_table(spark.read.parquet(str(table)), key="line").write.parquet(str(out))
            if run > 0:  # the first run warms up the JVM and the Python workers
                times.append(time.perf_counter() - t0)
        spark.stop()
        med = statistics.median(times)
        report[f"local[{cores}]"] = {"median_s": med, "min_s": min(times), "rows_per_s": len(lines) / med,
                                     "rows_per_s_per_core": len(lines) / med / cores}
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
