"""Differential test of `tfrec infer-schema` and `tfrec validate` against TFDV's `infer_schema`
and `validate_statistics` (issue 55), run in TFDV's environment.

    VENV/bin/python python/tfdv_oracle/schema_differential.py TFREC_COMMAND FIRST_SEED COUNT [WORK_DIR]

TFREC_COMMAND is the `tfrec` binary, or a command line (`"python -m tfrec"`).

For each seed: a random "train" file of Examples (features of every kind with a fixed or
varying number of values, always or sometimes present, strings from vocabularies of 1 to 150
words, some true/false or integer spellings, some not UTF-8; ints that are 0/1 or wide), then
an "eval" and a "serving" file made from it by one to three mutations: a feature dropped, a
feature added, a feature's kind changed, out-of-domain strings, more or fewer values per
example, lower presence, a shifted distribution (numbers moved, word frequencies reweighted).
Statistics of the three files come from `tfrec stats` (differential.py compares those with
TFDV's); then:
- the schema: `tfdv.infer_schema` and `tfrec infer-schema` on the train statistics (with
  `infer_feature_shape` and `max_string_domain_size` varying by seed) must be equal messages;
- the anomalies: drift and skew thresholds are set on some features of TFDV's schema
  (`infinity_norm` on strings, `jensen_shannon_divergence` on numbers), and
  `tfdv.validate_statistics(eval, schema, previous_statistics=train, serving_statistics=serving)`
  and `tfrec validate` must report the same anomaly types on the same features, and `tfrec
  validate` must exit 1 exactly when there are anomalies. Descriptions, drift/skew measurements
  and the whole messages are compared too and counted (a difference there is reported, and is
  a failure with TFDV_SCHEMA_DIFF_STRICT=1).

Prints one line per mismatch and a summary; exits 1 on any mismatch of schema or anomaly types.
"""

import os
import random
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from differential import write_examples  # noqa: E402  (after the path is set)

STRICT = os.environ.get("TFDV_SCHEMA_DIFF_STRICT") == "1"
BOOL_WORDS = [b"true", b"false"]
INT_WORDS = [b"12", b"-3", b"+7", b"0"]


def random_features(rng):
    """Feature plans: name -> dict(kind, valency (fixed int or None), presence, vocabulary or
    numeric range)."""
    features = {}
    for i in range(rng.randint(2, 7)):
        kind = rng.choice("ifb")
        plan = {
            "kind": kind,
            "valency": rng.choice([1, 1, 1, 2, 3, None]),
            "presence": rng.choice([1.0, 1.0, 1.0, 0.9, 0.6]),
        }
        if kind == "b":
            style = rng.random()
            if style < 0.1:
                plan["vocab"] = BOOL_WORDS[: rng.randint(1, 2)]
            elif style < 0.2:
                plan["vocab"] = INT_WORDS[: rng.randint(1, 4)]
            elif style < 0.25:
                plan["vocab"] = [b"ok", b"\xff\xfe"]
            else:
                plan["vocab"] = [b"w%d" % j for j in range(rng.choice([1, 2, 3, 5, 10, 40, 120, 150]))]
        elif kind == "i":
            plan["range"] = rng.choice([(0, 1), (0, 1), (-50, 50), (0, 10**6)])
        else:
            plan["mean"], plan["std"] = rng.uniform(-10, 10), rng.uniform(0.1, 5)
        features["f%d_%s" % (i, kind)] = plan
    return features


def values_of(rng, plan, shift=0.0):
    n = plan["valency"] if plan["valency"] is not None else rng.randint(0, 4)
    kind = plan["kind"]
    if kind == "b":
        vocab = plan["vocab"]
        weights = [(j + 1) ** plan.get("skew", 0.0) for j in range(len(vocab))]
        return ("b", rng.choices(vocab, weights=weights, k=n))
    if kind == "i":
        low, high = plan["range"]
        return ("i", [rng.randint(low, high) + int(shift * (high - low + 1)) for _ in range(n)])
    return ("f", [rng.gauss(plan["mean"] + shift * plan["std"] * 4, plan["std"]) for _ in range(n)])


def examples_of(rng, features, count, shift=0.0):
    examples = []
    for _ in range(count):
        ex = {}
        for name, plan in features.items():
            if rng.random() < plan["presence"]:
                ex[name] = values_of(rng, plan, shift=plan.get("shift", shift))
        examples.append(ex)
    return examples


def mutate(rng, features):
    """A copy of the plans with one to three mutations; returns (plans, what was done)."""
    features = {name: dict(plan) for name, plan in features.items()}
    done = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(sorted(features)) if features else None
        what = rng.choice(["drop", "add", "kind", "domain", "valency", "presence", "shift"])
        if name is None or what == "add":
            new = "new%d" % rng.randint(0, 99)
            features[new] = {"kind": "i", "valency": 1, "presence": 1.0, "range": (0, 9)}
            done.append("add %s" % new)
            continue
        plan = features[name]
        if what == "drop":
            del features[name]
        elif what == "kind":
            kind = {"i": "f", "f": "b", "b": "i"}[plan["kind"]]
            plan.update(kind=kind, vocab=[b"k0", b"k1"], range=(0, 5), mean=0.0, std=1.0)
        elif what == "domain" and plan["kind"] == "b":
            plan["vocab"] = list(plan["vocab"]) + [b"unseen%d" % j for j in range(rng.randint(1, 3))]
        elif what == "valency":
            plan["valency"] = rng.choice([0, 1, 2, 4, None])
        elif what == "presence":
            plan["presence"] = rng.choice([0.0, 0.3, 0.7])
        else:
            plan["shift"] = rng.choice([0.5, 1.0, 3.0])
            plan["skew"] = rng.choice([2.0, -2.0])
        done.append("%s %s" % (what, name))
    return features, done


def with_thresholds(rng, schema, train_stats):
    """TFDV's schema with drift and skew thresholds on some features."""
    kinds = {f.path.step[0]: f.type for f in train_stats.datasets[0].features}
    for feature in schema.feature:
        if rng.random() < 0.5:
            continue
        numeric = kinds.get(feature.name) in (0, 1)  # INT, FLOAT in the statistics
        for comparator in (feature.drift_comparator, feature.skew_comparator):
            if rng.random() < 0.3:
                continue
            threshold = rng.choice([0.01, 0.1, 0.3])
            if numeric and rng.random() < 0.8:
                comparator.jensen_shannon_divergence.threshold = threshold
            else:
                comparator.infinity_norm.threshold = threshold
    return schema


def run_tfrec(binary, args):
    return subprocess.run(shlex.split(binary) + args, capture_output=True, text=True)


def anomaly_types(anomalies):
    return {key: sorted(r.type for r in info.reason) for key, info in anomalies.anomaly_info.items()}


def main(argv):
    import tensorflow_data_validation as tfdv
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import anomalies_pb2, schema_pb2, statistics_pb2

    binary, first, count = argv[0], int(argv[1]), int(argv[2])
    work = argv[3] if len(argv) > 3 else tempfile.mkdtemp(prefix="tfdv-schema-diff-")
    os.makedirs(work, exist_ok=True)
    failures = schema_equal = types_equal = descriptions_equal = whole_equal = pairs = 0
    kinds_seen = set()

    def stats_of(examples, name):
        path = os.path.join(work, name + ".tfrecord")
        write_examples(path, examples)
        out = path + ".pb"
        ran = run_tfrec(binary, ["stats", path, "-o", out, "--threads", "1"])
        if ran.returncode != 0:
            raise RuntimeError("tfrec stats failed: " + ran.stderr.strip()[:300])
        stats = statistics_pb2.DatasetFeatureStatisticsList()
        with open(out, "rb") as f:
            stats.ParseFromString(f.read())
        return out, stats

    for seed in range(first, first + count):
        rng = random.Random(seed)
        plans = random_features(rng)
        train_path, train = stats_of(examples_of(rng, plans, rng.randint(20, 200)), "s%d-train" % seed)
        eval_plans, done = mutate(rng, plans)
        eval_path, evaluated = stats_of(examples_of(rng, eval_plans, rng.randint(20, 200)), "s%d-eval" % seed)
        serving_plans, _ = mutate(rng, plans)
        serving_path, serving = stats_of(examples_of(rng, serving_plans, rng.randint(20, 200)), "s%d-serving" % seed)
        pairs += 1
        problems = []

        infer_shape = rng.random() < 0.7
        max_domain = rng.choice([100, 100, 20, 3])
        expected = tfdv.infer_schema(train, infer_feature_shape=infer_shape, max_string_domain_size=max_domain)
        args = ["infer-schema", train_path, "--max-string-domain-size", str(max_domain)]
        ran = run_tfrec(binary, args + ([] if infer_shape else ["--no-infer-feature-shape"]))
        if ran.returncode != 0:
            problems.append("infer-schema failed: " + ran.stderr.strip()[:300])
        else:
            ours = text_format.Parse(ran.stdout, schema_pb2.Schema())
            if ours == expected:
                schema_equal += 1
            else:
                problems.append("schemas differ:\n--- TFDV\n%s--- tfrec\n%s" % (expected, ours))

        schema = with_thresholds(rng, expected, train)
        schema_path = os.path.join(work, "s%d-schema.pbtxt" % seed)
        tfdv.write_schema_text(schema, schema_path)
        want = tfdv.validate_statistics(evaluated, schema, previous_statistics=train, serving_statistics=serving)
        ran = run_tfrec(binary, ["validate", eval_path, "--schema", schema_path, "--previous", train_path,
                                 "--serving", serving_path])
        if ran.returncode not in (0, 1):
            problems.append("validate failed: " + ran.stderr.strip()[:300])
        else:
            got = text_format.Parse(ran.stdout, anomalies_pb2.Anomalies())
            if (ran.returncode == 1) != bool(want.anomaly_info):
                problems.append("exit status %d with %d anomalies" % (ran.returncode, len(want.anomaly_info)))
            if anomaly_types(got) == anomaly_types(want):
                types_equal += 1
                for info in want.anomaly_info.values():
                    kinds_seen.update(anomalies_pb2.AnomalyInfo.Type.Name(r.type) for r in info.reason)
            else:
                problems.append("anomaly types differ (%s): TFDV %s, tfrec %s"
                                % ("; ".join(done), anomaly_types(want), anomaly_types(got)))
            same_text = all(got.anomaly_info[k].description == v.description
                            for k, v in want.anomaly_info.items() if k in got.anomaly_info)
            descriptions_equal += same_text
            whole_equal += got == want
            if got != want:
                want.ClearField("baseline")
                got.ClearField("baseline")
                note = "messages differ (%s):\n--- TFDV\n%s--- tfrec\n%s" % ("; ".join(done), want, got)
                if STRICT:
                    problems.append(note)
                else:
                    print("seed %d: note: %s" % (seed, note))
        for p in problems:
            print("seed %d: %s" % (seed, p))
        failures += bool(problems)

    print("seeds %d-%d: %d pairs; schemas equal %d; anomaly types equal %d; descriptions equal %d; "
          "whole Anomalies equal %d; anomaly types seen: %s; pairs failing: %d"
          % (first, first + count - 1, pairs, schema_equal, types_equal, descriptions_equal, whole_equal,
             ", ".join(sorted(kinds_seen)), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
