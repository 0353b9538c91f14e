#!/usr/bin/env python3
"""A patch judged: the same seeded sweep (and, with --witnesses, the known-defect witnesses) run on
the implementation as installed (the base site) and with a patch applied to a copy of it, side by
side: what the patch fixes (failing before, conforming after), what it leaves (failing in both),
what it breaks (conforming before, failing after). Same seed, same cases: the sweep draws its
cases from muoncheck's generator, so case N is the same scenario on both trees.

    scripts/judge-patch.py --impl deepspeed=0.19.6 --base-site /tmp/ds-0.19.6 --patch FIX.diff OUT_DIR
    scripts/judge-patch.py --impl deepspeed=0.19.6 --base-site A --patched-site B OUT_DIR
      [--seed S] [--cases N] [--dp N] [--workers N] [--title TEXT] [--witnesses REGISTRY]
      [--knob NAME=V1,V2]... [--case-timeout-s S] [--reuse]

--knob (repeatable) holds a knob of the plugin to some of its values on both trees, to aim the
sweep at what the patch touches (sweep --impl --knob). --reuse judges again from the sweep
records OUT_DIR holds (sweep-base.json, sweep-patched.json), running only a missing one.

A patch is a unified diff with paths relative to the site (a/deepspeed/runtime/...; -p1). It is
applied to a copy of the base site (OUT_DIR/patched-site); a patch that does not apply is an
error naming its file (exit 2). Writes OUT_DIR/judgement.json and OUT_DIR/judgement.md; exit 0
when the patch breaks nothing, 1 when it breaks a case that conformed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def patched_site(base, patch, out):
    site = os.path.join(out, "patched-site")
    if os.path.exists(site):
        shutil.rmtree(site)
    shutil.copytree(base, site, symlinks=True)
    run = subprocess.run(["patch", "-p1", "--batch", "--forward", "-d", site, "-i", os.path.abspath(patch)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{patch}: the patch does not apply to {base}:\n{run.stdout}{run.stderr}")
    return site


def sweep(args, site, name, out):
    record = os.path.join(out, f"sweep-{name}.json")
    if args.reuse and os.path.exists(record):
        with open(record) as f:
            return json.load(f)
    cmd = [args.muoncheck, "sweep", "--impl", args.impl, "--impl-site", site, "--seed", str(args.seed),
           "--cases", str(args.cases), "--dp", str(args.dp), "--workers", str(args.workers),
           "--max-defects", str(args.max_defects), "--shrink-seconds", str(args.shrink_seconds),
           "--case-timeout-s", str(args.case_timeout_s),
           "--cases-dir", os.path.join(out, f"cases-{name}"), "--json", record]
    for knob in args.knob:
        cmd += ["--knob", knob]
    if args.witnesses:
        cmd += ["--known-defects", args.witnesses]
    with open(os.path.join(out, f"sweep-{name}.log"), "w") as log:
        code = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT).returncode
    if not os.path.exists(record):
        sys.exit(f"sweep on {site} wrote no record (exit {code}); see {out}/sweep-{name}.log")
    with open(record) as f:
        return json.load(f)


def failing(record):
    """case number -> (first failing invariant, message, attribution text, every failing invariant).
    A case whose implementation raised is an ERROR, whatever invariant the sweep filed it under."""
    def first(f):
        return "ERROR" if f["message"].startswith("ERROR") or not f["invariants"] else f["invariants"][0]
    return {f["case"]: (first(f), f["message"], (f.get("attribution") or {}).get("text", ""), f["invariants"])
            for f in record.get("failures", [])}


def judge(base, patched):
    b, p = failing(base), failing(patched)
    # a sweep cut short (--budget, a crash) runs fewer cases: judge only the cases both trees ran
    cases = min(base.get("cases_run", 0), patched.get("cases_run", 0))
    fixed = sorted(c for c in b if c not in p and c <= cases)
    left = sorted(c for c in b if c in p and c <= cases)
    broken = sorted(c for c in p if c not in b and c <= cases)
    row = lambda c, src: {"case": c, "invariant": src[c][0], "message": src[c][1][:300], "attribution": src[c][2]}
    # a case failing on both trees may fail another way after the patch: say what it failed on before
    # and which of its invariants the patch cured or broke (none cured where it now raises: nothing was judged)
    leave = lambda c: dict(row(c, p), base_invariant=b[c][0], base_message=b[c][1][:300],
                           cured=[] if p[c][0] == "ERROR" else [i for i in b[c][3] if i not in p[c][3]],
                           newly_failing=[i for i in p[c][3] if i not in b[c][3]])
    problems = lambda r: r.get("known_defect_problems", [])
    return {"cases": cases, "fixes": [row(c, b) for c in fixed], "leaves": [leave(c) for c in left],
            "breaks": [row(c, p) for c in broken],
            "witnesses": {"base": problems(base), "patched": problems(patched),
                          "checked_base": (base.get("known_defects") or {}).get("checked", []),
                          "checked_patched": (patched.get("known_defects") or {}).get("checked", [])}}


def markdown(args, j):
    lines = [f"# {args.title or 'Patch judged'}: {args.impl}", "",
             f"`scripts/judge-patch.py --impl {args.impl} --seed {args.seed} --cases {args.cases} --dp {args.dp}"
             + "".join(f" --knob {k}" for k in args.knob) + "`"
             f" on the base site and with {os.path.basename(args.patch) if args.patch else 'the patched site'}; "
             f"{j['cases']} cases on both.", "",
             "| | cases |", "|---|---|",
             f"| fixes (failing before, conforming after) | {len(j['fixes'])} |",
             f"| leaves (failing in both) | {len(j['leaves'])} |",
             f"| breaks (conforming before, failing after) | {len(j['breaks'])} |", ""]
    if j["leaves"]:
        lines += ["## Leaves", "", "| case | before | after | invariants cured | newly failing | attribution |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {r['case']} | {r['base_invariant']} | {r['invariant']} | {', '.join(r['cured']) or '-'} | "
                  f"{', '.join(r['newly_failing']) or '-'} | {r['attribution'].replace('|', '/')} |" for r in j["leaves"]]
        lines.append("")
    for title, key in (("Fixes", "fixes"), ("Breaks", "breaks")):
        if j[key]:
            lines += [f"## {title}", "", "| case | invariant | message | attribution |", "|---|---|---|---|"]
            lines += [f"| {r['case']} | {r['invariant']} | {r['message'].replace('|', '/')} | {r['attribution'].replace('|', '/')} |"
                      for r in j[key]]
            lines.append("")
    if args.witnesses:
        w = j["witnesses"]
        lines += ["## Known-defect witnesses", "",
                  f"- base: reproduced and cured by their fix: {', '.join(w['checked_base']) or 'none'}"]
        lines += [f"  - {p}" for p in w["base"]]
        lines += [f"- patched: reproduced and cured by their fix: {', '.join(w['checked_patched']) or 'none'}"]
        lines += [f"  - {p}" for p in w["patched"]]
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--impl", required=True, help="deepspeed=VERSION or torch=VERSION")
    ap.add_argument("--base-site", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--patch", help="unified diff, paths relative to the site (-p1)")
    g.add_argument("--patched-site")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--dp", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--max-defects", type=int, default=4)
    ap.add_argument("--shrink-seconds", type=int, default=60)
    ap.add_argument("--knob", action="append", default=[], help="NAME=V1,V2: hold a plugin knob to these values (repeatable)")
    ap.add_argument("--case-timeout-s", type=int, default=120)
    ap.add_argument("--witnesses", help="a known-defect registry whose witnesses are run on both trees")
    ap.add_argument("--title")
    ap.add_argument("--reuse", action="store_true", help="take the sweep records OUT_DIR holds; run only a missing one")
    ap.add_argument("--muoncheck", default=os.environ.get("MUONCHECK", os.path.join(ROOT, "build/harness/muoncheck")))
    args = ap.parse_args(argv)
    # the sweeps run in the repository root: every path they are given must not depend on our cwd
    args.out, args.base_site = os.path.abspath(args.out), os.path.abspath(args.base_site)
    args.patched_site = args.patched_site and os.path.abspath(args.patched_site)
    args.witnesses = args.witnesses and os.path.abspath(args.witnesses)
    os.makedirs(args.out, exist_ok=True)
    reused = args.reuse and os.path.exists(os.path.join(args.out, "sweep-patched.json"))
    site = args.patched_site or (os.path.join(args.out, "patched-site") if reused
                                 else patched_site(args.base_site, args.patch, args.out))
    base = sweep(args, args.base_site, "base", args.out)
    patched = sweep(args, site, "patched", args.out)
    j = judge(base, patched)
    j.update({"impl": args.impl, "seed": args.seed, "dp": args.dp, "knobs": args.knob, "patch": args.patch,
              "title": args.title})
    with open(os.path.join(args.out, "judgement.json"), "w") as f:
        json.dump(j, f, indent=2)
    with open(os.path.join(args.out, "judgement.md"), "w") as f:
        f.write(markdown(args, j) + "\n")
    print(f"fixes {len(j['fixes'])}, leaves {len(j['leaves'])}, breaks {len(j['breaks'])} of {j['cases']} cases; "
          f"{args.out}/judgement.md")
    return 1 if j["breaks"] else 0


if __name__ == "__main__":
    sys.exit(main())
