#!/usr/bin/env bash
# What a single client (c=1) can get at best: where one POST /v1/verify's
# time goes, against the FastAPI baseline, in one run.
#
#   GC_BUILD=0 bench/serve_floor.sh          # after cargo build --release -p groundcite-cli --bins
#   D=10 ROUNDS=2 bench/serve_floor.sh
#
# Rows, per round, all at one connection:
#   - GET /healthz on groundcite: the HTTP round trip with wrk on the same
#     machine (no body, no auth, no store): the floor of any request.
#   - POST /v1/verify on groundcite with its SQLite file on tmpfs
#     (/dev/shm: the disk sync costs nothing) and on disk (as served; the
#     difference is the durable commit's disk cost).
#   - POST /v1/verify on the FastAPI baseline storing the same traces
#     (bench/serve/lib.sh: a file in TMPDIR, on disk, unless BASELINE_TRACE_DB).
# Then bench/serve/sync_probe.py --all times the disk alone: the ~7 WAL
# frames of one trace (two pwrite each) and fsync, in TMPDIR and in
# /dev/shm, and the cheaper ways to make as much durable, down to one 4 KiB
# O_DIRECT|O_DSYNC write (the least any durable commit can cost here).
#
# Why: at c=1 every request waits for its own fsync; no group commit can
# share it. If the disk's sync plus the HTTP round trip exceed a tenth of
# the baseline's whole request, no durable server reaches 10x there.
set -euo pipefail
cd "$(dirname "$0")/.."

D=${D:-10}
ROUNDS=${ROUNDS:-2}
# shellcheck source=bench/serve/lib.sh
source bench/serve/lib.sh
trap gc_cleanup EXIT
trap 'exit 130' INT TERM
SHM_DB=/dev/shm/groundcite-floor-$$.sqlite3
trap 'rm -f "$SHM_DB"*; gc_cleanup' EXIT

gc_need wrk wrk
gc_payload
gc_wrk_script

start_gc() { # name addr database-path
  GC_ADDR=$2 GC_SERVE_CMD="target/release/groundcite serve --no-model --addr \"\$GC_ADDR\" --database \"sqlite://$3\" --api-keys-file \"\$GC_KEYS_FILE\"" \
    gc_start_groundcite
  GC_PIDS[$1]=${GC_PIDS[groundcite]}
  unset 'GC_PIDS[groundcite]'
}
start_gc disk "$GC_ADDR" "$GC_TMP/load.sqlite3"
SHM_ADDR=${SHM_ADDR:-127.0.0.1:8789}
start_gc shm "$SHM_ADDR" "$SHM_DB"
gc_start_baseline
declare -A URL=([disk]="http://$GC_ADDR" [shm]="http://$SHM_ADDR" [baseline]="http://$BASELINE_ADDR")
for s in disk shm baseline; do
  gc_smoke "$s" "${URL[$s]}"
  gc_wrk "${URL[$s]}" 8 3 # warm-up
done

hz=$(getconf CLK_TCK)
per_req() { awk -v t="$1" -v hz="$hz" -v n="$2" 'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e6 / n; else printf "n/a" }'; }
{
  echo "c=1, ${D}s per row; $(nproc) CPUs"
  echo
  echo "| round | request | req/s | p50 | p99 | server CPU µs/req |"
  echo "|---|---|---:|---:|---:|---:|"
  for r in $(seq 1 "$ROUNDS"); do
    t0=$(gc_cpu_ticks "${GC_PIDS[disk]}")
    out=$(wrk -t1 -c1 -d"${D}s" --latency "http://$GC_ADDR/healthz")
    t1=$(gc_cpu_ticks "${GC_PIDS[disk]}")
    n=$(awk '/requests in/ {print $1}' <<<"$out")
    echo "| $r | groundcite GET /healthz | $(awk '/Requests\/sec/ {print $2}' <<<"$out") | $(awk '$1=="50%" {print $2}' <<<"$out") | $(awk '$1=="99%" {print $2}' <<<"$out") | $(per_req $((t1 - t0)) "$n") |"
    for s in shm disk baseline; do
      t0=$(gc_cpu_ticks "${GC_PIDS[$s]}")
      gc_wrk "${URL[$s]}" 1 "$D"
      t1=$(gc_cpu_ticks "${GC_PIDS[$s]}")
      echo "| $r | POST /v1/verify, $s | $WRK_RPS | ${WRK_P50_MS} ms | ${WRK_P99_MS} ms | $(per_req $((t1 - t0)) "$WRK_REQUESTS") |"
    done
  done
  echo
  python3 bench/serve/sync_probe.py "$GC_TMP/probe.bin" 3000 --all
  python3 bench/serve/sync_probe.py "/dev/shm/groundcite-probe-$$.bin" 3000 --all
} | tee bench/out/serve_floor.md
