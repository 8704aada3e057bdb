#!/usr/bin/env bash
# Wall time of `groundcite ask` on the sample corpus (index already built,
# as on every run after the first), and the embedded model's token rates.
# Usage: bench/ask.sh [RUNS]   (default 3 runs of each of 5 questions)
# Run on a quiet machine; prints lines to paste into BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
profile=${PROFILE:-dev}
cargo build -q -p groundcite-cli --profile "$profile"
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
bin=${CARGO_TARGET_DIR:-target}/$dir/groundcite
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" index corpus/sample --index "$work/index" >/dev/null
questions=(
  "How long does standard shipping take?"
  "How long is a prepaid return label valid?"
  "Do gift cards expire?"
  "How much is the deposit to rent a kayak?"
  "What are the opening hours of your store in Tokyo?"
)
all=()
for q in "${questions[@]}"; do
  times=()
  for _ in $(seq "$runs"); do
    s=$(date +%s.%N)
    "$bin" ask "$q" --docs corpus/sample --index "$work/index" --database "$work/t.sqlite3" --format json >/dev/null 2>&1
    e=$(date +%s.%N)
    times+=("$(python3 -c "print($e - $s)")")
  done
  med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  all+=("$med")
  printf '| %s | %.2f s |\n' "$q" "$med"
done
printf '%s\n' "${all[@]}" | sort -n | awk '{a[NR]=$1} END {printf "| median over the questions | %.2f s |\n", a[int((NR+1)/2)]}'
