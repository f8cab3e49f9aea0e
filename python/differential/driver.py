"""Runs scenarios, counts outcomes per category, minimises each mismatch and writes it in the
golden case format (one JSON object a line) so that it can become a regression case."""

import collections
import json
import time

from . import compare, oracle
from .scenario import scenario


def _check(case, surface, cli):
    if surface == "cli":
        return compare.check_cli(case, cli)
    return compare.check_python(case)


def _groups(case):
    return [g for g in ("features", "context_features", "sequence_features") if case.get(g)]


ORACLE = oracle.Isolated()


def minimise(case, surface, cli, kind):
    """Drops records and spec entries while the case still disagrees in the same way."""
    case = ORACLE.solve(case)

    def still(c):
        c = ORACLE.solve(c)
        got = _check(c, surface, cli)
        return c if got is not None and got[0] == kind else None

    changed = True
    while changed:
        changed = False
        if "single" not in case["op"]:
            for i in range(len(case["serialized"])):
                trial = dict(case, serialized=case["serialized"][:i] + case["serialized"][i + 1 :])
                if surface == "cli" and not trial["serialized"]:
                    continue
                kept = still(trial)
                if kept is not None:
                    case, changed = kept, True
                    break
        for group in _groups(case):
            for name in list(case[group]):
                specs = {k: v for k, v in case[group].items() if k != name}
                if not specs and group == "features":
                    continue
                kept = still(dict(case, **{group: specs}))
                if kept is not None:
                    case, changed = kept, True
                    break
    return case


class Run:
    def __init__(self, seed, cli=None, cli_every=8, out=None, log=print):
        self.seed, self.cli, self.cli_every, self.out, self.log = seed, cli, cli_every, out, log
        self.totals = collections.Counter()
        self.scenarios = 0
        self.mismatches = []

    def one(self, n):
        case = ORACLE.solve(scenario(self.seed, n))
        self.scenarios += 1
        surfaces = ["python"]
        if self.cli and case["op"] in ("parse_example", "parse_sequence_example") and case["serialized"]:
            if n % self.cli_every == 0:
                surfaces.append("cli")
        for surface in surfaces:
            self.totals[f"cases ({surface})"] += 1
            got = _check(case, surface, self.cli)
            if got is None:
                self.totals["match"] += 1
                continue
            kind, why = got
            self.totals[kind] += 1
            if kind.startswith("deviation"):
                continue
            small = minimise(dict(case), surface, self.cli, kind)
            small["id"] = f"diff/{self.seed}/{n}/{surface}"
            small["note"] = f"{kind}: {why}"[:2000]
            self.mismatches.append(small)
            self.log(f"MISMATCH seed={self.seed} case={n} surface={surface}: {kind}: {why[:500]}")
            if self.out:
                with open(self.out, "a") as f:
                    f.write(json.dumps(small, sort_keys=True) + "\n")

    def go(self, scenarios=None, seconds=None, start=0):
        t0 = time.monotonic()
        n = start
        while (scenarios is None or n - start < scenarios) and (seconds is None or time.monotonic() - t0 < seconds):
            self.one(n)
            n += 1
        return self

    def unexplained(self):
        return sum(v for k, v in self.totals.items() if k not in ("match",) and not k.startswith(("cases", "deviation")))

    def report(self):
        lines = [f"seed {self.seed}: {self.scenarios} scenarios"]
        lines += [f"  {k}: {v}" for k, v in sorted(self.totals.items())]
        lines.append(f"  unexplained mismatches: {self.unexplained()}")
        return "\n".join(lines)
