#!/usr/bin/env python3
"""Turn LAVA job logs of the pack's jobs (make lava) into the workbench's
results: results.ktap, results.json and SUMMARY.md (scripts/report.py),
so that a lab's run and a local one compare side by side.

Usage: lava-collect.py OUTDIR LANE=LOG [LANE=LOG ...]
       lava-collect.py --bench [--console-only] OUTDIR PACK NAME-PAIR=LOG ...

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

--bench: the jobs of a make bench pack (BENCH_LAVA=pack, PACK its
directory; boots.tsv names its jobs NAME-PAIR, e.g. stock-1, patched-1,
stock-fix-1, patched-vmid3-1). Each job's console becomes
OUTDIR/bench-NAME-PAIR.log, the form make bench writes (first line the
QEMU command when the job ran QEMU); then, unless --console-only,
OUTDIR gets bench-boots.tsv (per job: its verdict, its seconds), the
pack's bench.env and host-side cost files, and scripts/bench-report.py
--no-doc writes the report there (bench.json, SUMMARY.md, the ratios).
A job on a board (no QEMU boot command) is described in bench.env by the
console's "Machine model:" (or "DMI:") line and CPU count. A job is
failed when LAVA did not complete it, its console has no
"WORKBENCH-END rc=0" or a scenario printed "not ok"; exit 2 then
(after everything is written), and when bench-report.py fails.
"""
import json
import os
import re
import shutil
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


def console_line(rec, console):
    """Add rec's console line to console, if it has one. The line that
    ends the test monitor (WORKBENCH-END) is logged as "feedback", read
    from the connection after the monitor stopped; a feedback record
    that repeats the target line before it (LAVA's own poweroff echo)
    is not a line of its own."""
    msg = rec.get("msg")
    if not isinstance(msg, str):
        return False
    if rec["lvl"] == "target":
        console.append(msg)
        return True
    if rec["lvl"] == "feedback" and not (console and console[-1] == msg):
        console.append(msg)
        return True
    return False


def parse(path):
    console, cases, job = [], [], None
    for rec in records(path):
        msg = rec.get("msg")
        if console_line(rec, console):
            pass
        elif rec["lvl"] == "results" and isinstance(msg, dict):
            if msg.get("definition") == "lava":
                if msg.get("case") == "job":
                    job = msg
            else:
                tcid = (msg.get("extra") or {}).get("test_case_id", msg.get("case"))
                cases.append((str(tcid), msg.get("result")))
    return console, cases, job


def bench(argv):
    console_only = False
    if argv and argv[0] == "--console-only":
        console_only, argv = True, argv[1:]
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 1
    out, pack = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    if not os.path.isfile(os.path.join(pack, "bench.env")):
        print("E: lava-collect: %s is not a make bench pack (no bench.env)" % pack,
              file=sys.stderr)
        return 1
    jobs = []
    for arg in argv[2:]:
        name, sep, log = arg.partition("=")
        if (not sep or not re.match(r"^(stock|patched)(-[a-z0-9]+)?-[0-9]+$", name)
                or not os.path.isfile(log)):
            print("E: lava-collect: '%s' is not NAME-PAIR=LOG (NAME stock, stock-fix, "
                  "patched, patched-vmidN) with an existing LOG" % arg, file=sys.stderr)
            return 1
        jobs.append((name, log))
    planned = []
    if os.path.isfile(os.path.join(pack, "boots.tsv")):
        with open(os.path.join(pack, "boots.tsv")) as f:
            planned = [ln.rstrip("\n").split("\t")[-1] for ln in f.readlines()[1:] if ln.strip()]
    for name, _ in jobs:
        if planned and name not in planned:
            print("E: lava-collect: %s is not a job of %s/boots.tsv (%s)"
                  % (name, pack, " ".join(planned)), file=sys.stderr)
            return 1
    missing = [n for n in planned if n not in dict(jobs)]
    if missing and not console_only:
        print("W: lava-collect: no log for %d of the pack's %d jobs: %s"
              % (len(missing), len(planned), " ".join(missing)), file=sys.stderr)
    os.makedirs(out, exist_ok=True)
    rows, bad, boards = [], [], []
    for name, log in jobs:
        console, qemu, job, times = [], None, None, []
        for rec in records(log):
            msg = rec.get("msg")
            if rec.get("dt"):
                times.append(str(rec["dt"]))
            if console_line(rec, console):
                pass
            elif isinstance(msg, str) and msg.startswith("Boot command: ") and "qemu-system" in msg:
                qemu = msg[len("Boot command: "):]
            elif (rec["lvl"] == "results" and isinstance(msg, dict)
                  and msg.get("definition") == "lava" and msg.get("case") == "job"):
                job = msg
        with open(os.path.join(out, "bench-%s.log" % name), "w") as f:
            if qemu:
                f.write("# to reproduce: %s\n" % qemu)
            f.write("\n".join(console) + "\n")
        why = []
        if job is None or job.get("result") != "pass":
            why.append("LAVA job not complete (%s)" % (
                "no job result" if job is None else
                "%s: %s" % (job.get("error_type", "?"), job.get("error_msg", "?"))))
        ends = [ln.strip() for ln in console if ln.strip().startswith("WORKBENCH-END")]
        if ends != ["WORKBENCH-END rc=0"]:
            why.append("console: %s" % (ends[-1] if ends else "no WORKBENCH-END"))
        why += ["console: %s" % ln.strip() for ln in console
                if re.match(r"^not ok \d+ bench-", ln.strip())]
        if why:
            bad.append("%s: %s" % (name, "; ".join(why)))
        if not qemu:
            model = next((ln.split(":", 1)[1].strip() for ln in console
                          if re.search(r"\b(Machine model|DMI):", ln)), "unknown board")
            cpus = next((m.group(1) for ln in console
                         for m in [re.search(r"SMP: Total of (\d+) processors", ln)] if m), "?")
            boards.append("%s, %s CPUs" % (model, cpus))
        secs = ""
        if len(times) >= 2:
            try:
                from datetime import datetime
                secs = "%d" % (datetime.fromisoformat(times[-1]) -
                               datetime.fromisoformat(times[0])).total_seconds()
            except ValueError:
                pass
        kind, _, rest = name.partition("-")
        variant, _, pair = rest.rpartition("-")
        rows.append("%s\t%s\t%s\t%d\t%s\t\t" % (kind, variant or "-", pair,
                                                1 if why else 0, secs))
        print("I: lava-collect: bench %s: %s" % (name, "FAIL: " + "; ".join(why) if why
                                                 else "complete, %d BENCH lines" %
                                                 sum(1 for ln in console if ln.startswith("BENCH "))))
    if console_only:
        return 2 if bad else 0
    with open(os.path.join(out, "bench-boots.tsv"), "w") as f:
        f.write("kind\tvariant\tpair\trc\tseconds\tloadavg_start\tloadavg_end\n")
        f.write("".join(r + "\n" for r in rows))
    for fn in sorted(os.listdir(pack)):
        if fn.startswith("bench-cost"):
            shutil.copy(os.path.join(pack, fn), out)
    with open(os.path.join(pack, "bench.env")) as f:
        env = f.read()
    env += "runner=lava\n"
    if boards:
        env += "lava_board=%s\n" % "; ".join(sorted(set(boards)))
    with open(os.path.join(out, "bench.env"), "w") as f:
        f.write(env)
    rc = subprocess.call([sys.executable, os.path.join(TOP, "scripts", "bench-report.py"),
                          "--no-doc", out])
    for b in bad:
        print("E: lava-collect: bench %s" % b, file=sys.stderr)
    return 2 if bad or rc else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--bench":
        return bench(sys.argv[2:])
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
