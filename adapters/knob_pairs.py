"""Pairwise coverage of a plugin's configuration space by a scenario suite: every pair of values of
two different knobs (and the data-parallel world, `dp`, as one more dimension) that a case the
plugin does not decline can hold together, and which of them the suite's cases hold.

    python3 -m adapters.knob_pairs --impl deepspeed --base SCENARIO.json --dp 1 2 4 \\
        --design scenarios/deepspeed/pairs --report reports/deepspeed/knob-pairs.md

A case is a scenario file carrying its `implementation_config` (the knob values). `--design DIR`
first writes cases (greedily, AETG-style: each starts from the first pair no case covers yet and
takes, knob by knob, the value covering most new pairs; a case the plugin declines is repaired at
the knob the decline names) until every pair is covered or shown infeasible; then the suite in DIR
is measured. A pair is infeasible when no completion of it survives the plugin's `declines` and
muoncheck's own validation (`muoncheck resolve`); it is listed with the reasons seen. What depends
on the machine asking (a device without fp16: the plugin's `declines_here`) is not a reason.
"""
import argparse
import collections
import glob
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile

from . import plugins, space
from .common import scenario as scenario_file
from .plugin import Unsupported


def dimensions(plugin, dps):
    """[(name, values)]: the plugin's knobs, then dp."""
    return [(k.name, list(k.values)) for k in plugin.knobs] + [("dp", list(dps))]


def all_pairs(dims):
    out = []
    for (i, (a, va)), (j, (b, vb)) in itertools.combinations(enumerate(dims), 2):
        out += [((a, json.dumps(x)), (b, json.dumps(y))) for x in va for y in vb]
    return out


def pairs_of(row, order):
    """The pairs a row (name -> value) holds, each in the order of the dimensions (`order`: names)."""
    items = [(n, json.dumps(row[n])) for n in order if n in row]
    return {(x, y) for x, y in itertools.combinations(items, 2)}


class Checker:
    """Whether a row is a case the plugin runs: mapped, resolved by muoncheck, not declined."""

    def __init__(self, plugin, base):
        self.plugin, self.base, self.memo = plugin, base, {}
        self.binary = scenario_file.muoncheck_binary()

    def scenario_json(self, row):
        config = {k: v for k, v in row.items() if k != "dp"}
        out = self.plugin.to_scenario(config, self.base)
        out["engine"]["dp"] = row["dp"]
        for inj in out.get("overflow", []):
            inj["rank"] = int(inj.get("rank", 0)) % row["dp"]
        out["implementation_config"] = space.full_config(self.plugin, config)
        return out

    def check(self, row):
        """(None, None) when the row runs; else (knob, reason)."""
        key = json.dumps(row, sort_keys=True)
        if key in self.memo:
            return self.memo[key]
        try:
            doc = self.scenario_json(row)
        except Unsupported as e:
            return self.memo.setdefault(key, (e.knob, e.reason))
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, doc["name"] + ".json")   # a scenario file is named by its stem
            with open(path, "w") as f:
                json.dump(doc, f)
            done = subprocess.run([self.binary, "resolve", path], capture_output=True, text=True)
        if done.returncode != 0:
            reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "rejected"
            return self.memo.setdefault(key, (None, "muoncheck rejects the mapped scenario: " + reason.split(": ", 1)[-1]))
        s = scenario_file.Scenario(json.loads(done.stdout), "<pairs>")
        s.config = doc["implementation_config"]
        d = self.plugin.declines(s, s.config)
        return self.memo.setdefault(key, (None, None) if d is None else (d.knob, d.reason))


def design(checker, dims, uncovered, seed=1, attempts=6, repairs=8):
    """Rows covering `uncovered` (a set), and {pair: [reasons]} for the pairs no row could hold."""
    rng = random.Random(seed)
    rows, infeasible = [], {}
    order = [n for n, _ in dims]
    values = dict(dims)
    while uncovered:
        pair = min(uncovered, key=lambda p: (order.index(p[0][0]), order.index(p[1][0]), p))
        reasons = collections.Counter()
        found = None
        for attempt in range(attempts):
            row = {pair[0][0]: json.loads(pair[0][1]), pair[1][0]: json.loads(pair[1][1])}
            rest = [n for n in order if n not in row]
            if attempt:
                rng.shuffle(rest)
            for n in rest:   # the value covering most uncovered pairs with what is chosen (ties: the default)
                best = max(values[n], key=lambda v: (len(pairs_of({**row, n: v}, order) & uncovered), -values[n].index(v)))
                row[n] = best
            for _ in range(repairs):
                knob, reason = checker.check(row)
                if reason is None:
                    found = row
                    break
                reasons[reason] += 1
                if knob is None or knob not in values or knob in (pair[0][0], pair[1][0]):
                    break
                others = [v for v in values[knob] if v != row[knob]]
                if not others:
                    break
                row[knob] = rng.choice(others)
            if found:
                break
        if found:
            rows.append(found)
            uncovered -= pairs_of(found, order)
        else:
            infeasible[pair] = [r for r, _ in reasons.most_common(2)]
            uncovered.discard(pair)
    return rows, infeasible


def suite_rows(folder):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        if "implementation_config" in doc:
            rows.append((path, dict(doc["implementation_config"], dp=doc["engine"]["dp"])))
    return rows


def write_rows(folder, impl, rows, base, checker):
    os.makedirs(folder, exist_ok=True)
    for old in glob.glob(os.path.join(folder, "*.json")):
        os.unlink(old)
    for i, row in enumerate(rows, 1):
        doc = checker.scenario_json(row)
        doc["name"] = f"{impl}-pairs-{i:02d}"
        doc["description"] = (f"knob pairs of {impl}: case {i} of the pairwise suite "
                              "(python3 -m adapters.knob_pairs writes it)")
        with open(os.path.join(folder, doc["name"] + ".json"), "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")


def report(impl, dims, feasible, covered, infeasible, rows):
    lines = [f"# Knob pairs of `{impl}`", "",
             f"Pairs of values of two different knobs (and dp) of the `{impl}` plugin: **{len(covered)} of "
             f"{len(feasible)} feasible pairs covered** ({100.0 * len(covered) / max(1, len(feasible)):.0f} %) by "
             f"{len(rows)} cases; {len(infeasible)} pairs are infeasible (no case the plugin runs can hold them).",
             "", "Regenerate: `PYTHONPATH=SITE python3 -m adapters.knob_pairs " + " ".join(sys.argv[1:]) + "`.", "",
             "## Dimensions", ""]
    lines += [f"- `{n}`: {', '.join(json.dumps(v) for v in vs)}" for n, vs in dims]
    lines += ["", "## Infeasible pairs", "", "| pair | why |", "|---|---|"]
    for (a, b), reasons in sorted(infeasible.items()):
        lines.append(f"| `{a[0]}={a[1]}` & `{b[0]}={b[1]}` | {'; '.join(r.replace('|', '/') for r in reasons) or 'no completion'} |")
    missing = sorted(set(feasible) - set(covered))
    if missing:
        lines += ["", "## Feasible pairs not covered", ""] + [f"- `{a[0]}={a[1]}` & `{b[0]}={b[1]}`" for a, b in missing]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--impl", required=True)
    ap.add_argument("--base", required=True, help="the scenario every case starts from")
    ap.add_argument("--dp", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--design", help="write the suite's cases to this folder first")
    ap.add_argument("--suite", help="the folder of the suite to measure (default: --design's)")
    ap.add_argument("--report", help="Markdown report (default: stdout)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    plugin = plugins.load(args.impl)
    with open(args.base) as f:
        base = json.load(f)
    base.pop("$schema", None)
    dims = dimensions(plugin, args.dp)
    checker = Checker(plugin, base)
    pairs = set(all_pairs(dims))
    rows, infeasible = design(checker, dims, set(pairs), args.seed)
    if args.design:
        write_rows(args.design, args.impl, rows, base, checker)
    folder = args.suite or args.design
    suite = suite_rows(folder) if folder else [(None, r) for r in rows]
    covered = set()
    for _, row in suite:
        if checker.check(row)[1] is None:
            covered |= pairs_of(row, [n for n, _ in dims])
    feasible = pairs - set(infeasible)
    text = report(args.impl, dims, feasible, covered & feasible, infeasible, suite)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    print(f"{len(covered & feasible)}/{len(feasible)} feasible pairs covered, {len(infeasible)} infeasible, "
          f"{len(suite)} cases, {len(checker.memo)} rows checked", file=sys.stderr)
    return 0 if feasible <= covered else 1


if __name__ == "__main__":
    sys.exit(main())
