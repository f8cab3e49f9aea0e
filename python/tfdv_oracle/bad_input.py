"""Bad input of issue 55, TFDV against `tfrec stats`, run in TFDV's environment.

    VENV/bin/python python/tfdv_oracle/bad_input.py TFREC_COMMAND WORK_DIR [CASE ...]

Each case writes one TFRecord file with TensorFlow, then runs
`tfdv.generate_statistics_from_tfrecord` and `tfrec stats` on it: where TFDV gives statistics,
tfrec's must be equal field by field (`differential.compare`); where TFDV refuses the file,
tfrec must refuse it too, with an error naming the file. Prints one line per case (`case NAME:
equal`, `case NAME: both refuse; tfrec: ...`, or what differs) and exits 1 when a case differs.
The cases (all by default):

- `empty_file`: no record at all;
- `empty_lists`: features present with empty lists of each kind, beside values;
- `no_kind`: a feature whose kind is never set;
- `nan_inf`: floats with NaN, +inf and -inf, a feature of NaN only, one of infinities only;
- `non_utf8`: strings that are not UTF-8 among ones that are;
- `kind_change`: a feature int in one record and float in another (TFDV refuses);
- `many_values`: a record of 300,000 floats and 100,000 strings (20,000 distinct) among
  small ones, past the quantiles sketch's exact range;
- `wide`: 1,500 features of every kind;
- `damaged`: a record whose data CRC fails: TFDV refuses the file, so does tfrec by default;
  with `--skip-corrupt` tfrec's statistics equal TFDV's of the file without that record (the
  damage counts tfrec adds aside).
"""

import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from differential import compare, write_examples  # noqa: E402

NAN, INF = float("nan"), float("inf")


def examples(case):
    """The examples of a case: dicts of name -> (kind, values), or None for no kind."""
    if case == "empty_file":
        return []
    if case == "empty_lists":
        return [{"i": ("i", []), "f": ("f", []), "b": ("b", [])},
                {"i": ("i", [1, 2]), "f": ("f", []), "b": ("b", [b"x"])},
                {"i": ("i", []), "f": ("f", [])}]
    if case == "no_kind":
        return [{"none": None, "i": ("i", [1])}, {"none": None}, {"i": ("i", [3])}]
    if case == "nan_inf":
        return [{"f": ("f", [NAN, 1.5, -2.0]), "nan": ("f", [NAN]), "inf": ("f", [INF, -INF])},
                {"f": ("f", [INF, 0.0, -0.0]), "nan": ("f", [NAN, NAN]), "inf": ("f", [INF])},
                {"f": ("f", [-INF, 3.25]), "nan": ("f", [])}]
    if case == "non_utf8":
        return [{"s": ("b", [b"\xff\xfe", b"cat", b"caf\xc3\xa9"])}, {"s": ("b", [b"\x80", b"cat", b""])},
                {"s": ("b", [b"\xc3", b"\xff\xfe"])}]
    if case == "kind_change":
        return [{"k": ("i", [1])}, {"k": ("i", [2])}, {"k": ("f", [1.5])}]
    if case == "many_values":
        big = {"x": ("f", [((i * 7919) % 100003) / 7.0 for i in range(300_000)]),
               "s": ("b", [b"w%d" % (i % 20_000) for i in range(100_000)])}
        return [{"x": ("f", [1.0]), "s": ("b", [b"a"])}, big, {"x": ("f", [NAN, 2.5])}]
    if case == "wide":
        rows = []
        for r in range(4):
            row = {}
            for i in range(1500):
                kind = "ifb"[i % 3]
                value = {"i": [r * i], "f": [r / (i + 1.0)], "b": [b"v%d" % ((r + i) % 3)]}[kind]
                if (r + i) % 5:
                    row["f%04d" % i] = (kind, value)
            rows.append(row)
        return rows
    if case == "damaged":
        return [{"n": ("i", [i]), "s": ("b", [b"w%d" % (i % 4)])} for i in range(20)]
    raise ValueError("unknown case %r" % case)


CASES = ["empty_file", "empty_lists", "no_kind", "nan_inf", "non_utf8", "kind_change", "many_values", "wide",
         "damaged"]


def damage(path, index):
    """Flips a byte of record `index`'s data (its data CRC then fails); gives the path of the
    same file without that record."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    records, at = [], 0
    while at < len(data):
        length = int.from_bytes(data[at:at + 8], "little")
        records.append((at, 16 + length))
        at += 16 + length
    start, size = records[index]
    intact = path + ".intact"
    with open(intact, "wb") as f:
        f.write(bytes(data[:start] + data[start + size:]))
    data[start + 12 + 1] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bytes(data))
    return intact


def tfrec_stats(command, path, out, *extra):
    return subprocess.run(shlex.split(command) + ["stats", path, "-o", out, "--threads", "1", "--kind", "example",
                                                  *extra], capture_output=True, text=True)


def main(argv):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow_data_validation as tfdv
    from tensorflow_metadata.proto.v0 import statistics_pb2

    command, work, cases = argv[0], argv[1], argv[2:] or CASES
    os.makedirs(work, exist_ok=True)

    def load(path):
        stats = statistics_pb2.DatasetFeatureStatisticsList()
        with open(path, "rb") as f:
            stats.ParseFromString(f.read())
        return stats

    def differences(expected, ours):
        problems = []
        compare(expected, ours, problems.append)
        return problems

    failed = 0
    for case in cases:
        path = os.path.join(work, case + ".tfrecord")
        write_examples(path, examples(case))
        intact = damage(path, 7) if case == "damaged" else None
        out = path + ".tfrec.pb"
        ran = tfrec_stats(command, path, out)
        try:
            expected = tfdv.generate_statistics_from_tfrecord(data_location=path)
        except Exception as error:  # TFDV refuses the file: tfrec must refuse it too
            refusal = str(error).strip().splitlines()[-1][:160] if str(error).strip() else type(error).__name__
            if ran.returncode == 0:
                failed += 1
                print("case %s: TFDV refuses (%s) but tfrec gives statistics" % (case, refusal))
                continue
            said = ran.stderr.strip().splitlines()[-1] if ran.stderr.strip() else ""
            if path not in said:
                failed += 1
                print("case %s: tfrec's error does not name the file: %s" % (case, said))
                continue
            print("case %s: both refuse; TFDV: %s; tfrec: %s" % (case, refusal, said))
            if intact is not None:
                skipped = tfrec_stats(command, path, out, "--skip-corrupt")
                if skipped.returncode != 0:
                    failed += 1
                    print("case %s --skip-corrupt: tfrec failed: %s" % (case, skipped.stderr.strip()[:300]))
                    continue
                ours = load(out)
                for dataset in ours.datasets:
                    for feature in dataset.features:
                        del feature.custom_stats[:]
                problems = differences(tfdv.generate_statistics_from_tfrecord(data_location=intact), ours)
                failed += bool(problems)
                print("case %s --skip-corrupt: %s" % (case, "; ".join(problems) or
                                                      "equal to TFDV on the file without the damaged record"))
            continue
        if ran.returncode != 0:
            failed += 1
            print("case %s: tfrec failed: %s" % (case, ran.stderr.strip()[:300]))
            continue
        problems = differences(expected, load(out))
        failed += bool(problems)
        print("case %s: %s" % (case, "; ".join(problems[:10]) or "equal"))
    print("cases %d, differing %d" % (len(cases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
