#!/usr/bin/env python3
"""Tests and splats of a stock and a patched boot (make debug-compare).

usage: splat-compare.py RESULTS PROFILE

Reads RESULTS/stock/console.log and RESULTS/patched/console.log, lists each
KVM selftest and kvm-unit-tests result of both kernels side by side (with
the first failure line of each boot's SUMMARY.md), counts the splat lines
of each (the same definition of a splat as make check: report.py's SPLAT)
by kind, and writes RESULTS/debug-compare.tsv and
RESULTS/debug-compare.md. KCSAN reports are also grouped by race site (the
two functions of "data-race in A / B", offsets dropped, in sorted order),
each marked "kvm" when a function belongs to KVM, the vgic or the ASID/VMID
allocator (the code this series changes) and "new" when stock did not show
the site.

It prints the tables and writes the number of patched splat lines that
fail the comparison, the "gate", to RESULTS/debug-compare.gate:
  - default profile: every patched splat line, plus each test that
    failed on the patched kernel or that ran on stock only;
  - debug profile: every patched splat line;
  - kcsan profile: every patched splat line that is not a KCSAN report,
    plus the KCSAN reports whose site is both "kvm" and "new". KCSAN
    reports races all over a kernel (stock's included); a race in code the
    series does not touch is reported, not judged.
Under kcsan, each console must also show "kcsan: enabled early": a
kernel with KCSAN built in but not enabled reports nothing, and its 0
would read as "no race" (allnoconfig turns KCSAN_EARLY_ENABLE off unless
the fragment sets it). Without that line the script exits 3.
Can be re-run on an existing results directory.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import SPLAT, TS  # noqa: E402

KINDS = [
    ("lockdep", r"Invalid wait context|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage"),
    ("KASAN", r"KASAN:"),
    ("KCSAN", r"KCSAN:"),
    ("kmemleak", r"kmemleak: .* new suspected"),
    ("UBSAN", r"UBSAN:"),
    ("refcount", r"refcount_t: "),
    ("WARNING", r"WARNING: CPU:"),
    ("ID alias", r"\b(?:asid_flush_cpu|vmid_flush_all): ID \d+ shared by two contexts"),
]
# "BUG: KCSAN: data-race in f+0x1c/0x40 / g+0x8/0x20", "... in f / g",
# "BUG: KCSAN: data-race in f" (one side unknown), "BUG: KCSAN: assert:
# race in f / g" (ASSERT_EXCLUSIVE_*).
KCSAN_SITE = re.compile(r"KCSAN: (.+?) in (.*)$")
# Functions of the code the series changes: KVM (kvm_*, __kvm_*), the
# vgic and its ITS, the ASID/VMID library and its two users.
KVM_FN = re.compile(r"kvm|vgic|_its_|^its_|asid|vmid|new_context|flush_context|"
                    r"check_and_switch_context|arm64_mm_context|cpu_do_switch_mm")
KERNELS = ("stock", "patched")
# "ok 3 selftests: kvm: vgic_its_cache", "not ok 1 kvm-unit-tests: its-trigger # ..."
TAP = re.compile(r"^(not ok|ok) \d+ (selftests: kvm: |kvm-unit-tests: )(\S+)(?: # (.*))?$")
# "# selftests: kvm: vgic_its_cache", printed when the test starts
START = re.compile(r"^# (selftests: kvm: |kvm-unit-tests: )(\S+)$")
# SUMMARY.md: "- kselftest-kvm / kvm:vgic_its_cache: `reason`"
FAILURE = re.compile(r"^- [\w-]+ / ((?:kvm|kut):\S+): `(.*)`$")


def tests_of(res, kind, lines):
    """The results of one boot, {name: result} with names as in the report
    (kvm:<test>, kut:<test>), and what a test missing from it gets."""
    why = {}
    summary = os.path.join(res, kind, "SUMMARY.md")
    if os.path.exists(summary):
        for ln in open(summary, errors="replace"):
            m = FAILURE.match(ln.rstrip("\n"))
            if m:
                why[m.group(1)] = m.group(2)
    rc = os.path.join(res, kind + ".rc")
    rc = open(rc).read().strip() if os.path.exists(rc) else "0"
    ended = {"124": "hung", "255": "panicked"}.get(rc)
    out, running = {}, None
    for ln in lines:
        ln = TS.sub("", ln).strip()
        m = START.match(ln) or TAP.match(ln)
        if not m:
            continue
        start = m.re is START
        name = "kvm:" if m.group(1 if start else 2).startswith("selftests") else "kut:"
        if start:
            running = name + m.group(2)
            continue
        running = None
        name += m.group(3)
        if m.group(1) == "not ok":
            out[name] = "FAIL: " + why.get(name, m.group(4) or "")
        elif m.group(4) and m.group(4).startswith("SKIP"):
            out[name] = m.group(4) if len(m.group(4)) <= 72 else m.group(4)[:71] + "…"
        else:
            out[name] = "ok"
    if running and ended:
        out[running] = "FAIL: the boot %s in this test" % ended
    return out, ("not run (the boot %s)" % ended if ended else "not run")


def site_of(line):
    m = KCSAN_SITE.search(line)
    if not m:
        return None
    fns = sorted({re.sub(r"\+0x[0-9a-f]+/0x[0-9a-f]+$", "", f.strip())
                  for f in m.group(2).split(" / ") if f.strip()})
    return "%s in %s" % (m.group(1), " / ".join(fns))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: splat-compare.py RESULTS PROFILE")
    res, profile = sys.argv[1], sys.argv[2]
    rows, firsts, sites, tests, missing = {}, {}, {}, {}, {}
    for kind in KERNELS:
        path = os.path.join(res, kind, "console.log")
        lines = open(path, errors="replace").read().splitlines() if os.path.exists(path) else []
        if profile == "kcsan" and not any("kcsan: enabled early" in ln for ln in lines):
            sys.stderr.write("E: splat-compare: %s: no 'kcsan: enabled early' line: KCSAN was "
                             "not running, its reports would mean nothing\n" % path)
            sys.exit(3)
        tests[kind], missing[kind] = tests_of(res, kind, lines)
        splats = [TS.sub("", ln) for ln in lines if SPLAT.search(ln)]
        counts = {k: 0 for k, _ in KINDS}
        counts["other"] = 0
        sites[kind] = {}
        for ln in splats:
            for k, rx in KINDS:
                if re.search(rx, ln):
                    counts[k] += 1
                    if k == "KCSAN":
                        s = site_of(ln) or ln
                        sites[kind][s] = sites[kind].get(s, 0) + 1
                    break
            else:
                counts["other"] += 1
        counts["total"] = len(splats)
        rows[kind] = counts
        firsts[kind] = [ln for ln in splats if "KCSAN:" not in ln][:5]

    all_sites = sorted(set(sites["stock"]) | set(sites["patched"]))
    kvm = {s: bool(any(KVM_FN.search(f) for f in s.split(" in ", 1)[-1].split(" / ")))
           for s in all_sites}
    new = {s: s not in sites["stock"] for s in all_sites}
    p = rows["patched"]
    if profile == "kcsan":
        gate = p["total"] - p["KCSAN"] + sum(n for s, n in sites["patched"].items()
                                            if kvm[s] and new[s])
    else:
        gate = p["total"]
    all_tests = sorted(set(tests["stock"]) | set(tests["patched"]))
    bad_tests = [t for t in all_tests if not tests["patched"].get(t, "FAIL").startswith(("ok", "SKIP"))]
    if profile == "default":
        gate += len(bad_tests)

    cols = [k for k, _ in KINDS] + ["other", "total"]
    with open(os.path.join(res, "debug-compare.tsv"), "w") as f:
        f.write("kernel\t" + "\t".join(cols) + "\tsites\n")
        for kind in KERNELS:
            f.write(kind + "\t" + "\t".join(str(rows[kind][c]) for c in cols)
                    + "\t%d\n" % len(sites[kind]))
    with open(os.path.join(res, "debug-compare.gate"), "w") as f:
        f.write("%d\n" % gate)
    with open(os.path.join(res, "debug-compare.md"), "w") as f:
        if all_tests:
            f.write("Tests, profile %s (%d; patched failures: %d):\n\n"
                    % (profile, len(all_tests), len(bad_tests)))
            f.write("| test | stock | patched |\n| --- | --- | --- |\n")
            for t in all_tests:
                f.write("| %s | %s | %s |\n" % (t, *(tests[k].get(t, missing[k]).replace("|", "\\|")
                                                     for k in KERNELS)))
            f.write("\n")
        f.write("Splat lines in the console, profile %s, same plan for both kernels:\n\n" % profile)
        f.write("| kernel | " + " | ".join(cols) + " |\n|" + " --- |" * (len(cols) + 1) + "\n")
        for kind in KERNELS:
            f.write("| %s | " % kind + " | ".join(str(rows[kind][c]) for c in cols) + " |\n")
        if all_sites:
            f.write("\nKCSAN race sites (%d stock, %d patched; \"kvm\": KVM, vgic or "
                    "ASID/VMID code; \"new\": not seen on stock):\n\n"
                    % (len(sites["stock"]), len(sites["patched"])))
            f.write("| site | stock | patched | area |\n| --- | --- | --- | --- |\n")
            for s in sorted(all_sites, key=lambda s: (not kvm[s], s)):
                area = ", ".join(t for t, on in (("kvm", kvm[s]), ("new", new[s] and sites["patched"].get(s))) if on)
                f.write("| `%s` | %d | %d | %s |\n" % (s, sites["stock"].get(s, 0),
                                                     sites["patched"].get(s, 0), area or "-"))
        for kind in KERNELS:
            if firsts[kind]:
                f.write("\nFirst %s splat lines other than KCSAN reports:\n\n" % kind)
                for ln in firsts[kind]:
                    f.write("    %s\n" % ln)
        f.write("\nGate (patched splat lines%s that fail the comparison): %d\n"
                % (" and tests" if profile == "default" else "", gate))
    print(open(os.path.join(res, "debug-compare.md")).read())


if __name__ == "__main__":
    main()
