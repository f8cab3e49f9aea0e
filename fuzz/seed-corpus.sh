#!/usr/bin/env bash
# Seeds each fuzz target's corpus from the golden vectors (testdata/golden, or
# $TFREC_GOLDEN_DIR). The corpora are not committed: they are copies of test data.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
golden=${TFREC_GOLDEN_DIR:-$here/../testdata/golden}
mkdir -p "$here/corpus/record_reader"
for f in "$golden"/records/*; do
  case "$f" in *.json) continue ;; esac
  # Large files slow fuzzing without adding coverage: keep the first 64 KiB.
  head -c 65536 "$f" > "$here/corpus/record_reader/$(basename "$f")"
done
# Messages: every serialized message of the golden cases, and their text format.
mkdir -p "$here/corpus/example_decoder" "$here/corpus/text_parser" "$here/corpus/parse_example" "$here/corpus/parse_spec" "$here/corpus/parse_paths"
python3 - "$golden" "$here/corpus" <<'PY'
import base64, hashlib, json, sys
golden, corpus = sys.argv[1], sys.argv[2]
def put(target, data):
    name = hashlib.sha1(data).hexdigest()[:16]
    open(f"{corpus}/{target}/{name}", "wb").write(data)
for line in open(f"{golden}/parse_cases.jsonl"):
    records = [base64.b64decode(s) for s in json.loads(line)["serialized"]]
    for r in records:
        put("example_decoder", r)
    # A parse_example input is a batch: records joined by 0xfe.
    put("parse_example", b"\xfe".join(records))
    # A parse_paths input is the same batch, each record after its two-byte length.
    put("parse_paths", b"".join(len(r).to_bytes(2, "little") + r for r in records if len(r) < 65536))
    # A parse_spec input is the case's spec JSON, 0xff, then the batch.
    case = json.loads(line)
    if "features" in case:
        spec = case["features"]
    else:
        spec = {k: case[k] for k in ("context_features", "sequence_features") if k in case}
    put("parse_spec", json.dumps(spec).encode() + b"\xff" + b"\xfe".join(records))
for line in open(f"{golden}/text_format.jsonl"):
    case = json.loads(line)
    put("example_decoder", base64.b64decode(case["serialized"]))
    put("text_parser", case["text_format"].encode())
PY
for t in record_reader example_decoder text_parser parse_example parse_spec parse_paths; do
  echo "seeded: $(ls "$here/corpus/$t" | wc -l) $t inputs"
done
# Seek indexes: of the golden GZIP and ZLIB files, with checkpoints as close as they go. The
# golden set holds damaged compressed files too, which have no index (tfrec index says why and
# fails); they are left out, and at least one index must come of the others.
mkdir -p "$here/corpus/seek_index"
for f in "$golden"/records/*.gz "$golden"/records/*.zz; do
  [ -e "$f" ] || continue
  cargo run -q --manifest-path "$here/../Cargo.toml" -p tfrec-cli -- index --spacing 32768 \
    -o "$here/corpus/seek_index/$(basename "$f").zidx" "$f" >/dev/null 2>&1 \
    || echo "not seeded: $(basename "$f") (damaged: tfrec index refuses it)"
done
n=$(ls "$here/corpus/seek_index" | grep -c '\.zidx$' || true)
echo "seeded: $n seek_index inputs"
[ "$n" -gt 0 ] || { echo "no seek index could be made of the golden compressed files" >&2; exit 1; }
# Statistics inputs: the statistics of the golden record files, binary and as text.
mkdir -p "$here/corpus/stats_inputs"
for f in "$golden"/records/*.tfrecord; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  cargo run -q --manifest-path "$here/../Cargo.toml" -p tfrec-cli -- stats --skip-corrupt \
    -o "$here/corpus/stats_inputs/$name.pb" "$f" >/dev/null 2>&1 || continue
  cargo run -q --manifest-path "$here/../Cargo.toml" -p tfrec-cli -- stats --skip-corrupt --text \
    -o "$here/corpus/stats_inputs/$name.pbtxt" "$f" >/dev/null 2>&1 || true
done
echo "seeded: $(ls "$here/corpus/stats_inputs" | wc -l) stats_inputs inputs"
# Parquet files: the golden record files and the bundled samples converted, each whole (a
# footer is read from the end).
mkdir -p "$here/corpus/parquet_footer"
for f in "$golden"/records/*.tfrecord "$here"/../samples/*.tfrecord; do
  [ -e "$f" ] || continue
  cargo run -q --manifest-path "$here/../Cargo.toml" -p tfrec-cli -- convert --skip-corrupt \
    -o "$here/corpus/parquet_footer/$(basename "$f").parquet" "$f" >/dev/null 2>&1 || true
done
n=$(ls "$here/corpus/parquet_footer" | wc -l)
echo "seeded: $n parquet_footer inputs"
[ "$n" -gt 0 ] || { echo "no golden record file converted to Parquet" >&2; exit 1; }
