#!/usr/bin/env bash
# Indexing at scale on one machine (BENCHMARKS.md, "Indexing documents"):
# N documents made from real text (Debian's manuals) in five formats, indexed
# without and with sentence embeddings; peak memory by /usr/bin/time.
#
#   bench/index_scale.sh                 # N=10000 without embeddings, N_EMBED=500 with
#   N=2000 N_EMBED=200 bench/index_scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-10000}"
N_EMBED="${N_EMBED:-500}"
OUT="bench/out/index_scale"
TARGET="${CARGO_TARGET_DIR:-target}"
mkdir -p "$OUT"

REAL="$(scripts/fetch-real-docs)"
TEXTS=(
  "$REAL/debian-reference-en/usr/share/debian-reference/debian-reference.en.txt"
  "$REAL/developers-reference/usr/share/developers-reference/developers-reference.txt"
  "$REAL/debian-policy/usr/share/doc/debian-policy/policy.txt"
)

cargo build --release -p groundcite-index --example gen_corpus
cargo build --release -p groundcite-ask --example index_scale

run() { # name, documents, extra flags
  local corpus="$OUT/corpus-$2"
  [[ -d "$corpus" ]] || "$TARGET/release/examples/gen_corpus" "$corpus" "$2" "${TEXTS[@]}"
  /usr/bin/time -v -o "$OUT/$1.time" "$TARGET/release/examples/index_scale" "$corpus" "$OUT/work-$1" ${3:-} |
    tee "$OUT/$1.md"
  grep -E "Maximum resident|Elapsed" "$OUT/$1.time"
}

echo "== without embeddings, N=$N"
run bm25 "$N"
echo "== with embeddings, N=$N_EMBED"
run embed "$N_EMBED" --embed
