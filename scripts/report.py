#!/usr/bin/env python3
"""Stage "report": turn one run's raw outputs into results.

Reads RESULTS/stages.tsv (host stages: name, status, seconds, rc),
RESULTS/logs/stage-*.log, RESULTS/console.log (the L1 guest console) and
RESULTS/console-<variant>.log (the boots of the "variants" stage, whose
stages are reported as <variant>/<stage>), and writes:
  results.ktap   KTAP v1, one nested subtest per stage; kselftest TAP and
                 KUnit KTAP lines kept verbatim; "# Totals:" per stage
  results.json   build info, per-stage {status, duration}, and the run's
                 classified exit code (results.exit_code, as run.sh exits)
  SUMMARY.md     one page for humans
  logs/<test>.log  per-test logs (kvm:<selftest>, kut:<kvm-unit-test>),
                 first line = the command
and prints the final "N passed, N failed, N skipped" line.
Exit status: 0 if nothing failed, 2 otherwise.

Usage: report.py RESULTS_DIR   (re-runnable: `make report` rebuilds the
latest results from the same inputs).
"""
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys

TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
TS_SECONDS = re.compile(r"^\[\s*(\d+\.\d+)\]")
RESULT = re.compile(r"^(\s*)(not ok|ok) (\d+) (.*?)(?:\s+#\s*(.*))?$")
SPLAT = re.compile(
    r"(WARNING: CPU:|BUG: |Oops|Unable to handle kernel|"
    r"possible circular locking|possible recursive locking|"
    r"inconsistent lock state|suspicious RCU usage|"
    r"KASAN:|UBSAN:|KCSAN:|refcount_t: |kmemleak: .* new suspected|"
    r"Kernel panic - not syncing|soft lockup|hard LOCKUP|hung_task|INFO: task .* blocked|"
    r"\b(?:asid_flush_cpu|vmid_flush_all): ID \d+ shared by two contexts)")

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# scripts/lib.sh's E_* codes, as scripts/run.sh names them.
EXIT_MEANING = {0: "all passed", 1: "tool or usage error", 2: "build or test failure",
                124: "host timeout",
                255: "guest panic, or QEMU exited without the sentinel"}


def sh(cmd):
    # A backstop only (git and version queries take well under a second),
    # far above what a busy machine makes of them.
    try:
        return subprocess.run(cmd, shell=True, capture_output=True,
                               text=True, timeout=600).stdout.strip()
    except subprocess.TimeoutExpired:
        return "(no answer in 600 s: %s)" % cmd
    except Exception:  # noqa: BLE001 - informational only
        return ""


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


class Stage:
    def __init__(self, name, status, seconds, lines=None, rc=None):
        self.name, self.status, self.seconds = name, status, seconds
        self.lines = lines or []  # verbatim nested TAP/KTAP
        self.rc = rc
        self.npass = self.nfail = self.nskip = 0
        self.failures = []  # (name, first assertion line)
        self.skips = []  # (name, reason)

    def count_results(self, indent=0):
        for ln in self.lines:
            m = RESULT.match(ln)
            if not m or len(m.group(1)) != indent:
                continue
            directive = (m.group(5) or "").strip()
            name = (m.group(4).replace("selftests: kvm: ", "kvm:")
                    .replace("kvm-unit-tests: ", "kut:"))
            if directive.upper().startswith("SKIP"):
                self.nskip += 1
                self.skips.append((name, directive[4:].strip()))
            elif m.group(2) == "ok":
                self.npass += 1
            else:
                self.nfail += 1
                self.failures.append((name, directive))


def kunit_stage(console):
    """KUnit runs at boot; its KTAP is on the console before WORKBENCH-BEGIN.

    It has no WORKBENCH-STAGE-END line: its duration is the span of the
    printk timestamps of its first and last KTAP lines (None without them).
    """
    lines, on, first, last = [], False, None, None
    for raw in console.splitlines():
        if "WORKBENCH-BEGIN" in raw:
            break
        ln = TS.sub("", raw)
        if not on and ln.startswith("KTAP version 1"):
            on = True
        if on and re.match(r"^\s*(KTAP version|TAP version|\d+\.\.\d+|ok |not ok |# )",
                           ln):
            lines.append(ln)
            m = TS_SECONDS.match(raw)
            if m:
                last = float(m.group(1))
                first = last if first is None else first
    seconds = int(round(last - first)) if first is not None else None
    st = Stage("kunit", "PASS", seconds, lines)
    # Count leaf test cases (one level below the suites).
    st.count_results(indent=4)
    if not lines:
        st.status = "FAIL"
        st.failures.append(("kunit", "no KUnit KTAP on the console"))
        st.nfail += 1
    elif st.nfail or any(RESULT.match(x) and RESULT.match(x).group(2) == "not ok"
                         for x in lines if not x.startswith(" ")):
        st.status = "FAIL"
    # The suite skips a case that the machine cannot run (kunit_skip());
    # the workbench boots a machine that runs them all: a skip is a failure.
    for name, why in st.skips:
        st.status = "FAIL"
        st.nskip -= 1
        st.nfail += 1
        st.failures.append((name, "skipped in the workbench's configuration: " + why))
    st.skips = []
    return st


def guest_stages(console, results, prefix=""):
    stages, cur, seen_end = [], None, False
    for raw in console.splitlines():
        ln = raw.rstrip("\r")
        m = re.match(r"^WORKBENCH-STAGE-BEGIN (\S+)", ln)
        if m:
            cur = Stage(m.group(1), "FAIL", None)
            stages.append(cur)
            continue
        m = re.match(r"^WORKBENCH-STAGE-END (\S+) rc=(\d+) seconds=(\d+)", ln)
        if m and cur:
            cur.status = "PASS" if m.group(2) == "0" else "FAIL"
            cur.rc, cur.seconds = int(m.group(2)), int(m.group(3))
            cur = None
            continue
        if ln.startswith("WORKBENCH-END"):
            seen_end = True
        if cur is not None:
            # Kernel messages interleaved with test output become comments.
            cur.lines.append("# console: " + ln if TS.match(ln) else ln)
    for st in stages:
        st.count_results(indent=0)
        if st.name in TEST_LOGS:
            split_selftest_logs(st, results, prefix, TEST_LOGS[st.name])
        st.name = prefix + st.name
        if st.status == "FAIL" and not st.nfail:
            st.nfail = 1
            st.failures.append((st.name, "stage ended without its end marker"
                                + unfinished_test(st)
                                if st.rc is None else "stage rc=%d" % st.rc))
    return stages, seen_end


class TestLog:
    """How a guest stage frames each test: header "# <intro><name>", result
    line ending in "<intro><name>", log file and failure key "<key>:<name>"."""
    def __init__(self, intro, key, first_failure):
        self.header = re.compile(r"^# " + re.escape(intro) + r"(\S+)$")
        self.intro, self.key, self.first_failure = intro, key, first_failure


def selftest_assertion(body):
    """The line after a kselftest's first 'Test Assertion Failure'."""
    for i, b in enumerate(body):
        if "Test Assertion Failure" in b and i + 1 < len(body):
            return body[i + 1].strip()
    return None


def kut_failure(body):
    """A kvm-unit-test's first 'FAIL: ' line (its stage's TAP line says the same)."""
    return next((b.strip() for b in body if b.startswith("FAIL: ")), None)


# Guest stages whose tests get a logs/<key>:<name>.log each.
TEST_LOGS = {
    "kselftest-kvm": TestLog("selftests: kvm: ", "kvm", selftest_assertion),
    "kvm-unit-tests": TestLog("kvm-unit-tests: ", "kut", kut_failure),
}


def unfinished_test(st):
    """' while running <key>:<name>' if the stage's last test has no result line."""
    kind = TEST_LOGS.get(st.name.rsplit("/", 1)[-1], TEST_LOGS["kselftest-kvm"])
    last = None
    for ln in st.lines:
        m = kind.header.match(ln)
        if m:
            last = m.group(1)
        elif last and (r := RESULT.match(ln)) and r.group(4).endswith(kind.intro + last):
            last = None
    return " while running %s:%s" % (kind.key, last) if last else ""


def split_selftest_logs(st, results, prefix="", kind=None):
    """logs/[<variant>:]<key>:<name>.log per test; first failure line per failure."""
    kind = kind or TEST_LOGS["kselftest-kvm"]
    logdir = os.path.join(results, "logs")
    cur, buf, first_assert = None, [], {}
    for ln in st.lines:
        m = kind.header.match(ln)
        if m:
            cur, buf = m.group(1), []
            continue
        if cur is None:
            continue
        m = RESULT.match(ln)
        if m and m.group(4).endswith(kind.intro + cur):
            body = [b[2:] if b.startswith("# ") else b for b in buf]
            cmdline = next((b for b in body if b.startswith("command: ")), "")
            fname = "%s%s:%s.log" % (prefix.replace("/", ":"), kind.key, cur)
            with open(os.path.join(logdir, fname), "w") as f:
                f.write("# to reproduce (in the L1 guest): %s\n" % cmdline[9:])
                f.write("\n".join(body) + "\n" + ln + "\n")
            first = kind.first_failure(body)
            if first:
                first_assert["%s:%s" % (kind.key, cur)] = first
            cur = None
            continue
        buf.append(ln)
    st.failures = [(n, first_assert.get(n, d)) for n, d in st.failures]


def hackbench_times(stages):
    times = []
    for st in stages:
        for ln in st.lines:
            m = re.search(r"L2-HACKBENCH run=\d+ Time: ([0-9.]+)", ln)
            if m:
                times.append(float(m.group(1)))
    return times


def host_stages(results):
    out = []
    for row in read(os.path.join(results, "stages.tsv")).splitlines():
        name, status, seconds, rc = (row.split("\t") + ["", "", "", ""])[:4]
        st = Stage(name, status, int(seconds or 0), rc=int(rc or 0))
        log = read(os.path.join(results, "logs", "stage-%s.log" % name))
        ktap = read(os.path.join(results, "ktap", "%s.ktap" % name))
        if ktap:
            st.lines = ktap.splitlines()
            st.count_results(indent=0)
        else:
            if status == "PASS":
                st.npass = 1
            else:
                st.nfail = 1
                err = [x for x in log.splitlines() if x.startswith("E: ")]
                st.failures.append((name, err[-1] if err else "rc=%s" % rc))
        out.append(st)
    return out


def fmt_dur(s):
    if s is None:
        return "?"
    return "%d:%02d:%02d" % (s // 3600, s % 3600 // 60, s % 60)


def boot_stages(console, results, prefix):
    """KUnit, the guest stages and a splat check of one boot's console."""
    gstages, _ = guest_stages(console, results, prefix)
    ku = kunit_stage(console)
    ku.name = prefix + ku.name
    stages = [ku] + gstages
    splats = [TS.sub("", ln) for ln in console.splitlines() if SPLAT.search(ln)]
    if splats:
        sp = Stage(prefix + "console-splats", "FAIL", None,
                   ["# " + s for s in splats[:50]])
        sp.nfail = 1
        sp.failures.append(("console", "%d splat line(s), first: %s"
                            % (len(splats), splats[0])))
        stages.append(sp)
    return stages, splats


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: report.py RESULTS_DIR", file=sys.stderr)
        return 1
    results = os.path.abspath(sys.argv[1])
    os.makedirs(os.path.join(results, "logs"), exist_ok=True)
    console = read(os.path.join(results, "console.log"))

    stages = host_stages(results)
    host_stages_list = list(stages)
    host_rcs = [s.rc for s in stages if s.rc]
    booted = any(s.name == "boot" for s in stages)
    splats = []
    if booted:
        bstages, bsplats = boot_stages(console, results, "")
        stages += bstages
        splats += bsplats
    # One console per boot of the "variants" stage, in the order booted.
    for name in read(os.path.join(results, "variants.list")).split():
        vconsole = read(os.path.join(results, "console-%s.log" % name))
        bstages, bsplats = boot_stages(vconsole, results, name + "/")
        stages += bstages
        splats += bsplats
    # A host stage named as a guest stage (kvm-unit-tests: the build on
    # the host, the tests in the guest) is reported as host:<name>, so
    # that every stage keeps its own entry in results.json.
    guest_names = {s.name for s in stages[len(host_stages_list):]}
    for st in host_stages_list:
        if st.name in guest_names:
            st.name = "host:" + st.name

    # Boots that scripts/boot.sh ran twice after the known EL2 loop.
    retried = []
    for name in ["boot"] + read(os.path.join(results, "variants.list")).split():
        log = "console.log" if name == "boot" else "console-%s.log" % name
        why = read(os.path.join(results, log + ".retried")).strip()
        if why:
            retried.append((name, why))

    # results.ktap
    out = ["KTAP version 1", "1..%d" % len(stages)]
    for i, st in enumerate(stages, 1):
        out.append("  KTAP version 1")
        out += ["  " + ln for ln in st.lines if not ln.startswith(("KTAP version", "TAP version"))]
        out.append("  # Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0"
                   % (st.npass, st.nfail, st.nskip))
        out.append("%s %d %s # duration %s" % ("ok" if st.status == "PASS" and not st.nfail
                                              else "not ok", i, st.name, fmt_dur(st.seconds)))
    with open(os.path.join(results, "results.ktap"), "w") as f:
        f.write("\n".join(out) + "\n")

    npass = sum(s.npass for s in stages)
    nfail = sum(s.nfail for s in stages)
    nskip = sum(s.nskip for s in stages)
    # The run's classified exit code, as scripts/run.sh prints it ("I: run:
    # exit N (...)") and exits with: the first failing host stage's code,
    # else 2 when a test failed, else 0. (make itself exits 2 on any failure.)
    exit_code = host_rcs[0] if host_rcs else (2 if nfail else 0)
    times = hackbench_times(stages)

    env = {}
    for ln in read(os.path.join(TOP, "base", "linux-source-6.12.env")).splitlines():
        if "=" in ln and not ln.startswith("#"):
            k, v = ln.split("=", 1)
            env[k] = v
    series = [ln.strip() for ln in read(os.path.join(TOP, "series")).splitlines()
              if ln.strip() and not ln.startswith("#")]
    h = hashlib.sha256()
    for p in series:
        h.update(read(os.path.join(TOP, "patches", p)).encode())
    repro = "make check" if os.environ.get("MAKE_TARGET") == "check" else "make"
    profile = os.environ.get("PROFILE", "default")
    if profile != "default":
        repro += " PROFILE=" + profile
    info = {
        "build": {
            "debian_package": env.get("DEBIAN_PACKAGE"),
            # the build the stock commit was made from (make fetch), which
            # is not always the installed one
            "debian_version": re.sub(r"^.*\(linux-source-6\.12 (.*)\)$", r"\1", sh(
                "git -C '%s' log -1 --format=%%s stock" % os.path.join(TOP, "build", "linux")))
            or sh("dpkg-query -W -f='${Version}' linux-source-6.12")
            or env.get("DEBIAN_VERSION"),
            "expected_debian_version": env.get("DEBIAN_VERSION"),
            "series_patches": len(series),
            "series_sha256": h.hexdigest(),
            "toolchain": sh("aarch64-linux-gnu-gcc --version | head -n1"),
            "qemu": sh("qemu-system-aarch64 --version | head -n1"),
            "reproducer_cmdline": repro,
            "profile": profile,
        },
        "results": {
            "status": "PASS" if nfail == 0 else "FAIL",
            "exit_code": exit_code,
            "exit_meaning": EXIT_MEANING.get(exit_code, "unexpected"),
            "totals": {"pass": npass, "fail": nfail, "skip": nskip},
            "stages": {s.name: {"status": "PASS" if s.status == "PASS" and not s.nfail
                                else "FAIL", "duration": s.seconds,
                                "pass": s.npass, "fail": s.nfail, "skip": s.nskip}
                       for s in stages},
            # run.sh: seconds from the first stage to the last, and the
            # stages of its second lane (they overlap the others' durations)
            "wall_seconds": int(read(os.path.join(results, "wall-seconds")).strip() or 0) or None,
            "alongside": read(os.path.join(results, "alongside.list")).split(),
            "hackbench_l2_seconds": times,
            "console_splats": len(splats),
            "retried_boots": dict(retried),
        },
    }
    with open(os.path.join(results, "results.json"), "w") as f:
        json.dump(info, f, indent=2)

    b = info["build"]
    md = ["# Workbench results %s" % os.path.basename(results), "",
          "- Base: %s %s (expected %s)" % (b["debian_package"], b["debian_version"],
                                            b["expected_debian_version"]),
          "- Series: %d patches, sha256 %s" % (b["series_patches"], b["series_sha256"][:16]),
          "- Toolchain: %s; QEMU: %s" % (b["toolchain"], b["qemu"]),
          "- Kernel profile: %s" % b["profile"],
          "- Result: **%s** — %d passed, %d failed, %d skipped; exit %d (%s)" % (
              info["results"]["status"], npass, nfail, nskip, exit_code,
              info["results"]["exit_meaning"]), "",
          "## Stages", "", "```"]
    lane = info["results"]["alongside"]
    for s in stages:
        md.append("I: %s: %s in %s (pass %d, fail %d, skip %d)%s" % (
            s.name, "PASS" if s.status == "PASS" and not s.nfail else "FAIL",
            fmt_dur(s.seconds), s.npass, s.nfail, s.nskip,
            ", alongside" if s.name in lane else ""))
    md.append("```")
    if info["results"]["wall_seconds"]:
        md += ["", "Wall clock, first stage to last: %s%s." % (
            fmt_dur(info["results"]["wall_seconds"]),
            "; the stages marked alongside ran in a second lane beside the boots"
            if lane else "")]
    fails = [(s.name, n, d) for s in stages for n, d in s.failures]
    if fails:
        md += ["", "## Failures", ""]
        md += ["- %s / %s: `%s`" % f for f in fails]
    if retried:
        md += ["", "## Retried boots (known hang, Documentation/known-hangs.md)", ""]
        md += ["- %s: %s" % r for r in retried]
    skips = [(n, r) for s in stages for n, r in s.skips]
    if skips:
        md += ["", "## Skipped (with reasons)", ""]
        md += ["- %s: %s" % sk for sk in skips]
    if times:
        sd = statistics.stdev(times) if len(times) > 1 else 0.0
        md += ["", "## Nested hackbench", "",
               "%d L2 runs: mean %.3f s ± %.3f s (min %.3f, max %.3f); "
               "wall-clock inside TCG-emulated L1, not a benchmark (see make bench)."
               % (len(times), statistics.mean(times), sd, min(times), max(times))]
    md += ["", "## Reproduce", "", "```", "%s   # in a clone of this repository" % repro,
           "```", "", "Console: console.log; per-test logs: logs/; KTAP: results.ktap."]
    with open(os.path.join(results, "SUMMARY.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    for r in retried:
        print("W: report: boot %s was run twice: %s" % r)
    for f in fails:
        print("E: report: FAIL %s / %s: %s" % f)
    print("I: report: %s" % os.path.join(results, "SUMMARY.md"))
    print("%d passed, %d failed, %d skipped" % (npass, nfail, nskip))
    return 0 if nfail == 0 else 2


if __name__ == "__main__":
    sys.exit(main())
