"""``python -m tfrec ...`` and the ``tfrec`` command that ``pip install`` puts on ``PATH``: the
same command-line tool as the Rust binary (``tfrec --help``)."""

import sys


def main(argv=None):
    """Runs the ``tfrec`` command line (``sys.argv`` by default); exits with its status."""
    from ._tfrec import cli_main

    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    raise SystemExit(cli_main(["tfrec", *args]))


if __name__ == "__main__":
    main()
