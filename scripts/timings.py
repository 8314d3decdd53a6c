#!/usr/bin/env python3
"""make timings: README.md's timing table, generated from one run.

usage: timings.py RESULTS_DIR README

Reads RESULTS_DIR/results.json (written by scripts/report.py) and replaces
the lines between "<!-- timings:begin -->" and "<!-- timings:end -->" in
README with one markdown table: each host stage with its duration, status
and test counts; under "boot" its guest stages, under "variants" one row
per variant boot (its guest stages summed), "∥" marking the stages that
ran beside the boots; and the run's wall clock (the sum of the host stages
for a run without one). The line above the table says
what the run was: which target's stages it ran (from the Makefile's
PIPELINE and CHECK), the series' patch count and sha256, the QEMU and
the kernel profile. The workbench records neither a commit of this repository nor
whether a run was cold or warm, so the table does not say either.

Exit: 0 written; 1 no results.json, or no markers in README.
"""
import json
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- timings:begin -->", "<!-- timings:end -->"


def die(msg):
    print("E: timings: %s" % msg, file=sys.stderr)
    sys.exit(1)


def fmt(seconds):
    if seconds is None:
        return "–"
    return "%d:%02d" % (seconds // 60, seconds % 60)


def make_lists():
    """The Makefile's PIPELINE (make) and CHECK (make check) stage lists."""
    lists = {}
    try:
        with open(os.path.join(TOP, "Makefile")) as f:
            for ln in f:
                m = re.match(r"^(PIPELINE|CHECK)\s*:?=\s*(.*)$", ln)
                if m:
                    lists[m.group(1)] = m.group(2).split()
    except OSError:
        pass
    return lists


def is_host(name):
    """A host stage has a script; one also named as a guest stage is host:<name>."""
    if "/" in name:
        return False
    if name.startswith("host:"):
        return True
    return (os.path.exists(os.path.join(TOP, "scripts", name + ".sh"))
            and not os.path.exists(os.path.join(TOP, "selftests", "guest",
                                                "stage-%s.sh" % name)))


def what_ran(host, profile):
    lists = make_lists()
    names = [n[len("host:"):] if n.startswith("host:") else n for n in host]
    target = None
    if names and names == lists.get("CHECK"):
        target = "make check"
    elif names and names == lists.get("PIPELINE"):
        target = "make"
    if target and profile and profile != "default":
        target += " PROFILE=" + profile
    if target:
        return "`%s`" % target
    return "partial (host stages: %s)" % (" ".join(names) or "none")


def table(results_dir):
    path = os.path.join(results_dir, "results.json")
    if not os.path.isfile(path):
        die("no %s: run make or make check first (they write it), then make timings" % path)
    try:
        with open(path) as f:
            info = json.load(f)
        build, res = info["build"], info["results"]
        stages = res["stages"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        die("%s is not a results.json of scripts/report.py: %s" % (path, e))

    host = [n for n in stages if is_host(n)]
    main_guest = [n for n in stages if n not in host and "/" not in n]
    variant_guest = [n for n in stages if "/" in n]

    def row(label, st):
        return "| %s | %s | %s | %d/%d/%d |" % (
            label, fmt(st.get("duration")), st.get("status", "?"),
            st.get("pass", 0), st.get("fail", 0), st.get("skip", 0))

    # The guest stages of each variant boot, summed into one row per boot.
    per_variant = {}
    for g in variant_guest:
        v = per_variant.setdefault(g.split("/", 1)[0], {
            "duration": 0, "status": "PASS", "pass": 0, "fail": 0, "skip": 0})
        st = stages[g]
        v["duration"] += st.get("duration") or 0
        if st.get("status") != "PASS":
            v["status"] = "FAIL"
        for k in ("pass", "fail", "skip"):
            v[k] += st.get(k, 0)
    guest_rows = [("↳ " + g, stages[g]) for g in main_guest]
    variant_rows = [("↳ %s: its guest stages" % v, st) for v, st in per_variant.items()]

    lane = res.get("alongside") or []
    rows = []
    for n in host:
        rows.append(row(n + (" ∥" if n in lane else ""), stages[n]))
        if n == "boot":
            rows += [row(*r) for r in guest_rows]
            guest_rows = []
        elif n == "variants":
            rows += [row(*r) for r in variant_rows]
            variant_rows = []
    rows += [row(*r) for r in guest_rows + variant_rows]

    # The wall clock of the run when run.sh recorded it: the stages of its
    # second lane overlap the others, so their sum is more.
    total = res.get("wall_seconds") or sum(stages[n].get("duration") or 0 for n in host)
    tot = res.get("totals", {})
    qemu = build.get("qemu") or "?"
    qm = re.search(r"version (\S+)", qemu)
    lines = [
        "Last run: %s; series of %s patches (sha256 %s), QEMU %s; exit %s (%s). "
        "Generated by `make timings`." % (
            what_ran(host, build.get("profile")), build.get("series_patches", "?"),
            (build.get("series_sha256") or "?")[:16], qm.group(1) if qm else qemu,
            res.get("exit_code", "?"), res.get("exit_meaning", "?")),
        "",
        "| stage (↳: in the boot above; ∥: alongside) | time | status | pass/fail/skip |",
        "| --- | --- | --- | --- |",
    ]
    lines += rows
    lines.append("| **total** (%s) | **%s** | **%s** | **%d/%d/%d** |" % (
        "wall clock" if res.get("wall_seconds") else "host stages", fmt(total),
        res.get("status", "?"), tot.get("pass", 0), tot.get("fail", 0), tot.get("skip", 0)))
    # Plain `make` runs PIPELINE's stages, and its boot has no stage that
    # make check adds to the guest (STAGES_EXTRA: kvm-unit-tests).
    pipe = make_lists().get("PIPELINE") or []
    if pipe and set(pipe) < set(host):
        t = sum(stages[n].get("duration") or 0 for n in pipe if n in stages)
        t -= sum(stages[g].get("duration") or 0 for g in main_guest
                 if g.endswith("kvm-unit-tests"))
        lines += ["", "Plain `make` (no kvm-unit-tests, one lane): about %s here."
                  % fmt(t)]
    return lines


def main():
    if len(sys.argv) != 3:
        print("usage: timings.py RESULTS_DIR README", file=sys.stderr)
        return 1
    results_dir, readme = sys.argv[1], sys.argv[2]
    try:
        with open(readme) as f:
            text = f.read().split("\n")
    except OSError as e:
        die("cannot read %s: %s" % (readme, e))
    try:
        b, e = text.index(BEGIN), text.index(END)
    except ValueError:
        die("%s has no %s ... %s block" % (readme, BEGIN, END))
    if e < b:
        die("%s: %s comes before %s" % (readme, END, BEGIN))
    new = text[:b + 1] + table(results_dir) + text[e:]
    tmp = readme + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(new))
    os.replace(tmp, readme)
    size = os.path.getsize(readme)
    print("I: timings: %s: table from %s" % (readme, os.path.join(results_dir, "results.json")))
    if size > 12288:
        print("W: timings: %s is now %d bytes, more than 12 KiB (make check-series fails)"
              % (readme, size), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
