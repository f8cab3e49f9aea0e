"""Long mode: ``python -m differential [--seed S ...] [--scenarios N | --seconds T]`` (run from
``python``, with the extension and TensorFlow installed). Prints totals per category
and seed; mismatches, minimised, go to ``--out`` in the golden case format. Exits 1 when any
mismatch is not a listed deliberate deviation."""

import argparse
import random
import sys

from .compare import cli_path
from .driver import Run


def main():
    ap = argparse.ArgumentParser(prog="python -m differential")
    ap.add_argument("--seed", type=int, action="append", help="repeatable; default: one fresh seed")
    ap.add_argument("--scenarios", type=int, help="per seed")
    ap.add_argument("--seconds", type=float, help="per seed")
    ap.add_argument("--start", type=int, default=0, help="first case number")
    ap.add_argument("--cli-every", type=int, default=8, help="run tfrec parse on every n-th batch case")
    ap.add_argument("--no-cli", action="store_true")
    ap.add_argument("--out", default="differential-mismatches.jsonl")
    args = ap.parse_args()
    if args.scenarios is None and args.seconds is None:
        args.scenarios = 2000
    seeds = args.seed or [random.SystemRandom().randrange(1 << 32)]
    cli = None if args.no_cli else cli_path()
    print(f"tfrec parse CLI: {cli or 'not found (set TFREC_CLI); CLI surface skipped'}", flush=True)
    runs = []
    for seed in seeds:
        print(f"seed {seed} (reproduce a case with --seed {seed} --start N --scenarios 1)", flush=True)
        run = Run(seed, cli=cli, cli_every=args.cli_every, out=args.out, log=lambda m: print(m, flush=True))
        run.go(scenarios=args.scenarios, seconds=args.seconds, start=args.start)
        print(run.report(), flush=True)
        runs.append(run)
    total = {}
    for run in runs:
        for k, v in run.totals.items():
            total[k] = total.get(k, 0) + v
    print(f"all seeds: {sum(r.scenarios for r in runs)} scenarios over {len(runs)} seeds")
    for k, v in sorted(total.items()):
        print(f"  {k}: {v}")
    unexplained = sum(r.unexplained() for r in runs)
    print(f"  unexplained mismatches: {unexplained}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
