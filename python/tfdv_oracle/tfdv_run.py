"""TFDV's statistics of TFRecord files of Examples, for the differential test (issue 55).

Runs in TFDV's own virtual environment (`python/tfdv_oracle/README.md` says how to make it),
never in the test environment:

    VENV/bin/python python/tfdv_oracle/tfdv_run.py OUT_DIR FILE...

writes `OUT_DIR/<file name>.pb`, the `DatasetFeatureStatisticsList` that
`tfdv.generate_statistics_from_tfrecord` gives for each file with default options, or
`OUT_DIR/<file name>.err` holding TFDV's error text when it raises. `--text FILE` prints one
file's statistics in the protobuf text format instead.
"""

import os
import sys
import traceback


def main(argv):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow_data_validation as tfdv
    from google.protobuf import text_format

    if argv[:1] == ["--text"]:
        stats = tfdv.generate_statistics_from_tfrecord(data_location=argv[1])
        print(text_format.MessageToString(stats))
        return 0
    out_dir, files = argv[0], argv[1:]
    os.makedirs(out_dir, exist_ok=True)
    for path in files:
        name = os.path.join(out_dir, os.path.basename(path))
        try:
            stats = tfdv.generate_statistics_from_tfrecord(data_location=path)
        except Exception as error:  # TFDV's answer to this input, recorded for the test
            with open(name + ".err", "w") as f:
                f.write("".join(traceback.format_exception_only(type(error), error)))
            continue
        with open(name + ".pb", "wb") as f:
            f.write(stats.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
