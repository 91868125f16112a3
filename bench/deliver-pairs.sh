#!/usr/bin/env bash
# Delivery capacity of two builds, measured back to back in alternating pairs (docs/performance.md, Webhook delivery
# capacity): the `deliver` row only, so a busy machine's drift hits both builds alike.
#   bench/deliver-pairs.sh <base tree> <candidate tree> [pairs=3] [extra bench options...]
# Each tree must be built (npm ci && npm run build). Prints one line per run and leaves each run's JSON in $OUT_DIR.
set -euo pipefail
base=$(cd "$1" && pwd); candidate=$(cd "$2" && pwd); pairs=${3:-3}; shift $(( $# < 3 ? $# : 3 )); extra=("$@")
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/deliver-pairs.XXXXXX)}; mkdir -p "$OUT_DIR"
run() { # <label> <tree> <pair>
  local out="$OUT_DIR/$1-$3.json"
  (cd "$2" && node dist/bench/run.js --only deliver --workers 1 --small-licenses 1000 --small-audit 0 --out "$out" "${extra[@]}" >"$OUT_DIR/$1-$3.log" 2>&1)
  printf '%s pair %s (%s, load %s): %s\n' "$1" "$3" "$(git -C "$2" rev-parse --short HEAD)" "$(cut -d' ' -f1 /proc/loadavg)" \
    "$(grep -o 'webhook delivery capacity: {.*}' "$OUT_DIR/$1-$3.log" || echo 'no result, see the log')"
}
for i in $(seq 1 "$pairs"); do
  # Alternate which build goes first, so neither always runs on the warmer or the quieter half of a pair.
  if (( i % 2 )); then run base "$base" "$i"; run candidate "$candidate" "$i"; else run candidate "$candidate" "$i"; run base "$base" "$i"; fi
done
echo "logs and results: $OUT_DIR"
