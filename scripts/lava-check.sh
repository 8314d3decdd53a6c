#!/usr/bin/env bash
# "make lava-check": the LAVA pack works, checked offline with Debian's
# lava-dispatcher (sudo make deps installs it):
#  1. every job of a pack (scripts/lava.sh), the board templates filled in
#     by scripts/lava-render.sh, passes lava-common's job schema, strict;
#  2. lava-run runs each qemu job (one per lane: main and the variants,
#     a short plan each), and scripts/lava-collect.py's verdicts equal
#     those of scripts/boot.sh booting the same kernel and initramfs
#     (each test's result, the skips included);
#  3. seeded failures are failures: a test that fails, a guest kernel that
#     panics, a guest that hangs (workbench.fault=, selftests/guest/init.sh);
#  4. make bench's jobs (BENCH_LAVA, scripts/bench.sh): a bench job of the
#     series kernel (the exit_cost scenario, one VM for one second) under
#     lava-run, read by lava-collect.py --bench: bench-report.py's figure
#     is the console's BENCH line; the same log in a LAVA server's YAML
#     form without QEMU's boot command reads as a board's (its machine
#     from the console); the job with a panic fails.
# Results: build/lava-check/: per lane lava-<lane>.log, the collector's
# results in lava/, the local boots' in local/, verdicts.tsv (test, LAVA's
# verdict, the local one), seed-<name>.log; all but the packs are copied
# to $RESULTS/lava/ when RESULTS is set (make check).
#   LAVA_CHECK_LANES  lanes to run (default: all)
stage=lava-check
. "$(dirname "$0")/lib.sh"
. "$TOP/scripts/lava-lib.sh"
need_cmd lava-run /usr/bin/python3
/usr/bin/python3 -c 'import lava_common.schemas' 2>/dev/null ||
	die $E_USAGE "no lava_common (lava-dispatcher): run 'sudo make deps'"

W=$TOP/build/lava-check
rm -rf "$W"
mkdir -p "$W/lava" "$W/local" "$W/scratch"
# KTAP for the report (make check): one line per check passed; a failure
# ends the stage with its message.
ktap=()

# The short plan of each lane: what the lane's own plan gives its machine.
export LAVA_TESTS_MAIN=${LAVA_TESTS_MAIN:-kvm:vgic_init kvm:vgic_its_cache kvm:vgic_its_vlpi}
export LAVA_TESTS_NVHE=${LAVA_TESTS_NVHE:-kvm:vgic_init kvm:vmid_isolation}
export LAVA_TESTS_KPTI_ROLLOVER=${LAVA_TESTS_KPTI_ROLLOVER:-kvm:vgic_init kvm:vmid_isolation}
export LAVA_TESTS_GICV4=${LAVA_TESTS_GICV4:-kvm:vgic_its_vlpi kvm:vgic_its_cache}
pack=$W/pack
LAVA_OUT=$pack LAVA_LANES="${LAVA_CHECK_LANES:-}" LAVA_STAGES="kvm-check kselftest-kvm" \
	"$TOP/scripts/lava.sh" || die $E_FAIL "make lava failed"
lanes=$(cd "$pack/jobs" && ls qemu-*.yaml | sed 's/^qemu-//; s/\.yaml$//' | grep -v -- '-stock$')

# 1. The schema, strict, of every job and of each template filled in.
for t in "$pack"/templates/*.yaml; do
	b=$(basename "$t")
	case $b in
	board-uboot-*) "$TOP/scripts/lava-render.sh" "$t" juno-r2 https://lab.example/series/Image \
		https://lab.example/series/main.cpio.gz https://lab.example/juno-r2.dtb >"$W/rendered-$b" ;;
	*) "$TOP/scripts/lava-render.sh" "$t" synquacer https://lab.example/series/Image \
		https://lab.example/series/main.cpio.gz >"$W/rendered-$b" ;;
	esac || die $E_FAIL "lava-render.sh $b failed"
done
# schema FILE...: lava-common's job schema, strict
schema() {
	/usr/bin/python3 - "$@" <<'EOF' || die $E_FAIL "a job of the pack fails LAVA's schema"
import sys, yaml
from lava_common.schemas import validate
bad = 0
for f in sys.argv[1:]:
    try:
        validate(yaml.safe_load(open(f)), strict=True)
    except Exception as e:
        print("E: lava-check: %s: %s" % (f, e), file=sys.stderr)
        bad += 1
print("I: lava-check: schema (strict): %d jobs, %d invalid" % (len(sys.argv) - 1, bad))
sys.exit(1 if bad else 0)
EOF
}
schema "$pack"/jobs/*.yaml "$W"/rendered-*.yaml
ktap+=("ok $((${#ktap[@]} + 1)) schema: $(ls "$pack"/jobs/*.yaml "$W"/rendered-*.yaml | wc -l) jobs valid (strict)")

# run_lava NAME DEVICE JOB: lava-run's log in $W/NAME.log
id=0
run_lava() {
	id=$((id + 1))
	lava_run "$id" "$W" "$2" "$3" "$W/$1.log"
}

# 2. Each lane under lava-run, and booted by the workbench.
args=()
for n in $lanes; do
	info "lane $n: lava-run"
	run_lava "lava-$n" "$pack/devices/qemu-$n.yaml" "$pack/jobs/qemu-$n.yaml"
	args+=("$n=$W/lava-$n.log")
	info "lane $n: scripts/boot.sh"
	# The machine and kernel command line of the job, from its device file.
	machine=$(sed -n "s/.*'-machine \([^']*\)'.*/\1/p" "$pack/devices/qemu-$n.yaml")
	smp=$(sed -n "s/.*'-smp \([0-9]*\)'.*/\1/p" "$pack/devices/qemu-$n.yaml")
	extra=$(sed -n "s/.*'-no-reboot', '\([^']*\)'.*/\1/p" "$pack/devices/qemu-$n.yaml")
	cmdline=$(sed -n 's/.*-append "\(.*\)"$/\1/p' "$pack/jobs/qemu-$n.yaml")
	online=$(sed -n 's/.* maxcpus=\([0-9]*\)$/\1/p' <<<"$cmdline")
	append=$(sed 's/console=ttyAMA0 panic=-1 softlockup_panic=1 nmi_watchdog=nopanic //; s/ *maxcpus=[0-9]*$//' <<<"$cmdline")
	log=console-$n.log
	[ "$n" != main ] || log=console.log
	set +e
	QEMU_MACHINE=$machine QEMU_POSSIBLE=$smp QEMU_SMP=$online QEMU_EXTRA="$extra" APPEND_EXTRA="$append" \
		IMAGE="$pack/series/Image" INITRD="$pack/series/$n.cpio.gz" CONSOLE_LOG="$W/local/$log" \
		"$TOP/scripts/boot.sh" >"$W/local/boot-$n.log" 2>&1
	rc=$?
	set -e
	if [ "$n" = main ]; then
		printf 'boot\t%s\t0\t%s\n' "$([ $rc = 0 ] && echo PASS || echo FAIL)" "$rc" >>"$W/local/stages.tsv"
	else
		echo "$n" >>"$W/local/variants.list"
	fi
done
touch "$W/local/stages.tsv" "$W/local/variants.list"
set +e
python3 "$TOP/scripts/lava-collect.py" "$W/lava" "${args[@]}" >"$W/lava/collect.log" 2>&1
lrc=$?
python3 "$TOP/scripts/report.py" "$W/local" >"$W/local/report.log" 2>&1
brc=$?
set -e

# The verdicts: each test's result line of each guest stage, both ways.
python3 - "$W" <<'EOF' || die $E_FAIL "LAVA's verdicts differ from the local boots' (see $W/verdicts.tsv)"
import re, sys
w = sys.argv[1]
def verdicts(d):
    # results.ktap: a stage's result lines (indented 2) precede its own
    # "ok N <stage>" line. The collector's lava-* stages are left out: the
    # local boots have none.
    out, pending = {}, []
    for ln in open(d + "/results.ktap"):
        ln = ln.rstrip("\n")
        m = re.match(r"^  (not ok|ok) \d+ (.*?)(?:\s+#\s*(SKIP|TODO)\b.*)?(?:\s+#.*)?$", ln)
        if m:
            pending.append((m.group(2), "skip" if m.group(3) else
                            "pass" if m.group(1) == "ok" else "fail"))
            continue
        m = re.match(r"^(not ok|ok) \d+ (\S+)", ln)
        if m:
            stage = m.group(2)
            if not stage.startswith("lava-"):
                for name, v in pending:
                    out[stage + " " + name] = v
            pending = []
    return out
a, b = verdicts(w + "/lava"), verdicts(w + "/local")
keys = sorted(set(a) | set(b))
with open(w + "/verdicts.tsv", "w") as f:
    f.write("test\tlava\tlocal\n")
    for k in keys:
        f.write("%s\t%s\t%s\n" % (k, a.get(k, "-"), b.get(k, "-")))
count = lambda d, v: sum(1 for x in d.values() if x == v)
print("I: lava-check: %-6s %d tests: %d pass, %d fail, %d skip" % ("lava", len(a), count(a, "pass"), count(a, "fail"), count(a, "skip")))
print("I: lava-check: %-6s %d tests: %d pass, %d fail, %d skip" % ("local", len(b), count(b, "pass"), count(b, "fail"), count(b, "skip")))
diff = [k for k in keys if a.get(k) != b.get(k)]
for k in diff[:10]:
    print("E: lava-check: %s: lava %s, local %s" % (k, a.get(k, "-"), b.get(k, "-")), file=sys.stderr)
sys.exit(1 if diff or not a else 0)
EOF
[ "$brc" = 0 ] || die $E_FAIL "the local boots failed (rc=$brc): see $W/local/SUMMARY.md"
[ "$lrc" = 0 ] || die $E_FAIL "the LAVA jobs failed (rc=$lrc): see $W/lava/SUMMARY.md"
ktap+=("ok $((${#ktap[@]} + 1)) verdicts: lava-run and local boots agree on $(($(wc -l <"$W/verdicts.tsv") - 1)) tests in $(echo $lanes | wc -w) lanes")

# 3. Seeded failures: each job must come out as a failure, for its reason.
seed() {
	local name=$1 want=$2
	shift 2
	env "$@" LAVA_OUT="$W/seed-$name" LAVA_LANES=main LAVA_STAGES="kvm-check kselftest-kvm" \
		"$TOP/scripts/lava.sh" >"$W/seed-$name.pack.log" 2>&1 || die $E_FAIL "seed $name: make lava failed"
	run_lava "seed-$name" "$W/seed-$name/devices/qemu-main.yaml" "$W/seed-$name/jobs/qemu-main.yaml"
	set +e
	python3 "$TOP/scripts/lava-collect.py" "$W/seed-$name/results" "main=$W/seed-$name.log" >"$W/seed-$name.collect.log" 2>&1
	local rc=$?
	set -e
	rm -rf "$W/seed-$name/series"
	[ "$rc" != 0 ] || die $E_FAIL "seed $name: the collector passed a job that must fail"
	grep -q -E "$want" "$W/seed-$name/results/results.ktap" ||
		die $E_FAIL "seed $name: failed, but not for /$want/ (see $W/seed-$name/results/SUMMARY.md)"
	info "seed $name: failed, as it must ($(grep -m1 -o -E "$want" "$W/seed-$name/results/results.ktap"))"
	ktap+=("ok $((${#ktap[@]} + 1)) seeded failure: $name")
}
# A test that does not pass: vgic_its_vlpi given a device that does not
# exist skips (exit 4), which the workbench's machine must never make it do.
seed test-fails 'not ok [0-9]+ selftests: kvm: vgic_its_vlpi@seeded # exit=4' \
	LAVA_TESTS_MAIN='kvm:vgic_its_vlpi@seeded' EXTRA_TESTS='kvm:vgic_its_vlpi@seeded 60 -d 0000:7f:1f.7'
seed panic 'not ok 1 job complete # .*' LAVA_APPEND_MAIN=workbench.fault=panic LAVA_TESTS_MAIN=kvm:vgic_init
seed hang 'not ok 1 job complete # .*' LAVA_APPEND_MAIN=workbench.fault=hang LAVA_TESTS_MAIN=kvm:vgic_init LAVA_TIMEOUT=1
# 4. make bench's jobs: one bench job of the series kernel under lava-run,
# its figure through lava-collect.py --bench and bench-report.py.
B=$W/bench
mkdir -p "$B/pack/devices" "$B/pack/jobs"
BENCH_EXIT_VMS=1 BENCH_EXIT_SECONDS=1 STAGES=bench OUT="$B/pack/bench-patched.cpio.gz" \
	"$TOP/scripts/initramfs.sh" >"$B/initramfs.log" 2>&1 || die $E_FAIL "bench initramfs failed (log: $B/initramfs.log)"
lava_device "$B/pack/devices/qemu-bench.yaml" "make bench's boots" virt,virtualization=on,gic-version=3,its=on 2 4G ""
{
	echo "command=make lava-check (bench job: the series kernel alone)"
	echo "BENCH_EXIT_VMS=1"
	echo "BENCH_EXIT_SECONDS=1"
	echo "BENCH_SCENARIOS=exit_cost"
	echo "scenarios_csv=exit_cost"
} >"$B/pack/bench.env"
bench_job() { # bench_job NAME [KERNEL-PARAMS]: lava-run's log in $W/NAME.log
	lava_qemu_job "$B/pack/jobs/$1.yaml" "bench $1 (qemu)" "file://$pack/series/Image" \
		"file://$B/pack/bench-patched.cpio.gz" \
		"$(lava_cmdline 2 "kunit.enable=0 workbench.bench=exit_cost ${2:-}")" 10
	run_lava "$1" "$B/pack/devices/qemu-bench.yaml" "$B/pack/jobs/$1.yaml"
}
bench_job bench-patched-1
schema "$B/pack/jobs/bench-patched-1.yaml"
set +e
python3 "$TOP/scripts/lava-collect.py" --bench "$B/results" "$B/pack" "patched-1=$W/bench-patched-1.log" \
	>"$B/collect.log" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || { tail -n 5 "$B/collect.log" >&2; die $E_FAIL "bench job: lava-collect.py --bench failed (rc=$rc, $B/collect.log)"; }
# The log in a LAVA server's form ("- {...}" records), the QEMU boot command
# left out: what a board's job log looks like to the collector.
python3 - "$W/bench-patched-1.log" >"$W/bench-board-1.log" <<'EOF'
import json, sys, yaml
for ln in open(sys.argv[1]):
    try:
        rec = json.loads(ln)
    except ValueError:  # lava-run writes a few records in YAML
        rec = yaml.safe_load(ln)
    if isinstance(rec.get("msg"), str) and rec["msg"].startswith("Boot command: "):
        continue
    print("- " + json.dumps(rec))  # as a server's log: one "- {...}" record per line
EOF
python3 "$TOP/scripts/lava-collect.py" --bench "$B/board" "$B/pack" "patched-1=$W/bench-board-1.log" \
	>"$B/board-collect.log" 2>&1 || die $E_FAIL "bench job, server form: lava-collect.py --bench failed ($B/board-collect.log)"
python3 - "$B" <<'EOF' || die $E_FAIL "bench job: the report's figure is not the console's"
import json, re, sys
b = sys.argv[1]
want = None
for ln in open(b + "/results/bench-patched-1.log"):
    m = re.match(r"^BENCH exit_cost vms=1 ns_per_exit=([0-9.]+) ", ln)
    if m:
        want = float(m.group(1))
assert want, "no BENCH exit_cost line on the console"
for d in ("results", "board"):
    mets = {m["id"]: m for m in json.load(open("%s/%s/bench.json" % (b, d)))["metrics"]}
    got = mets["exit_cost[vms=1].ns_per_exit"]["patched"]
    assert got["n"] == 1 and got["median"] == want, (d, got, want)
env = open(b + "/board/bench.env").read()
assert re.search(r"^lava_board=linux,dummy-virt, 2 CPUs$", env, re.M), env[-200:]
meta = json.load(open(b + "/board/bench.json"))["meta"]
assert "LAVA jobs on hardware" in meta["machine"], meta["machine"]
print("I: lava-check: bench job: exit_cost ns_per_exit=%s in bench.json, from LAVA's JSON "
      "and from a server's YAML read as a board (%s)" % (want, meta["machine"]))
EOF
ktap+=("ok $((${#ktap[@]} + 1)) bench job: lava-collect.py --bench gives bench-report.py the console's figure")
bench_job bench-patched-2 workbench.fault=panic
set +e
python3 "$TOP/scripts/lava-collect.py" --bench "$B/seed" "$B/pack" "patched-2=$W/bench-patched-2.log" \
	>"$B/seed-collect.log" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'bench patched-2: LAVA job not complete' "$B/seed-collect.log" ||
	die $E_FAIL "seed bench-panic: the collector did not fail the job for its panic (rc=$rc, $B/seed-collect.log)"
info "seed bench-panic: failed, as it must ($(grep -m1 -o 'bench patched-2: LAVA job not complete[^;]*' "$B/seed-collect.log"))"
ktap+=("ok $((${#ktap[@]} + 1)) seeded failure: bench-panic")
rm -f "$B/pack/bench-patched.cpio.gz"

if [ -n "${RESULTS:-}" ]; then
	mkdir -p "$RESULTS/lava"
	(cd "$W" && cp -r --parents verdicts.tsv ./*.log lava local bench "$RESULTS/lava/")
	mkdir -p "$RESULTS/ktap"
	printf 'KTAP version 1\n1..%d\n' ${#ktap[@]} >"$RESULTS/ktap/lava-check.ktap"
	printf '%s\n' "${ktap[@]}" >>"$RESULTS/ktap/lava-check.ktap"
fi
info "PASS in $(elapsed): $(echo $lanes | wc -w) lanes, verdicts equal ($W/verdicts.tsv), 4 seeded failures caught, bench job read"
