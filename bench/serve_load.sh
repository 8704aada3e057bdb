#!/usr/bin/env bash
# Load benchmark: the groundcite service's POST /v1/verify against a FastAPI
# baseline of the same endpoint (bench/serve/fastapi_verify.py, which runs
# the plain-Python verifier bench/baseline_verify.py).
#
#   bench/serve_load.sh                      # both servers, c = 1 8 32 64, 15 s each
#   ONLY=baseline DURATION=5 bench/serve_load.sh
#   GC_SERVE_CMD='target/release/groundcite serve --addr "$GC_ADDR" ...' bench/serve_load.sh
#
# Environment:
#   ONLY=both|groundcite|baseline   which servers to load (both)
#   CONCURRENCY="1 8 32 64"         wrk connections, one run each
#   DURATION=15                     seconds per run
#   WARMUP=3                        seconds of unrecorded load per server first
#   WRK_THREADS=2 WRK_TIMEOUT=10    wrk threads (capped at the concurrency), request timeout (s)
#   plus the server knobs of bench/serve/lib.sh (GC_SERVE_CMD, GC_ADDR,
#   GC_BUILD, BASELINE_ADDR, BASELINE_WORKERS, BASELINE_TRACE_DB (default: the
#   baseline stores traces in a temporary file; `none`: it stores nothing),
#   HEALTH_TIMEOUT, PAYLOAD_LINE,
#   DISTINCT: rotate through that many distinct requests, UNIQUE=1: no chunk
#   ever sent twice).
#
# Steps: install wrk if missing (apt); pick a typical request of
# bench/data/workload.jsonl (generated as bench/verify_batch.sh does when
# missing); start the selected servers on loopback with a random API key and
# wait for GET /healthz; smoke-check each (401 without the key, 200 and a
# contract with it); warm each up; then for each concurrency and server run wrk (--latency,
# a Lua script POSTing the payload with `Authorization: Bearer <key>` and
# counting non-2xx responses). Prints a markdown table (server, concurrency,
# req/s, p50, p99, errors, server CPU time per request) and, with both
# servers, the groundcite/baseline
# req/s ratio per concurrency; also written to bench/out/serve_load.md
# (wrk output and server logs: bench/out/serve_load-*.log). Exit status 1 if
# any request failed (non-2xx, socket error or timeout). Both servers are
# killed on exit.
#
# Why: the batch benchmark (bench/verify_batch.sh) measures the verifier
# alone; this one measures what a client sees over HTTP, auth and JSON
# included, against the service a Python team would otherwise deploy.
# On a small machine wrk and the server share the CPUs: compare ratios, not
# absolute numbers, and keep other work off the machine while it runs.
set -euo pipefail

cd "$(dirname "$0")/.."

ONLY=${ONLY:-both}
CONCURRENCY=${CONCURRENCY:-1 8 32 64}
DURATION=${DURATION:-15}
WARMUP=${WARMUP:-3}
case $ONLY in
  both) SERVERS="groundcite baseline" ;;
  groundcite | baseline) SERVERS=$ONLY ;;
  *) echo "error: ONLY must be both, groundcite or baseline (got '$ONLY')" >&2; exit 2 ;;
esac

# shellcheck source=bench/serve/lib.sh
source bench/serve/lib.sh
GC_KEEP_LOGS=bench/out/serve_load-
trap gc_cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p bench/out
gc_need wrk wrk
gc_payload
gc_wrk_script

declare -A URL=([groundcite]="http://$GC_ADDR" [baseline]="http://$BASELINE_ADDR")
for s in $SERVERS; do
  "gc_start_$s"
  gc_smoke "$s" "${URL[$s]}"
done

declare -A RPS=() ROW=()
failed=0
for s in $SERVERS; do
  if (( WARMUP > 0 )); then
    gc_log "$s: warm-up ${WARMUP}s at c=8"
    gc_wrk "${URL[$s]}" 8 "$WARMUP"
  fi
done
# Interleaved (each concurrency, then each server): the machine's speed
# drifts over minutes on a shared host, and a ratio should compare runs
# made close together.
for c in $CONCURRENCY; do
  for s in $SERVERS; do
    gc_log "$s: c=$c for ${DURATION}s"
    ticks0=$(gc_cpu_ticks "${GC_PIDS[$s]}")
    gc_wrk "${URL[$s]}" "$c" "$DURATION"
    ticks1=$(gc_cpu_ticks "${GC_PIDS[$s]}")
    RPS[$s,$c]=$WRK_RPS
    (( WRK_ERRORS == 0 )) || failed=1
    # Server CPU (user + system, all threads) per request: steadier than
    # req/s on a machine whose speed drifts, and what a change saves.
    cpu=$(awk -v t="$((ticks1 - ticks0))" -v hz="$(getconf CLK_TCK)" -v n="$WRK_REQUESTS" \
      'BEGIN { if (n > 0) printf "%.0f", t / hz * 1e6 / n; else printf "n/a" }')
    ROW[$s,$c]="| $s | $c | $WRK_RPS | $WRK_P50_MS | $WRK_P99_MS | $WRK_ERRORS | $cpu |"
    kill -0 "${GC_PIDS[$s]}" 2>/dev/null || { echo "error: $s died during the run" >&2; exit 1; }
  done
done
rows=()
for s in $SERVERS; do
  for c in $CONCURRENCY; do
    rows+=("${ROW[$s,$c]}")
  done
done

{
  echo "POST /v1/verify; payload $(wc -c < "$GC_PAYLOAD") bytes; ${DURATION}s per run; $(nproc) CPUs; baseline workers: $BASELINE_WORKERS"
  echo
  echo "| server | concurrency | req/s | p50 (ms) | p99 (ms) | errors | server CPU µs/req |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  if [ "$ONLY" = both ]; then
    echo
    echo "| concurrency | groundcite/baseline req/s |"
    echo "|---:|---:|"
    for c in $CONCURRENCY; do
      awk -v c="$c" -v g="${RPS[groundcite,$c]}" -v b="${RPS[baseline,$c]}" \
        'BEGIN { if (b > 0) printf "| %s | %.1fx |\n", c, g / b; else printf "| %s | n/a |\n", c }'
    done
  fi
} | tee bench/out/serve_load.md

if (( failed )); then
  echo "error: some requests failed (non-2xx, socket errors or timeouts); see bench/out/serve_load-wrk.log" >&2
  exit 1
fi
