#!/usr/bin/env python3
"""Reach: the share of DeepSpeed's Muon-relevant lines the DeepSpeed scenarios run.

    scripts/deepspeed-reach.py --site SITE --data DIR [--data DIR...] [--before DIR...]
        [--reasons reports/deepspeed/reach-reasons.json] --out reports/deepspeed/reach

SITE is the --target folder DeepSpeed was installed into; each DIR holds the coverage.py data
files the adapter wrote with MUONCHECK_COVERAGE=DIR (scripts/deepspeed-run-cpu.sh; on the GPU
machine COVERAGE=1 scripts/deepspeed-run.sh), or is a JSON file of lines written by --save-lines
(reports/deepspeed/reach-lines-*.json): files are matched by their path inside the deepspeed
package, so runs from different installs and machines add up. Writes
OUT.json and OUT.md: per file and function, the Muon-relevant statements, how many ran, and
every range that did not run with its reason (from --reasons) or "no reason recorded".

Which lines are Muon-relevant, mechanically (the same rule for every version):
- runtime/zero/muon/*.py: every statement;
- runtime/zero/stage_1_and_2.py, stage3.py, bf16_optimizer.py, engine.py: in each function
  (methods included, outermost def) whose source mentions "muon" (any case):
  * a function whose name mentions muon: every statement;
  * any other: the top-level statements of its body whose source mentions muon, in full; an
    if/elif/else chain among them counts only its branches (test and body) that mention muon.
A statement is a line coverage.py calls executable.

A second figure leaves out the definitions in runtime/zero/muon/ that no DeepSpeed code can run,
found mechanically: a top-level class or function that no other DeepSpeed file imports and its
own file never names outside itself (the reference `Muon`, `SingleDeviceMuon`, ... kept from
Keller Jordan's file), and a method that a subclass in that folder overrides without calling
`super().<method>`. Their lines are listed with that reason; the 90 % target is on this figure.
"""
import argparse
import ast
import glob
import json
import os
import re

import coverage

SHARED = ("runtime/zero/stage_1_and_2.py", "runtime/zero/stage3.py", "runtime/bf16_optimizer.py", "runtime/engine.py")
MUON = re.compile("muon", re.I)


def mentions(lines, node):
    return bool(MUON.search("\n".join(lines[node.lineno - 1:node.end_lineno])))


def if_chain_spans(lines, node):
    """Spans of the branches of an if/elif/else chain that mention muon."""
    spans = []
    while True:
        body_end = node.body[-1].end_lineno
        if MUON.search("\n".join(lines[node.lineno - 1:body_end])):
            spans.append((node.lineno, body_end))
        orelse = node.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If) and orelse[0].col_offset == node.col_offset \
                and lines[orelse[0].lineno - 1].lstrip().startswith("elif"):
            node = orelse[0]
            continue
        if orelse and MUON.search("\n".join(lines[orelse[0].lineno - 1:orelse[-1].end_lineno])):
            spans.append((orelse[0].lineno - 1, orelse[-1].end_lineno))   # the `else:` line and its body
        return spans


def muon_functions(path):
    """[(qualified name, [(first, last) line spans that are Muon-relevant])] of a shared file."""
    src = open(path).read()
    lines = src.splitlines()
    out = []

    def walk(node, prefix):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not mentions(lines, ch):
                    continue
                if MUON.search(ch.name):
                    spans = [(ch.body[0].lineno, ch.end_lineno)]
                else:
                    spans = []
                    for st in ch.body:
                        if not mentions(lines, st):
                            continue
                        spans += if_chain_spans(lines, st) if isinstance(st, ast.If) else [(st.lineno, st.end_lineno)]
                out.append((prefix + ch.name, spans))
            elif isinstance(ch, ast.ClassDef):
                walk(ch, prefix + ch.name + ".")
            else:
                walk(ch, prefix)

    walk(ast.parse(src), "")
    return out


def names_used(tree, skip=None):
    """Identifiers a module reads (names, attributes, imported names), outside the node `skip`."""
    out = set()
    for node in ast.walk(tree):
        if node is skip:
            continue
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            out.update(a.name for a in node.names)
    return out


def dead_definitions(root):
    """{(file relative to root, qualified name): why no DeepSpeed code runs it} for runtime/zero/muon."""
    folder = glob.glob(os.path.join(root, "runtime/zero/muon/*.py"))
    others = set()
    for f in glob.glob(os.path.join(root, "**/*.py"), recursive=True):
        if f in folder:
            continue
        text = open(f, errors="replace").read()
        if "muon" in text.lower():
            others |= names_used(ast.parse(text))
    trees = {f: ast.parse(open(f).read()) for f in folder}
    for f, tree in trees.items():   # the folder's files import from each other
        others |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    dead = {}
    for f, tree in trees.items():
        rel = os.path.relpath(f, root)
        top = [n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))]
        for node in top:
            own_file_uses = set()
            for other in top:
                if other is not node:
                    own_file_uses |= names_used(other)
            if node.name not in others and node.name not in own_file_uses:
                dead[(rel, node.name)] = "never called by DeepSpeed: no DeepSpeed file imports it or names it"
        # methods a subclass in the folder overrides without super().<method>
        imported_as = {a.asname or a.name: a.name for t in trees.values() for n in ast.walk(t)
                       if isinstance(n, ast.ImportFrom) for a in n.names}
        for t in trees.values():
            for sub in (n for n in t.body if isinstance(n, ast.ClassDef)):
                for base in sub.bases:
                    base_name = imported_as.get(getattr(base, "id", ""), getattr(base, "id", ""))
                    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == base_name), None)
                    if cls is None or cls is sub:
                        continue
                    for m in (n for n in sub.body if isinstance(n, ast.FunctionDef)):
                        calls_super = any(isinstance(c, ast.Attribute) and c.attr == m.name and
                                          isinstance(c.value, ast.Call) and getattr(c.value.func, "id", "") == "super"
                                          for c in ast.walk(m))
                        if not calls_super and any(isinstance(n, ast.FunctionDef) and n.name == m.name for n in cls.body):
                            dead[(rel, f"{cls.name}.{m.name}")] = (f"never called by DeepSpeed: overridden by "
                                                                  f"{sub.name}.{m.name}, which does not call super()")
    return dead


def whole_file_functions(path):
    """[(function or "<module>", [(first, last)])] covering every line of a runtime/zero/muon file."""
    src = open(path).read()
    tree = ast.parse(src)
    out, taken = [], []

    def walk(node, prefix):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + ch.name, [(ch.lineno, ch.end_lineno)]))
                taken.append((ch.lineno, ch.end_lineno))
            elif isinstance(ch, ast.ClassDef):
                walk(ch, prefix + ch.name + ".")

    walk(tree, "")
    n = len(src.splitlines())
    module = [(i, i) for i in range(1, n + 1) if not any(a <= i <= b for a, b in taken)]
    out.insert(0, ("<module>", module))
    return out


def package_relative(path):
    """A measured file's path inside the deepspeed package ("runtime/zero/stage3.py"), wherever
    that DeepSpeed was installed (this machine's site, the GPU machine's /tmp/...), or None."""
    parts = os.path.realpath(path).split(os.sep)
    if "deepspeed" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("deepspeed")
    return "/".join(parts[i + 1:])


def measured(sources):
    """{path inside the deepspeed package: set of executed lines} over every source: a folder of
    the coverage.py data files the adapter wrote, or a JSON file of lines (--save-lines) from
    any machine."""
    hits = {}
    for src in sources:
        if os.path.isfile(src):
            parts = json.load(open(src))["lines"].items()
        else:
            data = coverage.CoverageData(no_disk=True)
            for f in sorted(glob.glob(os.path.join(src, ".coverage*"))):
                part = coverage.CoverageData(basename=f)
                part.read()
                data.update(part)
            parts = [(package_relative(f), data.lines(f) or ()) for f in data.measured_files()]
        for rel, lines in parts:
            if rel:
                hits.setdefault(rel, set()).update(lines)
    return hits


def statements(path):
    cov = coverage.Coverage(data_file=None)
    _, stmts, _, _, _ = cov.analysis2(path)
    return set(stmts)


def ranges(lines):
    out, run = [], []
    for n in sorted(lines):
        if run and n == run[-1] + 1:
            run.append(n)
        else:
            if run:
                out.append((run[0], run[-1]))
            run = [n]
    if run:
        out.append((run[0], run[-1]))
    return out


def reason_for(reasons, rel, function, first_line_text):
    for r in reasons:
        if (re.fullmatch(r["file"], rel) and re.fullmatch(r["function"], function)
                and re.search(r.get("line", ""), first_line_text)):
            return r["reason"]
    return None


def report(site, dirs, reasons):
    root = os.path.join(site, "deepspeed")
    hits = measured(dirs)
    dead = dead_definitions(root)
    files = []
    rels = sorted(os.path.relpath(f, root) for f in glob.glob(os.path.join(root, "runtime/zero/muon/*.py"))) + list(SHARED)
    for rel in rels:
        path = os.path.join(root, rel)
        src_lines = open(path).read().splitlines()
        stmts, ran = statements(path), hits.get(rel, set())
        units = muon_functions(path) if rel in SHARED else whole_file_functions(path)
        fns = []
        for name, spans in units:
            mine = {n for n in stmts if any(a <= n <= b for a, b in spans)}
            if not mine:
                continue
            why_dead = dead.get((rel, name)) or next((w for (r, n), w in dead.items()
                                                      if r == rel and name.startswith(n + ".")), None)
            missed = []
            for a, b in ranges(mine - ran):
                text = src_lines[a - 1].strip()
                missed.append({"lines": [a, b], "code": text[:100],
                               "reason": why_dead or reason_for(reasons, rel, name, text) or "no reason recorded"})
            fns.append({"function": name, "statements": len(mine), "reached": len(mine & ran), "not_reached": missed,
                        "dead": bool(why_dead)})
        total = sum(f["statements"] for f in fns)
        reached = sum(f["reached"] for f in fns)
        files.append({"file": rel, "statements": total, "reached": reached, "functions": fns})
    total = sum(f["statements"] for f in files)
    reached = sum(f["reached"] for f in files)
    live = [fn for f in files for fn in f["functions"] if not fn["dead"]]
    live_total, live_reached = sum(fn["statements"] for fn in live), sum(fn["reached"] for fn in live)
    return {"statements": total, "reached": reached, "percent": round(100.0 * reached / max(1, total), 1),
            "reachable": {"statements": live_total, "reached": live_reached,
                          "percent": round(100.0 * live_reached / max(1, live_total), 1)},
            "files": files}


def markdown(rep, before, version, rule):
    out = [f"# DeepSpeed {version}: reach of the DeepSpeed scenarios into its Muon code", "",
           "Generated by `scripts/deepspeed-reach.py` from the coverage.py data the adapter records "
           "(`MUONCHECK_COVERAGE`): `scripts/deepspeed-run-cpu.sh` on DeepSpeed's CPU accelerator, `COVERAGE=1 "
           "scripts/deepspeed-run.sh` on a GPU. The executed lines are kept in "
           "`reports/deepspeed/reach-lines-VERSION-{before,cpu,gpu}.json` (`--save-lines`; `gpu` holds the union "
           "with the GPU runs), so a run on another machine adds to them: `--data "
           "reports/deepspeed/reach-lines-VERSION-gpu.json --data DIR --before "
           "reports/deepspeed/reach-lines-VERSION-before.json`.", "",
           rule, ""]
    def figure(r):
        live = r["reachable"]
        return (f"{live['reached']} / {live['statements']} statements DeepSpeed can run = **{live['percent']} %** "
                f"(all Muon-relevant statements: {r['reached']} / {r['statements']} = {r['percent']} %)")
    if before:
        out.append(f"**Before** (the scenarios before the engine-path ones): {figure(before)}  ")
    out += [f"**Now**: {figure(rep)}", "",
            "| file | function | statements | reached | % |", "|---|---|---:|---:|---:|"]
    for f in rep["files"]:
        out.append(f"| `{f['file']}` | **all** | {f['statements']} | {f['reached']} | "
                   f"{100.0 * f['reached'] / max(1, f['statements']):.1f} |")
        for fn in f["functions"]:
            out.append(f"| | `{fn['function']}` | {fn['statements']} | {fn['reached']} | "
                       f"{100.0 * fn['reached'] / max(1, fn['statements']):.1f} |")
    out += ["", "## Lines not reached", ""]
    for f in rep["files"]:
        for fn in f["functions"]:
            for m in fn["not_reached"]:
                a, b = m["lines"]
                span = f"{a}" if a == b else f"{a}-{b}"
                out.append(f"- `{f['file']}:{span}` ({fn['function']}) `{m['code']}` — {m['reason']}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", required=True)
    ap.add_argument("--data", action="append", required=True)
    ap.add_argument("--before", action="append", default=[])
    ap.add_argument("--reasons")
    ap.add_argument("--out", required=True)
    ap.add_argument("--save-lines", help="also write the union of the --data lines as JSON (a --data source "
                    "on any machine: the figure can grow by a run elsewhere, e.g. the fp16 paths on a GPU)")
    args = ap.parse_args()
    if args.save_lines:
        lines = sorted(measured(args.data).items())
        with open(args.save_lines, "w") as f:   # one line per file: small diffs
            f.write('{"schema": "muoncheck-deepspeed-reach-lines/1", "lines": {\n' + ",\n".join(
                f"{json.dumps(rel)}: {json.dumps(sorted(n))}" for rel, n in lines) + "\n}}\n")
    reasons = json.load(open(args.reasons)) if args.reasons else []
    rep = report(args.site, args.data, reasons)
    before = report(args.site, args.before, []) if args.before else None
    import importlib.metadata as md
    import sys
    sys.path.insert(0, args.site)
    version = md.version("deepspeed")
    rep = {"deepspeed": version, "rule": __doc__.split("Which lines are Muon-relevant, mechanically")[1].strip(),
           "before": {k: before[k] for k in ("statements", "reached", "percent", "reachable")} if before else None,
           **rep}
    with open(args.out + ".json", "w") as f:
        json.dump(rep, f, indent=1)
    rule = "Muon-relevant lines, mechanically " + rep["rule"]
    with open(args.out + ".md", "w") as f:
        f.write(markdown(rep, before, version, rule))
    print(f"deepspeed {version}: reachable {rep['reachable']['percent']} %, all {rep['percent']} %"
          + (f" (before: reachable {before['reachable']['percent']} %, all {before['percent']} %)" if before else ""))


if __name__ == "__main__":
    main()
