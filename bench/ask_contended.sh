#!/usr/bin/env bash
# `groundcite ask` wall time on a host shared with other work, under
# libgomp's wait settings (BENCHMARKS.md, "`ask` on a host shared with
# other work"). Each question is asked by a fresh process; HOGS busy-loop
# processes (default 0 1 2) keep cores taken while a row runs.
#
#   bench/ask_contended.sh [GROUNDCITE_BIN] [HOGS...]
#
# Uses corpus/lumen-bank and its index in a temporary folder (built first).
# Prints one line per question: hogs, setting, seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
GC=${1:-${CARGO_TARGET_DIR:-target}/release/groundcite}
shift || true
[ $# -gt 0 ] && HOGS=("$@") || HOGS=(0 1 2)
[ -x "$GC" ] || { echo "ask_contended: $GC is missing; build with --release first" >&2; exit 1; }
WORK=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
"$GC" index corpus/lumen-bank --index "$WORK/index" >/dev/null
QS=("how long till a replacement card shows up?"
    "can i take cash out abroad for free"
    "whats the daily limit on contactless"
    "how do i stop my card while i look for it")
ask() { # SETTING ENV... -- ARGS...
  local label=$1; shift
  local envs=() args=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  args=("$@")
  for q in "${QS[@]}"; do
    local t0 t1
    t0=$(date +%s.%N)
    env "${envs[@]}" timeout 180 "$GC" ask "$q" --docs corpus/lumen-bank --index "$WORK/index" \
      --no-trace --format json "${args[@]}" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    printf '%s hogs  %-24s %6.2f s\n' "$hogs" "$label" "$(echo "$t1 - $t0" | bc)"
  done
}
for hogs in "${HOGS[@]}"; do
  pids=()
  for _ in $(seq 1 "$hogs"); do (while :; do :; done) & pids+=($!); done
  ask default X=1 --
  ask "OMP_WAIT_POLICY=passive" OMP_WAIT_POLICY=passive --
  ask "GOMP_SPINCOUNT=10000" GOMP_SPINCOUNT=10000 --
  ask "--threads 1" X=1 -- --threads 1
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
done
