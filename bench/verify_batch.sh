#!/usr/bin/env bash
# Benchmark: `groundcite verify --batch` against a plain-Python baseline of the
# same rule (bench/baseline_verify.py) and against a bare serde_json parse of
# the same input (crates/groundcite-cli/examples/parse_only.rs).
#
#   bench/verify_batch.sh            # default workload: 2,000 requests x 20 chunks x ~2 KB
#
# Environment knobs (the workload is regenerated when they change):
#   REQUESTS=2000 CHUNKS=20 CHUNK_BYTES=2048 SEED=20260   workload shape
#   WARMUP=1 RUNS=10                                      hyperfine runs per command
#   AGREE_LINES=200                                       lines checked for agreement
#
# Steps: generate bench/data/workload.jsonl if missing; build release; check
# that groundcite and the baseline agree on the first AGREE_LINES requests
# (exit 1 on the first disagreement); time the three commands in one
# hyperfine run (JSON in bench/out/); print python/groundcite and
# groundcite/parse ratios. Targets: >= 15x faster than Python, <= 3x the
# bare parse.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

REQUESTS=${REQUESTS:-2000}
CHUNKS=${CHUNKS:-20}
CHUNK_BYTES=${CHUNK_BYTES:-2048}
SEED=${SEED:-20260}
WARMUP=${WARMUP:-1}
RUNS=${RUNS:-10}
AGREE_LINES=${AGREE_LINES:-200}

DATA=bench/data
OUT=bench/out
WORKLOAD=$DATA/workload.jsonl
PARAMS="requests=$REQUESTS chunks=$CHUNKS chunk_bytes=$CHUNK_BYTES seed=$SEED"
mkdir -p "$DATA" "$OUT"

# 1. Workload ---------------------------------------------------------------
if [[ ! -s $WORKLOAD || "$(cat "$WORKLOAD.params" 2>/dev/null)" != "$PARAMS" ]]; then
    echo "==> generating $WORKLOAD ($PARAMS)"
    python3 bench/gen_workload.py --requests "$REQUESTS" --chunks "$CHUNKS" \
        --chunk-bytes "$CHUNK_BYTES" --seed "$SEED" --out "$WORKLOAD.tmp"
    mv "$WORKLOAD.tmp" "$WORKLOAD"
    echo "$PARAMS" > "$WORKLOAD.params"
fi
echo "==> workload: $WORKLOAD ($PARAMS; $(wc -l < "$WORKLOAD") lines, $(du -m "$WORKLOAD" | cut -f1) MiB)"

# 2. Build ------------------------------------------------------------------
echo "==> cargo build --release -p groundcite-cli --examples --bins"
cargo build --release -p groundcite-cli --examples --bins
GC=target/release/groundcite
PARSE=target/release/examples/parse_only
if ! "$GC" verify --help 2>/dev/null | grep -q -- '--batch'; then
    echo "error: $GC has no 'verify --batch'" >&2
    exit 1
fi

# Timings are meaningless while another build or test run competes for the CPUs.
waited=0
while pgrep -x rustc >/dev/null || pgrep -x cargo >/dev/null; do
    if (( waited == 0 )); then echo "==> waiting for other cargo/rustc processes to finish ..."; fi
    if (( waited >= 1800 )); then echo "warning: still busy after 30 min; timing anyway" >&2; break; fi
    sleep 5
    waited=$((waited + 5))
done

# 3. Agreement --------------------------------------------------------------
echo "==> agreement check on the first $AGREE_LINES requests"
head -n "$AGREE_LINES" "$WORKLOAD" > "$OUT/agree-input.jsonl"
# --claims lenient: the baseline has no quantity check (see compare_contracts.py).
"$GC" verify --claims lenient --batch "$OUT/agree-input.jsonl" > "$OUT/agree-groundcite.jsonl"
python3 bench/baseline_verify.py "$OUT/agree-input.jsonl" > "$OUT/agree-python.jsonl"
python3 bench/compare_contracts.py "$OUT/agree-groundcite.jsonl" "$OUT/agree-python.jsonl"

# 4. Timing -----------------------------------------------------------------
command -v hyperfine >/dev/null || (apt-get update && apt-get install -y hyperfine) || true
CMD_GC="$GC verify --batch $WORKLOAD > /dev/null"
CMD_GC1="$GC verify --batch $WORKLOAD --jobs 1 > /dev/null"
CMD_PY="python3 bench/baseline_verify.py $WORKLOAD > /dev/null"
CMD_PARSE="$PARSE $WORKLOAD"
RESULT=$OUT/verify_batch.json

if command -v hyperfine >/dev/null; then
    echo "==> hyperfine (warmup $WARMUP, runs $RUNS)"
    hyperfine --warmup "$WARMUP" --runs "$RUNS" --export-json "$RESULT" \
        --export-markdown "$OUT/verify_batch.md" \
        -n groundcite "$CMD_GC" \
        -n python "$CMD_PY" \
        -n parse_only "$CMD_PARSE" \
        -n "groundcite --jobs 1" "$CMD_GC1"
else
    echo "==> hyperfine unavailable; timing with a Python loop (warmup $WARMUP, runs $RUNS)"
    python3 - "$RESULT" "$WARMUP" "$RUNS" \
        groundcite "$CMD_GC" python "$CMD_PY" parse_only "$CMD_PARSE" "groundcite --jobs 1" "$CMD_GC1" <<'EOF'
import json, os, resource, statistics, subprocess, sys, time
out, warmup, runs, rest = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
results = []
for name, cmd in zip(rest[::2], rest[1::2]):
    for _ in range(warmup):
        subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL)
    times, users, systems = [], [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        users.append(r1.ru_utime - r0.ru_utime)
        systems.append(r1.ru_stime - r0.ru_stime)
    print(f"{name:22s} {statistics.mean(times):8.3f} s ± {statistics.pstdev(times):.3f}")
    results.append({"command": name, "mean": statistics.mean(times), "stddev": statistics.pstdev(times),
                    "median": statistics.median(times), "min": min(times), "max": max(times),
                    "user": statistics.mean(users), "system": statistics.mean(systems), "times": times})
json.dump({"results": results}, open(out, "w"), indent=2)
EOF
fi

# 5. Ratios -----------------------------------------------------------------
python3 - "$RESULT" <<'EOF'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
gc, py, parse, gc1 = res["groundcite"], res["python"], res["parse_only"], res["groundcite --jobs 1"]
cpu = lambda r: r["user"] + r["system"]
print()
print(f"{'command':22s} {'mean':>8s} {'± sd':>7s} {'median':>8s} {'min':>8s} {'cpu u+s':>8s}")
for name in ("groundcite", "groundcite --jobs 1", "python", "parse_only"):
    r = res[name]
    print(f"{name:22s} {r['mean']:7.3f}s {r['stddev']:6.3f}s {r['median']:7.3f}s {r['min']:7.3f}s {cpu(r):7.3f}s")
r1 = py["mean"] / gc["mean"]
r2 = gc["mean"] / parse["mean"]
print()
print(f"python / groundcite      = {r1:6.2f}x   (target >= 15x)  {'OK' if r1 >= 15 else 'MISSED'}")
print(f"groundcite / parse_only  = {r2:6.2f}x   (target <= 3x)   {'OK' if r2 <= 3 else 'MISSED'}")
print(f"  by median:     python / groundcite = {py['median'] / gc['median']:.2f}x, "
      f"groundcite / parse_only = {gc['median'] / parse['median']:.2f}x")
print(f"  single-thread: python / groundcite --jobs 1 = {py['mean'] / gc1['mean']:.2f}x, "
      f"groundcite --jobs 1 / parse_only = {gc1['mean'] / parse['mean']:.2f}x")
print(f"  cpu time:      python / groundcite = {cpu(py) / cpu(gc):.2f}x, "
      f"groundcite / parse_only = {cpu(gc) / cpu(parse):.2f}x")
EOF
