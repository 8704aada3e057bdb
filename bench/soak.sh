#!/usr/bin/env bash
# Soak test: constant load on POST /v1/verify for a long time while sampling
# the server's resident memory, to catch leaks and unbounded caches.
#
#   bench/soak.sh                                  # groundcite, c=16, 600 s
#   TARGET=baseline DURATION=60 REF_AT=20 bench/soak.sh   # the FastAPI baseline, short
#
# Environment:
#   TARGET=groundcite|baseline   server to soak (groundcite)
#   CONCURRENCY=16               wrk connections
#   DURATION=600                 seconds of load
#   SAMPLE_EVERY=10              seconds between RSS samples
#   REF_AT=60                    the reference RSS is the first sample at or
#                                after this many seconds of load (warm caches,
#                                allocator arenas grown)
#   plus the wrk and server knobs of bench/serve_load.sh / bench/serve/lib.sh
#   (GC_SERVE_CMD, GC_ADDR, GC_BUILD, BASELINE_ADDR, BASELINE_WORKERS, ...).
#
# Output: bench/out/soak-rss.csv (elapsed_s,rss_kib: VmRSS from
# /proc/<pid>/status, summed over the server and its child processes), wrk
# output and server log in bench/out/soak-*.log, and a summary: requests,
# errors (non-2xx, socket errors, timeouts), first/reference/last/max RSS
# and a verdict: "flat" when the last RSS exceeds the reference by at most
# max(10%, 5 MiB) (shrinking is flat too), else "growing".
# Exit status 1 on any error or a "growing" verdict.
#
# Why: a verifier service holds no per-request state; its RSS must level off
# once warm. Growth under constant load means a leak (or a cache without a
# bound) that would eventually get the process killed.
set -euo pipefail

cd "$(dirname "$0")/.."

TARGET=${TARGET:-groundcite}
CONCURRENCY=${CONCURRENCY:-16}
DURATION=${DURATION:-600}
SAMPLE_EVERY=${SAMPLE_EVERY:-10}
REF_AT=${REF_AT:-60}
case $TARGET in
  groundcite | baseline) ;;
  *) echo "error: TARGET must be groundcite or baseline (got '$TARGET')" >&2; exit 2 ;;
esac

# shellcheck source=bench/serve/lib.sh
source bench/serve/lib.sh
GC_KEEP_LOGS=bench/out/soak-
WRK_PID=""
soak_cleanup() {
  if [ -n "$WRK_PID" ] && kill -0 "$WRK_PID" 2>/dev/null; then
    kill "$WRK_PID" 2>/dev/null || true
    wait "$WRK_PID" 2>/dev/null || true
  fi
  gc_cleanup
}
trap soak_cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p bench/out
gc_need wrk wrk
gc_payload
gc_wrk_script

if [ "$TARGET" = groundcite ]; then URL="http://$GC_ADDR"; else URL="http://$BASELINE_ADDR"; fi
"gc_start_$TARGET"
gc_smoke "$TARGET" "$URL"
PID=${GC_PIDS[$TARGET]}

CSV=bench/out/soak-rss.csv
echo "elapsed_s,rss_kib" > "$CSV"
gc_log "$TARGET (pid $PID): c=$CONCURRENCY for ${DURATION}s, RSS every ${SAMPLE_EVERY}s -> $CSV"

gc_wrk_run "$URL" "$CONCURRENCY" "$DURATION" > "$GC_TMP/wrk.log" &
WRK_PID=$!
t0=$SECONDS
next=0
while :; do
  elapsed=$((SECONDS - t0))
  if (( elapsed >= next )); then
    kill -0 "$PID" 2>/dev/null || { echo "error: $TARGET died during the soak" >&2; exit 1; }
    echo "$elapsed,$(gc_rss_kib "$PID")" >> "$CSV"
    next=$((next + SAMPLE_EVERY))
  fi
  kill -0 "$WRK_PID" 2>/dev/null || break
  sleep 1
done
wrk_rc=0
wait "$WRK_PID" || wrk_rc=$?
WRK_PID=""
kill -0 "$PID" 2>/dev/null || { echo "error: $TARGET died during the soak" >&2; exit 1; }
(( SECONDS - t0 == next - SAMPLE_EVERY )) || echo "$((SECONDS - t0)),$(gc_rss_kib "$PID")" >> "$CSV"
if (( wrk_rc != 0 )); then
  cat "$GC_TMP/wrk.log" >&2
  echo "error: wrk failed (exit $wrk_rc)" >&2
  exit 1
fi
gc_wrk_parse "$(cat "$GC_TMP/wrk.log")"

# Summary and verdict.
read -r first ref ref_t last max < <(awk -F, -v at="$REF_AT" '
  NR == 1 { next }
  NR == 2 { first = $2 }
  ref == "" && $1 >= at { ref = $2; ref_t = $1 }
  { last = $2; if ($2 > max) max = $2 }
  END { if (ref == "") { ref = last; ref_t = "end" } print first, ref, ref_t, last, max }' "$CSV")
verdict=$(awk -v r="$ref" -v l="$last" 'BEGIN {
  allow = r * 0.10; if (allow < 5120) allow = 5120
  print (l - r <= allow) ? "flat" : "growing" }')
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
if [ "$ref_t" = end ]; then
  echo "warning: no sample at or after ${REF_AT}s (DURATION too short); reference = last sample" >&2
fi

cat <<EOF
soak: $TARGET, c=$CONCURRENCY, ${DURATION}s, payload $(wc -c < "$GC_PAYLOAD") bytes
requests: $WRK_REQUESTS ($WRK_RPS req/s, p50 $WRK_P50_MS ms, p99 $WRK_P99_MS ms)
errors: $WRK_ERRORS
rss first: $(mib "$first")   after ${ref_t}s: $(mib "$ref")   last: $(mib "$last")   max: $(mib "$max")
verdict: $verdict (last vs reference, allowed growth max(10%, 5 MiB)); samples: $CSV
EOF

(( WRK_ERRORS == 0 )) || { echo "error: $WRK_ERRORS failed requests" >&2; exit 1; }
[ "$verdict" = flat ] || exit 1
