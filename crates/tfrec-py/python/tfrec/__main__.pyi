"""``python -m tfrec ...`` and the ``tfrec`` command that ``pip install`` puts on ``PATH``: the
same command-line tool as the Rust binary (``tfrec --help``)."""

from collections.abc import Sequence
from typing import NoReturn

def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Runs the ``tfrec`` command line (``sys.argv`` by default); exits with its status."""
