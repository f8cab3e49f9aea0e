#!/usr/bin/env bash
# Rebuilds the sample TFRecord files from their sources with the tfrec CLI. The CLI's tests
# check that the committed .tfrecord files are exactly what this produces.
set -euo pipefail
cd "$(dirname "$0")"
tfrec() { if [ -n "${TFREC:-}" ]; then "$TFREC" "$@"; else cargo run -q --release -p tfrec-cli -- "$@"; fi; }
tfrec from-jsonl notebook.jsonl --types feature3=float -o notebook.tfrecord
tfrec from-text movie.txtpb -o movie.tfrecord
tfrec from-images images -o images.tfrecord
