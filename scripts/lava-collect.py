#!/usr/bin/env python3
"""Turn LAVA job logs of the pack's jobs (make lava) into the workbench's
results: results.ktap, results.json and SUMMARY.md (scripts/report.py),
so that a lab's run and a local one compare side by side.

Usage: lava-collect.py OUTDIR LANE=LOG [LANE=LOG ...]

LOG is a job's log as lava-run prints it (one JSON object per line) or as
a LAVA server serves it (YAML, "- {dt: ..., lvl: ..., msg: ...}" lines).
LANE is the pack's lane of the job ("main", or a line of
selftests/variants.txt), which names its boot in the results: the guest
console (the "target" lines) becomes OUTDIR/console.log for "main" and
OUTDIR/console-<lane>.log otherwise, read as the workbench reads its own.
Each job also adds a stage "lava-<lane>": the job completed (LAVA's own
verdict), and LAVA's test cases agree with the console's verdicts.

LAVA calls a job whose test cases fail "Complete": here any failed case,
a job that did not complete (a panic, a timeout) or a disagreement fails.
Exit status: report.py's (0 if nothing failed, 2 otherwise), 1 on bad
input.
"""
import json
import os
import re
import subprocess
import sys

import yaml

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SELFTEST = re.compile(r"^(not ok|ok) \d+ (selftests: kvm: \S+)(?:\s+#\s*(.*))?$")


def records(path):
    """The log's records: dicts with dt, lvl, msg."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("- "):
                line = line[2:]
            try:
                rec = json.loads(line)
            except ValueError:
                try:
                    rec = yaml.safe_load(line)
                except yaml.YAMLError as e:
                    raise SystemExit("E: lava-collect: %s:%d: neither JSON nor YAML: %s"
                                     % (path, n, e))
            if isinstance(rec, dict) and "lvl" in rec:
                yield rec


def parse(path):
    console, cases, job = [], [], None
    for rec in records(path):
        msg = rec.get("msg")
        if rec["lvl"] == "target" and isinstance(msg, str):
            console.append(msg)
        elif rec["lvl"] == "results" and isinstance(msg, dict):
            if msg.get("definition") == "lava":
                if msg.get("case") == "job":
                    job = msg
            else:
                tcid = (msg.get("extra") or {}).get("test_case_id", msg.get("case"))
                cases.append((str(tcid), msg.get("result")))
    return console, cases, job


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 1
    out = os.path.abspath(sys.argv[1])
    jobs = []
    for arg in sys.argv[2:]:
        lane, sep, log = arg.partition("=")
        if not sep or not re.match(r"^[a-z0-9-]+$", lane) or not os.path.isfile(log):
            print("E: lava-collect: '%s' is not LANE=LOG with an existing LOG" % arg,
                  file=sys.stderr)
            return 1
        jobs.append((lane, log))
    os.makedirs(os.path.join(out, "ktap"), exist_ok=True)
    stages, variants = [], []
    for lane, log in jobs:
        console, cases, job = parse(log)
        text = "\n".join(console) + "\n"
        name = "console.log" if lane == "main" else "console-%s.log" % lane
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
        if lane != "main":
            variants.append(lane)
        ktap = []
        done = job is not None and job.get("result") == "pass"
        why = "" if done else " # %s" % (
            "no job result in the log" if job is None else
            "%s: %s" % (job.get("error_type", "?"), job.get("error_msg", "?")))
        ktap.append("%s 1 job complete%s" % ("ok" if done else "not ok", why))
        # LAVA's cases against the console's, for the selftests' lines.
        seen = {}
        for ln in console:
            m = SELFTEST.match(ln.strip())
            if m:
                seen[m.group(2)] = "pass" if m.group(1) == "ok" else "fail"
        lava = {}
        for tcid, res in cases:
            if tcid.startswith("selftests: kvm: "):
                lava[tcid] = res
        diff = sorted(t for t in set(seen) | set(lava) if seen.get(t) != lava.get(t))
        if diff:
            ktap.append("not ok 2 LAVA's test cases agree with the console # %d differ, first: %s "
                        "(console %s, LAVA %s)" % (len(diff), diff[0], seen.get(diff[0]),
                                                   lava.get(diff[0])))
        else:
            ktap.append("ok 2 LAVA's test cases agree with the console # %d selftests"
                        % len(seen))
        sname = "lava-%s" % lane
        with open(os.path.join(out, "ktap", sname + ".ktap"), "w") as f:
            f.write("KTAP version 1\n1..%d\n%s\n" % (len(ktap), "\n".join(ktap)))
        ok = all(x.startswith("ok ") for x in ktap)
        stages.append((sname, "PASS" if ok else "FAIL", 2))
        if lane == "main":
            stages.append(("boot", "PASS" if done else "FAIL", 0 if done else 2))
    with open(os.path.join(out, "stages.tsv"), "w") as f:
        for sname, status, rc in stages:
            f.write("%s\t%s\t0\t%d\n" % (sname, status, 0 if status == "PASS" else rc))
    with open(os.path.join(out, "variants.list"), "w") as f:
        f.write("".join(v + "\n" for v in variants))
    return subprocess.call([sys.executable, os.path.join(TOP, "scripts", "report.py"), out])


if __name__ == "__main__":
    sys.exit(main())
