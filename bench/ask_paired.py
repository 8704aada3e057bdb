#!/usr/bin/env python3
"""`groundcite ask` wall time of two builds, paired question by question
(BENCHMARKS.md, "Prompt prefix cache"): each held-out answerable question is
asked once by each binary, one fresh process each, in alternating order, over
the same index and the same cache directory, so the host's drift falls on
both alike.

    bench/ask_paired.py OLD_BIN NEW_BIN [SUITE ...]

SUITE names eval/SUITE.toml (default: the first three held-out suites, the
questions the earlier `ask` figures were measured on). Build OLD_BIN from
another commit into its own target directory, for example:

    git worktree add /tmp/old 9835cfa
    (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target cargo build --release -p groundcite-cli)
    bench/ask_paired.py /tmp/old-target/release/groundcite target/release/groundcite

Prints the medians and the median of the per-question ratio NEW / OLD.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST = ["lumen-bank-heldout", "northwind-handbook-heldout", "sqlite-docs-heldout"]


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bins = {"old": sys.argv[1], "new": sys.argv[2]}
    suites = sys.argv[3:] or FIRST
    work = Path(tempfile.mkdtemp(prefix="groundcite-paired-"))
    # One cache directory for both (each keeps its own prefix state: the
    # key names the build); the models are reached through it.
    cache = work / "cache"
    cache.mkdir()
    models = Path(os.environ.get("GROUNDCITE_MODELS",
                                 Path.home() / ".cache" / "groundcite" / "models"))
    (cache / "models").symlink_to(models)
    env = dict(os.environ, GROUNDCITE_CACHE_DIR=str(cache))
    walls = {b: [] for b in bins}
    answered = {b: [] for b in bins}
    indexed: dict[str, Path] = {}
    for suite in suites:
        doc = tomllib.loads((ROOT / "eval" / f"{suite}.toml").read_text())
        corpus = os.path.normpath(os.path.join("eval", doc["corpus"]["docs"]))
        if corpus not in indexed:
            indexed[corpus] = work / f"index-{len(indexed)}"
            subprocess.run([bins["new"], "index", corpus, "--index", str(indexed[corpus])],
                           cwd=ROOT, env=env, check=True, capture_output=True)
        cases = [c for c in doc["cases"] if c["kind"] != "unanswerable"]
        for n, case in enumerate(cases):
            for b in (["old", "new"] if n % 2 == 0 else ["new", "old"]):
                s = time.perf_counter()
                out = subprocess.run(
                    [bins[b], "ask", case["question"], "--docs", corpus,
                     "--index", str(indexed[corpus]),
                     "--database", str(work / f"traces-{b}.sqlite3"), "--format", "json"],
                    cwd=ROOT, env=env, check=True, capture_output=True,
                )
                walls[b].append(time.perf_counter() - s)
                answered[b].append(json.loads(out.stdout)["answerable"])
    for b in bins:
        a = [w for w, ok in zip(walls[b], answered[b]) if ok]
        print(f"| {b} | all {len(walls[b])}: median {statistics.median(walls[b]):.2f} s | "
              f"answered {len(a)}: median {statistics.median(a):.2f} s |")
    both = [n / o for n, o, x, y in zip(walls["new"], walls["old"], answered["new"], answered["old"])
            if x and y]
    print(f"| new / old, per question answered by both ({len(both)}) | "
          f"median {statistics.median(both):.3f} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
