#!/usr/bin/env bash
# Seeds each fuzz target's corpus from the golden vectors (../shared/golden, or
# $TFREC_GOLDEN_DIR). The corpora are not committed: they are copies of shared data.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
golden=${TFREC_GOLDEN_DIR:-$here/../../shared/golden}
mkdir -p "$here/corpus/record_reader"
for f in "$golden"/records/*; do
  case "$f" in *.json) continue ;; esac
  # Large files slow fuzzing without adding coverage: keep the first 64 KiB.
  head -c 65536 "$f" > "$here/corpus/record_reader/$(basename "$f")"
done
echo "seeded: $(ls "$here/corpus/record_reader" | wc -l) record_reader inputs"
