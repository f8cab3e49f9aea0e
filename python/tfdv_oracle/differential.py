"""Differential test of `tfrec stats` against TFDV (issue 55), run in TFDV's environment.

    VENV/bin/python python/tfdv_oracle/differential.py TFREC_COMMAND FIRST_SEED COUNT [WORK_DIR]

TFREC_COMMAND is the `tfrec` binary, or a command line (`"python -m tfrec"`).

For each seed: a random TFRecord file of Examples (every kind, missing features, empty lists,
features with no kind set, NaN and infinities, non-UTF-8 bytes, extreme ints, repeated
strings), TFDV's `generate_statistics_from_tfrecord` and `tfrec stats` on it, compared field by
field: counts and types exact; mean, std_dev, min, max, median, avg_length and histogram
bounds and counts within 1e-9 relative (scaled by the feature's magnitude, where numpy's own
rounding of extreme ints dominates); quantiles histograms equal (exact below the sketch's
buffer); top values, unique and rank histograms equal. Seeds whose data TFDV refuses (a kind
that changes) must make tfrec fail too. Prints one line per mismatch and a summary; exits 1
on any mismatch. With TFDV_DIFF_LARGE=1 the files hold thousands of examples, so that the
quantiles sketches compress. With TFDV_DIFF_SEQUENCE=1 the files hold SequenceExamples (context
features as above; feature lists missing, empty, with steps of no kind, empty steps, and in
10 % of the seeds a step of another kind), TFDV's statistics are those of tfx_bsl's
`TFSequenceExampleRecord` through `tfdv.GenerateStatistics` (as TFX's StatisticsGen computes
them for SequenceExamples), tfrec's those of `tfrec stats --kind sequence`; the comparison adds
`presence_and_valency_stats`, the `##SEQUENCE##` struct and the per-level custom histograms.
"""

import math
import os
import random
import shlex
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

#: TFDV_DIFF_LARGE=1: files of thousands of examples (see `random_examples`).
LARGE = os.environ.get("TFDV_DIFF_LARGE") == "1"
#: TFDV_DIFF_SEQUENCE=1: files of SequenceExamples (see `random_sequence_examples`).
SEQUENCE = os.environ.get("TFDV_DIFF_SEQUENCE") == "1"
#: Records per batch of TFDV's SequenceExample source: more than a file holds, so one batch.
SEQUENCE_BATCH = 100_000

EXTREME_INTS = [0, 1, -1, 2**63 - 1, -(2**63), 2**53 + 1, -(2**31)]
#: The extremes of feature-list ints: tfx_bsl 1.16.1's SequenceExample decoder keeps only the
#: low 32 bits of an int64 in a feature list (sign-extended: 2**60 + 7 decodes as 7), so
#: TFDV's figures of larger ints there are wrong; tfrec keeps the values.
EXTREME_INTS_32 = [0, 1, -1, 2**31 - 1, -(2**31)]
SPECIAL_FLOATS = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 3.4e38, -1.5e-45]
WORDS = [b"a", b"bb", b"cat", b"dog", b"", b"\xff\xfe", b"caf\xc3\xa9", b"\x80", b"zz", b"x" * 40]


def random_examples(rng, large=False):
    """A list of Examples (as dicts name -> (kind, values) or None for a kind-less feature);
    `large`: thousands of examples, so that the quantiles sketches compress (past 11,402
    values of a feature)."""
    n_features = rng.randint(1, 7)
    features = {}
    for i in range(n_features):
        kind = rng.choice("ifb")
        features["f%d_%s" % (i, kind)] = kind
    change_kind = rng.random() < 0.1
    examples = []
    for _ in range(rng.randint(5000, 9000) if large else rng.randint(0, 60)):
        ex = {}
        for name, kind in features.items():
            r = rng.random()
            if r < 0.2:
                continue  # missing
            if r < 0.25:
                ex[name] = None  # Feature() with no kind
                continue
            n = rng.choice([0, 1, 1, 2, 3, 5, rng.randint(0, 20 if large else 40)])
            if change_kind and rng.random() < 0.05:
                kind = {"i": "f", "f": "b", "b": "i"}[kind]
            ex[name] = (kind, random_values(rng, kind, n))
        examples.append(ex)
    return examples


def random_values(rng, kind, n, extreme_ints=EXTREME_INTS):
    """`n` values of `kind` ("i", "f", "b"), extremes and odd bytes among them."""
    if kind == "i":
        return [rng.choice(extreme_ints) if rng.random() < 0.1 else rng.randint(-1000, 1000) for _ in range(n)]
    if kind == "f":
        return [rng.choice(SPECIAL_FLOATS) if rng.random() < 0.05 else rng.gauss(0, 100) for _ in range(n)]
    return [rng.choice(WORDS) if rng.random() < 0.7 else bytes(rng.randrange(256) for _ in range(rng.randint(0, 6))) for _ in range(n)]


def random_sequence_examples(rng, large=False):
    """A list of SequenceExamples as (context, feature_lists): the context as `random_examples`
    gives an Example, the feature lists as dicts name -> list of steps, each step (kind,
    values) or None for a step with no kind set. Lists missing, empty (no steps), steps with no
    kind, empty steps; in 10 % of the seeds a step whose kind differs from its list's; in 5 %
    no feature list at all."""
    contexts = random_examples(rng, large)
    n_lists = 0 if rng.random() < 0.05 else rng.randint(1, 4)
    lists = {"l%d_%s" % (i, k): k for i, k in ((i, rng.choice("ifb")) for i in range(n_lists))}
    change_kind = rng.random() < 0.1
    records = []
    for context in contexts:
        feature_lists = {}
        for name, kind in lists.items():
            r = rng.random()
            if r < 0.2:
                continue  # missing
            steps = []
            for _ in range(0 if r < 0.3 else rng.randint(1, 12 if large else 6)):
                if rng.random() < 0.1:
                    steps.append(None)  # Feature() with no kind
                    continue
                step_kind = kind
                if change_kind and rng.random() < 0.05:
                    step_kind = {"i": "f", "f": "b", "b": "i"}[kind]
                n = rng.choice([0, 1, 1, 2, 3, rng.randint(0, 8)])
                steps.append((step_kind, random_values(rng, step_kind, n, EXTREME_INTS_32)))
            feature_lists[name] = steps
        records.append((context, feature_lists))
    return records


def to_feature(value):
    """A tf.train.Feature of (kind, values), or one with no kind set for None."""
    import tensorflow as tf

    if value is None:
        return tf.train.Feature()
    kind, values = value
    if kind == "i":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    if kind == "f":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def write_examples(path, examples):
    import tensorflow as tf

    with tf.io.TFRecordWriter(path) as writer:
        for ex in examples:
            feature = {name: to_feature(value) for name, value in ex.items()}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


def write_sequence_examples(path, records):
    import tensorflow as tf

    with tf.io.TFRecordWriter(path) as writer:
        for context, feature_lists in records:
            se = tf.train.SequenceExample()
            for name, value in context.items():
                se.context.feature[name].CopyFrom(to_feature(value))
            for name, steps in feature_lists.items():
                fl = se.feature_lists.feature_list[name]
                for step in steps:
                    fl.feature.append(to_feature(step))
            writer.write(se.SerializeToString())


def tfdv_sequence_statistics(path):
    """TFDV's statistics of a file of SequenceExamples: tfx_bsl's `TFSequenceExampleRecord`
    (no schema) into `tfdv.GenerateStatistics`, as TFX's StatisticsGen runs it, in one batch
    (see `tfrec::stats::sequence` on batches)."""
    import apache_beam as beam
    import tensorflow_data_validation as tfdv
    from tfx_bsl.public import tfxio

    out = os.path.join(tempfile.mkdtemp(prefix="tfdv-seq-"), "stats.tfrecord")
    source = tfxio.TFSequenceExampleRecord(file_pattern=path, schema=None, telemetry_descriptors=["tfrec"])
    with beam.Pipeline() as p:
        _ = (p | source.BeamSource(SEQUENCE_BATCH)
             | tfdv.GenerateStatistics(tfdv.StatsOptions())
             | tfdv.WriteStatisticsToTFRecord(out))
    return tfdv.load_statistics(out)


def close(a, b, scale):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), scale)


def compare(tfdv_stats, ours, report):
    """Field-by-field comparison of two DatasetFeatureStatisticsList; calls report(text) per
    difference."""
    if len(tfdv_stats.datasets) != len(ours.datasets):
        report("datasets: %d vs %d" % (len(tfdv_stats.datasets), len(ours.datasets)))
        return
    for d_tfdv, d_ours in zip(tfdv_stats.datasets, ours.datasets):
        if d_tfdv.num_examples != d_ours.num_examples:
            report("num_examples %d vs %d" % (d_tfdv.num_examples, d_ours.num_examples))
        # Matched by path: TFDV lists features in the order its decoder's maps iterate (protobuf
        # C++ map order, not reproducible); tfrec sorts them by name.
        by_path = {tuple(f.path.step): f for f in d_ours.features}
        names_tfdv = sorted(tuple(f.path.step) for f in d_tfdv.features)
        if names_tfdv != sorted(by_path):
            report("features %s vs %s" % (names_tfdv, sorted(by_path)))
            continue
        for f_tfdv in d_tfdv.features:
            f_ours = by_path[tuple(f_tfdv.path.step)]
            compare_feature(f_tfdv, f_ours, lambda text, f=f_tfdv: report("%s: %s" % ("/".join(f.path.step), text)))


def compare_histogram(h_tfdv, h_ours, scale, report, what):
    if h_tfdv.type != h_ours.type or h_tfdv.num_nan != h_ours.num_nan or h_tfdv.num_undefined != h_ours.num_undefined:
        report("%s: type/num_nan %s/%s vs %s/%s" % (what, h_tfdv.type, h_tfdv.num_nan, h_ours.type, h_ours.num_nan))
    if len(h_tfdv.buckets) != len(h_ours.buckets):
        report("%s: %d buckets vs %d" % (what, len(h_tfdv.buckets), len(h_ours.buckets)))
        return
    for i, (a, b) in enumerate(zip(h_tfdv.buckets, h_ours.buckets)):
        if not (close(a.low_value, b.low_value, scale) and close(a.high_value, b.high_value, scale)
                and close(a.sample_count, b.sample_count, 1.0)):
            report("%s bucket %d: %s vs %s" % (what, i, (a.low_value, a.high_value, a.sample_count),
                                                 (b.low_value, b.high_value, b.sample_count)))


def compare_common(c_tfdv, c_ours, report):
    for field in ["num_non_missing", "num_missing", "min_num_values", "max_num_values", "tot_num_values"]:
        if getattr(c_tfdv, field) != getattr(c_ours, field):
            report("%s %s vs %s" % (field, getattr(c_tfdv, field), getattr(c_ours, field)))
    if c_tfdv.avg_num_values != c_ours.avg_num_values:
        report("avg_num_values %r vs %r" % (c_tfdv.avg_num_values, c_ours.avg_num_values))
    compare_histogram(c_tfdv.num_values_histogram, c_ours.num_values_histogram, 1.0, report, "num_values_histogram")
    if list(c_tfdv.presence_and_valency_stats) != list(c_ours.presence_and_valency_stats):
        report("presence_and_valency_stats %s vs %s" % (
            [str(p).replace("\n", " ") for p in c_tfdv.presence_and_valency_stats],
            [str(p).replace("\n", " ") for p in c_ours.presence_and_valency_stats]))


def compare_feature(f_tfdv, f_ours, report):
    if f_tfdv.type != f_ours.type:
        report("type %s vs %s" % (f_tfdv.type, f_ours.type))
    if f_tfdv.WhichOneof("stats") != f_ours.WhichOneof("stats"):
        report("stats %s vs %s" % (f_tfdv.WhichOneof("stats"), f_ours.WhichOneof("stats")))
        return
    if f_tfdv.HasField("num_stats"):
        a, b = f_tfdv.num_stats, f_ours.num_stats
        compare_common(a.common_stats, b.common_stats, report)
        scale = max(abs(x) for x in [a.min, a.max, 1.0] if math.isfinite(x))
        for field in ["mean", "std_dev", "min", "max", "median"]:
            if not close(getattr(a, field), getattr(b, field), scale):
                report("%s %r vs %r" % (field, getattr(a, field), getattr(b, field)))
        if a.num_zeros != b.num_zeros:
            report("num_zeros %d vs %d" % (a.num_zeros, b.num_zeros))
        if len(a.histograms) != len(b.histograms):
            report("%d histograms vs %d" % (len(a.histograms), len(b.histograms)))
        for i, (h_a, h_b) in enumerate(zip(a.histograms, b.histograms)):
            compare_histogram(h_a, h_b, scale, report, "histogram %d" % i)
    elif f_tfdv.HasField("string_stats"):
        a, b = f_tfdv.string_stats, f_ours.string_stats
        compare_common(a.common_stats, b.common_stats, report)
        for field in ["unique", "invalid_utf8_count"]:
            if getattr(a, field) != getattr(b, field):
                report("%s %s vs %s" % (field, getattr(a, field), getattr(b, field)))
        if a.avg_length != b.avg_length:
            report("avg_length %r vs %r" % (a.avg_length, b.avg_length))
        if [(t.value, t.frequency) for t in a.top_values] != [(t.value, t.frequency) for t in b.top_values]:
            report("top_values differ")
        if a.rank_histogram != b.rank_histogram:
            report("rank_histogram differs")
    elif f_tfdv.HasField("struct_stats"):
        compare_common(f_tfdv.struct_stats.common_stats, f_ours.struct_stats.common_stats, report)
    names = [c.name for c in f_tfdv.custom_stats]
    if names != [c.name for c in f_ours.custom_stats]:
        report("custom_stats %s vs %s" % (names, [c.name for c in f_ours.custom_stats]))
        return
    for c_tfdv, c_ours in zip(f_tfdv.custom_stats, f_ours.custom_stats):
        if c_tfdv.WhichOneof("val") == "histogram" and c_ours.WhichOneof("val") == "histogram":
            compare_histogram(c_tfdv.histogram, c_ours.histogram, 1.0, report, c_tfdv.name)
        elif c_tfdv != c_ours:
            report("custom_stats %s differs" % c_tfdv.name)


def main(argv):
    import tensorflow_data_validation as tfdv
    from tensorflow_metadata.proto.v0 import statistics_pb2

    binary, first, count = argv[0], int(argv[1]), int(argv[2])
    work = argv[3] if len(argv) > 3 else tempfile.mkdtemp(prefix="tfdv-diff-")
    os.makedirs(work, exist_ok=True)
    mismatches = refused = compared = 0
    for seed in range(first, first + count):
        path = os.path.join(work, "%sseed%d.tfrecord" % ("seq-" if SEQUENCE else "", seed))
        if SEQUENCE:
            write_sequence_examples(path, random_sequence_examples(random.Random(seed), large=LARGE))
        else:
            write_examples(path, random_examples(random.Random(seed), large=LARGE))
        out = path + ".tfrec.pb"
        kind = ["--kind", "sequence" if SEQUENCE else "example"]
        ran = subprocess.run(shlex.split(binary) + ["stats", path, "-o", out, "--threads", "1"] + kind,
                             capture_output=True, text=True)
        try:
            if SEQUENCE:
                expected = tfdv_sequence_statistics(path)
            else:
                expected = tfdv.generate_statistics_from_tfrecord(data_location=path)
        except Exception as error:  # TFDV refuses the data: tfrec must refuse it too
            refused += 1
            if ran.returncode == 0:
                mismatches += 1
                print("seed %d: TFDV failed (%s) but tfrec succeeded" % (seed, str(error).splitlines()[-1][:120]))
            continue
        if ran.returncode != 0:
            mismatches += 1
            print("seed %d: tfrec failed: %s" % (seed, ran.stderr.strip()[:300]))
            continue
        ours = statistics_pb2.DatasetFeatureStatisticsList()
        with open(out, "rb") as f:
            ours.ParseFromString(f.read())
        problems = []
        compare(expected, ours, problems.append)
        compared += 1
        for p in problems:
            print("seed %d: %s" % (seed, p))
        mismatches += bool(problems)
    print("%sseeds %d-%d: compared %d, refused by TFDV %d, seeds with mismatches %d"
          % ("SequenceExample " if SEQUENCE else "", first, first + count - 1, compared, refused, mismatches))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
