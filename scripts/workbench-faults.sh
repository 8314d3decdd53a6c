#!/usr/bin/env bash
# Stage "workbench-selftest": the workbench must fail loudly, with the
# documented exit code and message, when something is wrong. Each case
# injects one fault and checks both. Needs a built Image, selftests and
# guest rootfs, and the kernel tree (make check runs it after the
# variant boots, at the main lane's priority).
stage=workbench-faults
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-selftest.XXXXXX")
hog_pids=()
trap '[ ${#hog_pids[@]} = 0 ] || kill "${hog_pids[@]}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
n=0
npass=0
nfail=0
# expect NAME CODE REGEX CMD...: CMD must exit CODE and print REGEX.
expect() {
	local name=$1 code=$2 re=$3 rc t0=$SECONDS
	shift 3
	n=$((n + 1))
	set +e
	"$@" >"$tmp/out" 2>&1
	rc=$?
	set -e
	if [ "$rc" = "$code" ] && grep -Eq "$re" "$tmp/out"; then
		echo "ok $n $name # exit $rc, $((SECONDS - t0))s"
		npass=$((npass + 1))
	else
		echo "not ok $n $name # expected exit $code and /$re/, got exit $rc"
		tail -n 15 "$tmp/out" | sed 's/^/# /'
		nfail=$((nfail + 1))
	fi
}

IMAGE=${IMAGE:-$KERNEL_O/arch/arm64/boot/Image}
[ -f "$IMAGE" ] || die $E_USAGE "no Image at $IMAGE: run make build first"
echo "KTAP version 1"
echo "1..51"

# 1. Bad input: a wrong variable is a usage error (1), nothing runs.
expect bad-variable 1 "TIMEOUT='abc' is not a number" env TIMEOUT=abc "$TOP/scripts/boot.sh"
# QEMU older than 10.0 loses nested guests (Documentation/known-hangs.md):
# refused before anything boots.
printf '#!/bin/sh\necho "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"\n' >"$tmp/qemu-7.2"
chmod +x "$tmp/qemu-7.2"
expect old-qemu 1 "QEMU 7\\.2\\.22 is older than 10\\.0" env QEMU="$tmp/qemu-7.2" "$TOP/scripts/boot.sh"
expect unknown-config-fragment 1 "config fragment 'nosuch' not found" \
	env CONFIGS=nosuch O="$tmp/cfg0" "$TOP/scripts/build.sh"
expect unknown-profile 1 "PROFILE='nosuch' is not a profile" \
	env PROFILE=nosuch "$TOP/scripts/build.sh"
# A commit citation that checkpatch would reject where the id resolves
# (it cannot here) fails check-series' own check: "commit" and the id
# split across lines, and a bare id, in a copy of the VMID fix.
# The patch is found by its subject, whatever posting and number it has;
# each copy must differ from it, or the case would test nothing.
vmid_fix=$(grep -l '^Subject: \[PATCH [0-9/]*\] KVM: arm64: Do not let a vCPU put overwrite a VMID' \
	"$TOP"/patches/*.patch | head -n 1)
[ -n "$vmid_fix" ] || { echo "workbench-faults: no VMID fix patch in patches/ to seed citation faults into" >&2; exit 2; }
sed 's/^commit 100b4f092f87 ("KVM: arm64: Make active_vmids invalid on vCPU$/commit\n100b4f092f87 ("KVM: arm64: Make active_vmids invalid on vCPU/' \
	"$vmid_fix" >"$tmp/cite-split.patch"
sed 's/^commit 100b4f092f87 ("KVM: arm64: Make active_vmids invalid on vCPU$/100b4f092f87 made active_vmids invalid on vCPU/' \
	"$vmid_fix" >"$tmp/cite-bare.patch"
for f in cite-split cite-bare; do
	! cmp -s "$vmid_fix" "$tmp/$f.patch" ||
		{ echo "workbench-faults: $f: the citation to seed the fault into is not in $vmid_fix" >&2; exit 2; }
done
expect cite-split 1 '"commit" and its id on two lines' python3 "$TOP/scripts/cite-check.py" "$tmp/cite-split.patch"
expect cite-bare 1 'bare commit id 100b4f092f87' python3 "$TOP/scripts/cite-check.py" "$tmp/cite-bare.patch"
# Nothing is posted in the placeholder's name: the DCO is the poster's.
expect posting-placeholder-identity 1 "is a placeholder: the Signed-off-by must be the poster's own" \
	env POSTER="arm64 KVM series <kvm-arm64-series@example.org>" POSTING_OUT="$tmp/posting" "$TOP/scripts/posting.sh"
# A posting whose stated base lacks a posting it needs fails
# check-postings: the allocator library said to apply on stock alone
# (it needs the VMID fix, whose litmus README it extends).
mkdir -p "$tmp/postings" && ln -sfn "$TOP/patches" "$tmp/postings/patches"
awk '/^# == 7-asid-lib/ { f = 1 } f && /^#    applies on: / { print "#    applies on: stock"; f = 0; next } { print }' \
	"$TOP/series" >"$tmp/postings/series"
expect posting-missing-prerequisite 2 '7-asid-lib: does not apply with git am on stock: error: ' \
	env SERIES="$tmp/postings/series" POSTINGS=7-asid-lib "$TOP/scripts/check-postings.sh"
expect bad-soak-duration 1 "DURATION='1h' is not a positive number of seconds" \
	env DURATION=1h RESULTS_DIR="$tmp/r" "$TOP/scripts/soak.sh"
expect bad-bench-revision 1 "BENCH_PATCHED_REV='no-such-rev' is not a revision" \
	env BENCH_PATCHED_REV=no-such-rev RESULTS_DIR="$tmp/r" "$TOP/scripts/bench.sh"
# The stock side of a bench must come before the patched one: a cover
# compares a posting with the postings it applies on, never the reverse.
expect bad-bench-base 1 "BENCH_STOCK_REV='HEAD' is not an ancestor of BENCH_PATCHED_REV='stock'" \
	env BENCH_STOCK_REV=HEAD BENCH_PATCHED_REV=stock RESULTS_DIR="$tmp/r" "$TOP/scripts/bench.sh"
expect bad-bench-churn-events 1 "BENCH_LPI_CHURN_EVENTS='256 1k': '1k' is not a number of events per device" \
	env BENCH_LPI_CHURN_EVENTS="256 1k" RESULTS_DIR="$tmp/r" "$TOP/scripts/bench.sh"
expect bad-bench-its-bits 1 "BENCH_ITS_RESTORE_BITS='8 17': '17' is not a number of EventID bits \\(1\\.\\.16\\)" \
	env BENCH_ITS_RESTORE_BITS="8 17" RESULTS_DIR="$tmp/r" "$TOP/scripts/bench.sh"
expect bad-soak-model-commands 1 "SOAK_MODEL_COMMANDS='1e7' is not a number of commands" \
	env SOAK_MODEL_COMMANDS=1e7 RESULTS_DIR="$tmp/r" "$TOP/scripts/soak.sh"
expect debug-compare-bad-profile 1 "PROFILE='kasan' is not a profile \\(have: default debug kcsan\\)" \
	env PROFILE=kasan RESULTS_DIR="$tmp/r" "$TOP/scripts/debug-compare.sh"
# A command that fails under set -e, here in a command substitution as
# deps.sh's QEMU version check once did, ends the stage with a message
# naming it, never silently.
printf '%s\n' 'stage=silent' ". '$TOP/scripts/lib.sh'" 'v=$(false | cat)' 'echo "not reached $v"' \
	>"$tmp/silent.sh"
expect no-silent-exit 1 '^E: silent: line 3: "v=\$\(false \| cat\)" failed \(rc=1\)$' \
	bash "$tmp/silent.sh"

# deps.sh and another package manager: with a lock of
# APT_LOCKS held (here by flock, on a file of our own; deps.sh reads the
# holder from /proc/locks, as for apt's and dpkg's fcntl locks), it must
# say what it waits for and who holds it, then give up after
# APT_LOCK_TIMEOUT with exit 1 and advice; or, once the lock is free, go
# on to apt-get with DPkg::Lock::Timeout. Nothing real is installed: the
# fakes (first in PATH, and APT_GET) report every package missing, root,
# and an apt-get that stops the stage at its first call.
mkdir -p "$tmp/apt/bin"
printf '#!/bin/sh\nexit 1\n' >"$tmp/apt/bin/dpkg-query"
printf '#!/bin/sh\n[ "$1" = --print-foreign-architectures ] && echo arm64 && exit 0\necho "fake dpkg: $*"; exit 1\n' \
	>"$tmp/apt/bin/dpkg"
printf '#!/bin/sh\necho 0\n' >"$tmp/apt/bin/id"
cat >"$tmp/apt/bin/apt-get" <<'FAKE'
#!/bin/sh
# As apt does when the lock is taken; else say how it was called and stop.
flock -n "$FAKE_LOCK" true ||
	{ echo "E: Could not get lock $FAKE_LOCK. It is held by process 1 (apt-get)"; exit 100; }
echo "fake apt-get: $*"
exit 100
FAKE
chmod +x "$tmp/apt/bin"/*
: >"$tmp/apt/lock"
# deps_locked HOLD_SECONDS TIMEOUT: deps.sh while flock holds the lock.
deps_locked() {
	local holder rc
	# -o: the lock is flock's own, gone when it is killed (not its sleep's)
	flock -o "$tmp/apt/lock" sleep "$1" </dev/null >/dev/null 2>&1 &
	holder=$!
	# until flock holds it (on a busy machine that may take a while)
	for rc in $(seq 600); do flock -n "$tmp/apt/lock" true || break; sleep 0.1; done
	env PATH="$tmp/apt/bin:$PATH" APT_GET="$tmp/apt/bin/apt-get" FAKE_LOCK="$tmp/apt/lock" \
		APT_LOCKS="$tmp/apt/no-such-lock $tmp/apt/lock" APT_LOCK_TIMEOUT="$2" CACHE_DIR="$tmp/apt/cache" \
		"$TOP/scripts/deps.sh"
	rc=$?
	kill $holder 2>/dev/null
	wait $holder 2>/dev/null
	grep -Eq "^I: deps: waiting for $tmp/apt/lock, held by pid $holder \(flock -o $tmp/apt/lock sleep $1\)" "$tmp/out" ||
		{ echo "no 'waiting for ..., held by pid $holder (flock ...)' line"; return 99; }
	return $rc
}
expect deps-apt-lock-timeout 1 "^E: deps: gave up after 3s waiting for $tmp/apt/lock, held by pid [0-9]+ .*let it finish, then run 'make deps' again, or wait longer with APT_LOCK_TIMEOUT" \
	deps_locked 30 3
deps_freed() {
	local rc=0
	deps_locked 8 60 || rc=$?
	grep -Eq '^I: deps: apt/dpkg locks free after [0-9]+s' "$tmp/out" || { echo "no 'locks free' line"; return 99; }
	return $rc
}
# (the fake apt-get's line is in the tail of its log that deps.sh prints)
expect deps-apt-lock-freed 1 "^fake apt-get: -o DPkg::Lock::Timeout=60 update -qq" deps_freed

# The guest's selftest stage streams a test's output to the console while
# the test runs (otherwise a test running longer than STALL, silent until
# its end, would be taken for a hung guest). Run
# on the host under sh with a fake test that waits until its own first
# line is on the console before it prints its second, and fails if it
# never is. The report must then split the same per-test log, each line
# once, from the console; and give KUnit (which runs at boot, without
# stage markers) the duration of its printk timestamps, and results.json
# the run's classified exit code.
mkdir -p "$tmp/g/etc" "$tmp/g/ksft/aarch64" "$tmp/g/tmp" "$tmp/rep/logs" "$tmp/rep2/logs"
cat >"$tmp/g/ksft/aarch64/wb_fake_test" <<'FAKE'
#!/bin/sh
echo "wb_fake_test: started"
i=0
until grep -q '^# wb_fake_test: started$' "$FAKE_CONSOLE"; do
	i=$((i + 1))
	[ $i -le 240 ] || { echo "wb_fake_test: first line not on the console after 120 s"; exit 1; }
	sleep 0.5
done
echo "wb_fake_test: first line seen on the console while running"
FAKE
chmod +x "$tmp/g/ksft/aarch64/wb_fake_test"
echo "kvm:wb_fake_test 30 -x 1" >"$tmp/g/etc/kvm.plan"
: >"$tmp/g/etc/skiplist.txt"
: >"$tmp/g/etc/flaky.txt"
streams() {
	local rc
	env WB_ETC="$tmp/g/etc" WB_KSFT="$tmp/g/ksft" WB_TMP="$tmp/g/tmp" WB_SYSRQ=/dev/null \
		STREAM_SECONDS=1 FAKE_CONSOLE="$tmp/g/console" \
		sh "$TOP/selftests/guest/stage-kselftest-kvm.sh" >"$tmp/g/console" 2>&1
	rc=$?
	cat "$tmp/g/console"
	return $rc
}
expect guest-streams-test-output 0 '^# wb_fake_test: first line seen on the console while running$' streams
# A test that skips itself (exit 4) fails the stage: the workbench's guest
# prepares what the plan's tests require, so a skip is a missing
# prerequisite. A skiplist entry for this lane is the one way not to run
# it, and an entry for another lane does not apply here.
mkdir -p "$tmp/s/etc" "$tmp/s/ksft/aarch64" "$tmp/s/tmp"
printf '%s\n' '#!/bin/sh' 'echo "1..0 # SKIP wb needs a frobnicator"' 'exit 4' >"$tmp/s/ksft/aarch64/wb_skip_test"
chmod +x "$tmp/s/ksft/aarch64/wb_skip_test"
echo "kvm:wb_skip_test 30" >"$tmp/s/etc/kvm.plan"
: >"$tmp/s/etc/flaky.txt"
skip_stage() { # skip_stage LANE SKIPLIST-LINE: the guest stage on the host
	printf '%s\n' "$2" >"$tmp/s/etc/skiplist.txt"
	env WB_ETC="$tmp/s/etc" WB_KSFT="$tmp/s/ksft" WB_TMP="$tmp/s/tmp" WB_SYSRQ=/dev/null \
		STREAM_SECONDS=0 LANE="$1" sh "$TOP/selftests/guest/stage-kselftest-kvm.sh"
}
expect guest-skip-fails 1 "^not ok 1 selftests: kvm: wb_skip_test # exit=4: skipped in the workbench's configuration: wb needs a frobnicator$" \
	skip_stage boot "other: kvm:wb_skip_test | another lane's entry"
expect guest-skiplist-lane-entry 0 '^ok 1 selftests: kvm: wb_skip_test # SKIP not in this lane$' \
	skip_stage boot "boot: kvm:wb_skip_test | not in this lane"
{
	printf '%s\n' '[    1.000000] KTAP version 1' '[    1.000100] 1..1' '[    1.100000]     KTAP version 1' \
		'[    1.100100]     # Subtest: wb-suite' '[    1.100200]     1..1' '[    4.400000]     ok 1 wb_case' \
		'[    4.600000] ok 1 wb-suite' 'WORKBENCH-BEGIN 6.12.117 2 cpus' 'WORKBENCH-STAGE-BEGIN kselftest-kvm'
	cat "$tmp/g/console"
	printf '%s\n' 'WORKBENCH-STAGE-END kselftest-kvm rc=0 seconds=2' 'WORKBENCH-END rc=0'
} >"$tmp/rep/console.log"
cp "$tmp/rep/console.log" "$tmp/rep2/console.log"
printf 'boot\tPASS\t12\t0\n' >"$tmp/rep/stages.tsv"
printf 'build\tPASS\t1\t0\nboot\tFAIL\t12\t124\nvariants\tFAIL\t3\t2\n' >"$tmp/rep2/stages.tsv"
report() { # report DIR: report.py on DIR, then its per-test log
	python3 "$TOP/scripts/report.py" "$1" >"$1/report.out" 2>&1
	cat "$1/SUMMARY.md" "$1/logs/kvm:wb_fake_test.log" 2>&1
}
split_log() {
	local log=$tmp/rep/logs/kvm:wb_fake_test.log
	report "$tmp/rep"
	[ "$(grep -c '^wb_fake_test: ' "$log")" = 2 ] && grep -q '^ok 1 selftests: kvm: wb_fake_test$' "$log" ||
		{ echo "the per-test log is not the 2 lines of wb_fake_test and its ok line"; return 1; }
}
expect report-splits-streamed-log 0 '^# to reproduce \(in the L1 guest\): wb_fake_test -x 1 \(timeout 30s\)$' split_log
expect report-kunit-duration 0 '^I: kunit: PASS in 0:00:04 \(pass 1, fail 0, skip 0\)$' report "$tmp/rep"
# A KUnit case that skips at boot (kunit_skip()) fails the kunit stage:
# the workbench boots a machine that runs every case.
mkdir -p "$tmp/rep3/logs"
sed 's/ok 1 wb_case$/ok 1 wb_case # SKIP needs 4 possible CPUs: run with -smp 4/' \
	"$tmp/rep/console.log" >"$tmp/rep3/console.log"
cp "$tmp/rep/stages.tsv" "$tmp/rep3/stages.tsv"
kunit_skip_report() {
	report "$tmp/rep3"
	python3 -c 'import json, sys; print("exit code", json.load(open(sys.argv[1]))["results"]["exit_code"])' \
		"$tmp/rep3/results.json"
}
expect report-kunit-skip-fails 0 '^I: kunit: FAIL in 0:00:04 \(pass 0, fail 1, skip 0\)$' kunit_skip_report
expect report-kunit-skip-exit-code 0 '^exit code 2$' kunit_skip_report
exit_codes() {
	report "$tmp/rep" >/dev/null
	report "$tmp/rep2" >/dev/null
	python3 -c 'import json, sys; print("exit codes", *(json.load(open(p))["results"]["exit_code"] for p in sys.argv[1:]))' \
		"$tmp/rep/results.json" "$tmp/rep2/results.json"
	grep -h '^- Result:' "$tmp/rep/SUMMARY.md" "$tmp/rep2/SUMMARY.md"
}
expect report-exit-code 0 '^exit codes 0 124$' exit_codes

# kvm-unit-tests without a source: the host stage says how to get one in
# a SKIP line and passes, leaving for the guest only a SKIP file, whose
# reason the guest stage (run here on the host) reports as its one SKIP;
# under WORKBENCH_REQUIRE_TOOLS=1 (CI) the same is a tool error (1) that
# leaves nothing for the guest. RESULTS unset: the run's own ktap/ stays
# untouched.
kut_how='get one: git clone https://gitlab\.com/kvm-unit-tests/kvm-unit-tests\.git and run with KUT_SRC=<that clone>'
kut_no_source() {
	env -u RESULTS -u WORKBENCH_REQUIRE_TOOLS KUT_SRC="$tmp/no-such-kvm-unit-tests" KUT_OUT="$tmp/kut/out" \
		"$TOP/scripts/kvm-unit-tests.sh" || return
	grep -Eq "^I: kvm-unit-tests: SKIP: no kvm-unit-tests source at $tmp/no-such-kvm-unit-tests; $kut_how$" "$tmp/out" ||
		{ echo "no SKIP line with the hint from the host stage"; return 99; }
	mkdir -p "$tmp/kut/g"
	env WB_ETC="$tmp/kut/g" WB_KUT="$tmp/kut/out" WB_TMP="$tmp/kut/g" \
		sh "$TOP/selftests/guest/stage-kvm-unit-tests.sh"
}
expect kut-no-source-skips 0 "^ok 1 kvm-unit-tests # SKIP no kvm-unit-tests source at $tmp/no-such-kvm-unit-tests; $kut_how$" \
	kut_no_source
kut_required() {
	local rc=0
	env -u RESULTS WORKBENCH_REQUIRE_TOOLS=1 KUT_SRC="$tmp/no-such-kvm-unit-tests" KUT_OUT="$tmp/kut/required" \
		"$TOP/scripts/kvm-unit-tests.sh" || rc=$?
	[ ! -e "$tmp/kut/required" ] || { echo "$tmp/kut/required was made"; return 99; }
	return $rc
}
expect kut-no-source-required 1 "^E: kvm-unit-tests: no kvm-unit-tests source at $tmp/no-such-kvm-unit-tests \(WORKBENCH_REQUIRE_TOOLS=1\); $kut_how$" \
	kut_required

# debug-compare's judge (scripts/splat-compare.py), on two made-up
# consoles of kernels that enabled KCSAN. Under kcsan it must count the
# patched WARNING and the race new in ASID code (2), not the KVM race
# stock shows too nor the race outside KVM; under debug every patched
# splat line (5); under default those and the test that failed on the
# patched kernel and the one that ran on stock only (7), not the test
# that failed on stock only.
mkdir -p "$tmp/sc/stock" "$tmp/sc/patched"
printf '%s\n' '[    0.1] kcsan: enabled early' \
	'[    1.0] BUG: KCSAN: data-race in foo+0x1/0x20 / bar+0x2/0x30' \
	'[    2.0] BUG: KCSAN: data-race in kvm_vcpu_x+0x1/0x2 / vgic_y+0x3/0x4' \
	'not ok 1 selftests: kvm: vgic_its_cache # exit=254' 'ok 2 selftests: kvm: vgic_its_model' \
	'ok 1 kvm-unit-tests: its-trigger' >"$tmp/sc/stock/console.log"
printf '%s\n' '[    0.1] kcsan: enabled early' \
	'[    1.0] BUG: KCSAN: data-race in bar+0x9/0x30 / foo+0x1/0x20' \
	'[    2.0] BUG: KCSAN: data-race in vgic_y+0x3/0x4 / kvm_vcpu_x+0x1/0x2' \
	'[    3.0] BUG: KCSAN: data-race in asid_new+0x1/0x2 / baz+0x1/0x2' \
	'[    4.0] BUG: KCSAN: data-race in qux+0x1/0x2' \
	'[    5.0] WARNING: CPU: 0 PID: 1 at x' \
	'ok 1 selftests: kvm: vgic_its_cache' 'not ok 2 selftests: kvm: vgic_its_model # exit=1' >"$tmp/sc/patched/console.log"
expect splat-compare-gates 0 "^gates 2 5 7$" sh -c \
	'python3 "$1/scripts/splat-compare.py" "$2" kcsan >/dev/null && k=$(cat "$2/debug-compare.gate") &&
	 python3 "$1/scripts/splat-compare.py" "$2" debug >/dev/null && d=$(cat "$2/debug-compare.gate") &&
	 python3 "$1/scripts/splat-compare.py" "$2" default >/dev/null && n=$(cat "$2/debug-compare.gate") &&
	 echo "gates $k $d $n"' \
	sh "$TOP" "$tmp/sc"
# A stock boot that panicked: the test it was in fails on stock, which
# does not count against the patched kernel (gate still 7).
echo 255 >"$tmp/sc/stock.rc"
echo '# selftests: kvm: vgic_its_mem' >>"$tmp/sc/stock/console.log"
echo 'ok 3 selftests: kvm: vgic_its_mem' >>"$tmp/sc/patched/console.log"
expect splat-compare-stock-panic 0 "^\| kvm:vgic_its_mem \| FAIL: the boot panicked in this test \| ok \|$" sh -c \
	'python3 "$1/scripts/splat-compare.py" "$2" default >/dev/null && [ "$(cat "$2/debug-compare.gate")" = 7 ] &&
	 cat "$2/debug-compare.md"' sh "$TOP" "$tmp/sc"
# A KCSAN kernel that never enabled KCSAN reports nothing: refuse to judge.
sed -i '/kcsan: enabled early/d' "$tmp/sc/patched/console.log"
expect splat-compare-kcsan-off 3 "no 'kcsan: enabled early' line" \
	python3 "$TOP/scripts/splat-compare.py" "$tmp/sc" kcsan

# 2. A patch that does not apply: fail (2) naming the patch.
mkdir -p "$tmp/s/patches"
cat >"$tmp/s/patches/0001-bogus.patch" <<'P'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: arm64 KVM series <kvm-arm64-series@example.org>
Date: Thu, 1 Jan 1970 00:00:00 +0000
Subject: [PATCH] bogus: does not apply

A patch against text the base does not have.

Signed-off-by: arm64 KVM series <kvm-arm64-series@example.org>
---
 Makefile | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,3 +1,3 @@
-this line is not in the kernel Makefile
+nor is this one
 and neither is this context
 or this
-- 
P
echo 0001-bogus.patch >"$tmp/s/series"
expect patch-does-not-apply 2 "patch 1/1 0001-bogus.patch does not apply" \
	env TREE="$tmp/tree" SERIES="$tmp/s/series" "$TOP/scripts/apply.sh"

# 3. A config option that does not survive olddefconfig: the audit fails (2).
mkdir -p "$tmp/configs"
cp "$TOP"/configs/*.config "$tmp/configs/"
printf '# dropped on purpose: depends on a symbol that does not exist\nCONFIG_WORKBENCH_NO_SUCH_OPTION=y\n' \
	>"$tmp/configs/zz-dropped.config"
expect config-option-dropped 2 "CONFIG_WORKBENCH_NO_SUCH_OPTION: requested y, final .config has n" \
	env CONFIG_DIR="$tmp/configs" CONFIGS="base kvm test kunit zz-dropped" O="$tmp/cfg" \
	"$TOP/scripts/build.sh"

# 4. Guest-side faults, each in its own short boot.
small() {
	env OUT="$tmp/$1.cpio.gz" "${@:2}" "$TOP/scripts/initramfs.sh" >"$tmp/$1.initramfs.log" 2>&1 ||
		die $E_FAIL "initramfs for case $1 failed: $(tail -n 3 "$tmp/$1.initramfs.log")"
}
small ok STAGES=kvm-check
small fail STAGES=kselftest-kvm TESTS=kvm:vgic_irq KSELFTEST_VGIC_IRQ_ARGS=-Z
# A selftest added from the command line (EXTRA_TESTS, without an
# edit of selftests/plan/kvm.plan) is in the plan the guest runs, with its
# arguments, and TESTS selects it like a plan entry; a test without a
# built binary is refused before anything boots.
small extra STAGES=kselftest-kvm PLAN= TESTS='kvm:vgic_irq kvm:access_tracking_perf_test@extra' \
	EXTRA_TESTS='kvm:access_tracking_perf_test@extra 300 -b 16M; kvm:memslot_perf_test@extra'
guest_plan() {
	gzip -dc "$tmp/extra.cpio.gz" | cpio -i --quiet --to-stdout 'etc/workbench/kvm.plan' >"$tmp/extra.plan"
	cat "$tmp/extra.plan"
	[ "$(wc -l <"$tmp/extra.plan")" = 2 ] && grep -q '^kvm:vgic_irq 300 $' "$tmp/extra.plan" ||
		{ echo "the guest's plan is not vgic_irq and the extra test"; return 1; }
}
expect extra-test-in-guest-plan 0 '^kvm:access_tracking_perf_test@extra 300 -b 16M$' guest_plan
expect extra-test-without-binary 1 "EXTRA_TESTS: kvm:wb_no_such_test: no test binary wb_no_such_test in .*make selftests" \
	env PLAN_ONLY=1 PLAN= TESTS= EXTRA_TESTS='kvm:vgic_irq@again 60 -h; kvm:wb_no_such_test 60' OUT="$tmp/never.cpio.gz" \
	"$TOP/scripts/initramfs.sh"
expect guest-passes 0 "WORKBENCH-END rc=0" \
	env INITRD="$tmp/ok.cpio.gz" CONSOLE_LOG="$tmp/ok.log" TIMEOUT=600 "$TOP/scripts/boot.sh"
expect selftest-fails 2 "guest reported test failures" \
	env INITRD="$tmp/fail.cpio.gz" CONSOLE_LOG="$tmp/fail.log" TIMEOUT=600 "$TOP/scripts/boot.sh"
expect guest-panics 255 "guest kernel panicked" \
	env INITRD="$tmp/ok.cpio.gz" CONSOLE_LOG="$tmp/panic.log" TIMEOUT=600 \
	APPEND_EXTRA=workbench.fault=panic "$TOP/scripts/boot.sh"
# The guest hangs in init, a few seconds after QEMU starts: 20 s is enough.
expect guest-hangs 124 "QEMU timed out after 20s" \
	env INITRD="$tmp/ok.cpio.gz" CONSOLE_LOG="$tmp/hang.log" TIMEOUT=20 \
	APPEND_EXTRA=workbench.fault=hang "$TOP/scripts/boot.sh"
# The same hang, caught by the console-silence watchdog long before the
# timeout: boot.sh must name where the guest was and show its vCPUs' PCs
# with the kernel function of each (sampled over QEMU's monitor).
stalls() {
	local rc
	env INITRD="$tmp/ok.cpio.gz" CONSOLE_LOG="$tmp/stall.log" TIMEOUT=600 STALL=15 \
		APPEND_EXTRA=workbench.fault=hang "$TOP/scripts/boot.sh"
	rc=$?
	grep -Eq '^sample 5 cpu1 EL[0-2][th] pc=[0-9a-f]{16} ' "$tmp/out" ||
		{ echo "no sampled vCPU state"; return 99; }
	grep -q '^CPU#1' "$tmp/stall.log.cpus" || { echo "no register dump"; return 99; }
	return $rc
}
expect guest-stalls 124 "guest hung: no console output for 15s before the guest stages began" stalls

# The EL2-loop detector behind boot.sh's retry, against a fake monitor:
# it must name the looping vCPU (exit 4) and leave a normal guest alone.
map=$(dirname "$IMAGE")/../../../System.map
# listening: wait (up to 120 s, for a busy machine) for the fake monitor's socket.
listening() {
	local i
	for i in $(seq 600); do [ -S "$1" ] && return 0; sleep 0.2; done
	return 1
}
el2_loop() {
	local rc fake
	rm -f "$tmp/mon"
	python3 "$TOP/scripts/fake-qemu-monitor.py" "$tmp/mon" "$map" cpu_do_idle __guest_exit_panic &
	fake=$!
	listening "$tmp/mon"
	python3 "$TOP/scripts/qemu-cpu-state.py" "$tmp/mon" "$map" 3
	rc=$?
	kill $fake
	wait $fake 2>/dev/null
	rm -f "$tmp/mon"
	python3 "$TOP/scripts/fake-qemu-monitor.py" "$tmp/mon" "$map" cpu_do_idle __kvm_vcpu_run &
	fake=$!
	listening "$tmp/mon"
	python3 "$TOP/scripts/qemu-cpu-state.py" "$tmp/mon" "$map" 3 >"$tmp/normal" ||
		{ kill $fake; echo "a normal guest was reported as looping: $(cat "$tmp/normal")"; return 99; }
	kill $fake
	return $rc
}
expect cpu-state-finds-el2-loop 4 "^cpu1: in KVM's EL2 exception path in all 3 samples" el2_loop

# boot.sh's retry, with a fake QEMU: its first boot hangs with a vCPU in
# the EL2 loop (as the fake monitor reports), the second passes. boot.sh
# must catch the loop within 30 s of silence, say so, boot again, pass,
# and leave the retry on record for the report.
cat >"$tmp/fake-qemu" <<'FAKE'
#!/usr/bin/env bash
[ "$1" != --version ] || { echo "QEMU emulator version 10.0.2 (fake)"; exit 0; }
while [ $# -gt 0 ]; do
	case $1 in
	-monitor) mon=${2#unix:} mon=${mon%%,*}; shift ;;
	-pidfile) echo $$ >"$2"; shift ;;
	esac
	shift
done
n=$(cat "$FAKE_STATE" 2>/dev/null || echo 0)
echo $((n + 1)) >"$FAKE_STATE"
echo "WORKBENCH-BEGIN fake"
if [ "$n" = 0 ]; then
	# Not on QEMU's stdout: that would hold boot.sh's console pipe open.
	python3 "$FAKE_MONITOR" "$mon" "$FAKE_MAP" cpu_do_idle __guest_exit_panic \
		</dev/null >/dev/null 2>&1 &
	echo $! >"$FAKE_STATE.monitor"
	echo "WORKBENCH-STAGE-BEGIN kselftest-kvm"
	echo "# selftests: kvm: demand_paging_test"
	exec sleep 600
fi
echo "WORKBENCH-END rc=0"
FAKE
chmod +x "$tmp/fake-qemu"
retries() {
	local rc
	env QEMU="$tmp/fake-qemu" FAKE_STATE="$tmp/fake-state" FAKE_MAP="$map" \
		FAKE_MONITOR="$TOP/scripts/fake-qemu-monitor.py" INITRD="$tmp/ok.cpio.gz" \
		CONSOLE_LOG="$tmp/retry.log" TIMEOUT=300 STALL=200 "$TOP/scripts/boot.sh"
	rc=$?
	kill "$(cat "$tmp/fake-state.monitor")" 2>/dev/null || true
	[ "$(cat "$tmp/fake-state")" = 2 ] || { echo "QEMU ran $(cat "$tmp/fake-state") times"; return 99; }
	grep -q "demand_paging_test" "$tmp/retry.log.retried" || { echo "no retry record"; return 99; }
	return $rc
}
expect boot-retries-el2-loop 0 "stuck in KVM's EL2 exception loop while running kvm:demand_paging_test .*booting once more" retries

# run.sh's second lane (make check's STAGES_ALONGSIDE), with fake stages
# in a copy of the workbench's run.sh, lib.sh and report.py.
# 1. Main lane p1 w q, lane x y from w on: x must start after p1 has
#    ended and before w has; its failure (2) shows with its log's last
#    lines, but the exit code is w's (124), the first failure in the list's
#    order; run.sh waits for y, which ends after q; stages.tsv keeps the
#    list's order; results.json names the lane and the wall clock.
# 2. The producer "build" fails: x, listed before it, still runs; z,
#    after it, does not.
# 3. Ctrl-C (SIGINT to the process group), then SIGTERM to run.sh alone,
#    during the main lane's stage: run.sh dies of the signal, and the lane
#    stops with it: its stage with its children, and the lane itself,
#    which would go on to its next stage (a background job of a script
#    ignores SIGINT).
lane() {
	local d=$tmp/lane rc i
	mkdir -p "$d/scripts"
	cp "$TOP/scripts/run.sh" "$TOP/scripts/lib.sh" "$TOP/scripts/report.py" "$d/scripts/"
	stamp() { echo "date +%s.%N >$d/$1"; }
	printf '#!/bin/sh\nsleep 1; %s\n' "$(stamp p1.end)" >"$d/scripts/p1.sh"
	printf '#!/bin/sh\nsleep 3; %s; exit 124\n' "$(stamp w.end)" >"$d/scripts/w.sh"
	printf '#!/bin/sh\n%s\n' "$(stamp q.end)" >"$d/scripts/q.sh"
	printf '#!/bin/sh\n%s; echo "E: x: injected failure"; exit 2\n' "$(stamp x.start)" >"$d/scripts/x.sh"
	printf '#!/bin/sh\nsleep 5; %s\n' "$(stamp y.end)" >"$d/scripts/y.sh"
	printf '#!/bin/sh\nexit 2\n' >"$d/scripts/build.sh"
	printf '#!/bin/sh\n%s\n' "$(stamp z.start)" >"$d/scripts/z.sh"
	printf '#!/bin/sh\necho $$ >%s/s.pid; exec sleep 60\n' "$d" >"$d/scripts/s.sh"
	printf '#!/bin/sh\nexec sleep 60\n' >"$d/scripts/w2.sh"
	printf '#!/bin/sh\nsleep 3; %s\n' "$(stamp s2.start)" >"$d/scripts/s2.sh"
	chmod +x "$d"/scripts/*.sh

	env -u RESULTS RESULTS_DIR="$d/r" STAGES_HOST="p1 w x y q" STAGES_ALONGSIDE="x y" ALONGSIDE_FROM=w \
		"$d/scripts/run.sh" >"$d/out" 2>&1
	rc=$?
	cat "$d/out"
	grep -Eq '^I: run: x: FAIL in [0-9]+:[0-9]{2} \(rc=2\), alongside' "$d/out" &&
		grep -q '^    x: E: x: injected failure$' "$d/out" ||
		{ echo "no alongside FAIL line for x with its log's last lines"; return 99; }
	[ "$(cut -f1,4 "$d/r/latest/stages.tsv" | tr '\t\n' ': ')" = "p1:0 w:124 x:2 y:0 q:0 " ] ||
		{ echo "stages.tsv is not p1 w x y q with their codes"; return 99; }
	awk -v s="$(cat "$d/x.start")" -v b="$(cat "$d/p1.end")" -v e="$(cat "$d/w.end")" \
		'BEGIN { exit !(s >= b && s < e) }' || { echo "x did not run while w ran"; return 99; }
	awk -v y="$(cat "$d/y.end")" -v q="$(cat "$d/q.end")" 'BEGIN { exit !(y > q) }' ||
		{ echo "y ended before q: the lane did not outlast the main lane"; return 99; }
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"]
sys.exit(not (r["alongside"] == ["x", "y"] and r["wall_seconds"] >= 5))' "$d/r/latest/results.json" ||
		{ echo "results.json: no lane x y or no wall clock of 5 s or more"; return 99; }
	echo "x ran while w ran; the run waited for y"

	env -u RESULTS RESULTS_DIR="$d/r2" STAGES_HOST="x build z" STAGES_ALONGSIDE="x z" \
		"$d/scripts/run.sh" >"$d/out2" 2>&1
	i=$?
	cat "$d/out2"
	[ "$i" = 2 ] && grep -q '^I: run: ---- x$' "$d/out2" && grep -q '^I: run: not run, as build failed: z$' "$d/out2" &&
		[ ! -e "$d/z.start" ] || { echo "after the failed build: exit $i, x not run or z run"; return 99; }
	echo "the failed build: x ran, z did not"

	# interrupt HOW CODE: run the main lane stage w2 and the lane's s s2,
	# then, once s runs, HOW=int: SIGINT to run.sh's process group, as
	# Ctrl-C from a terminal does (not ignored, as a background job of this
	# script would); HOW=term: SIGTERM to run.sh alone. run.sh must end
	# with CODE (Popen's: minus the signal), and neither s (its sleep) may
	# run on nor s2 start.
	interrupt() {
		local k
		rm -f "$d/s.pid" "$d/s2.start"
		k=$(env -u RESULTS RESULTS_DIR="$d/r3" STAGES_HOST="p1 s s2 w2" STAGES_ALONGSIDE="s s2" ALONGSIDE_FROM=w2 \
			python3 -c 'import os, signal, subprocess, sys, time
d, how = sys.argv[1], sys.argv[2]
def child():  # its own process group, SIGINT as from a terminal
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
p = subprocess.Popen(sys.argv[3:], stdout=open(d + "/out3", "w"), stderr=subprocess.STDOUT,
                     preexec_fn=child)
for _ in range(600):
    if os.path.exists(d + "/s.pid") and os.path.getsize(d + "/s.pid"):
        break
    time.sleep(0.2)
if how == "int":
    os.killpg(p.pid, signal.SIGINT)
else:
    os.kill(p.pid, signal.SIGTERM)
try:
    print(p.wait(timeout=120))
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    print("timeout")' "$d" "$1" "$d/scripts/run.sh")
		cat "$d/out3"
		sleep 5
		if [ -s "$d/s.pid" ] && kill -0 "$(cat "$d/s.pid")" 2>/dev/null; then
			kill "$(cat "$d/s.pid")"
			echo "after SIG$1 (run.sh exit $k) the lane's stage still runs"
			return 99
		fi
		[ ! -e "$d/s2.start" ] || { echo "after SIG$1 (run.sh exit $k) the lane went on to its next stage"; return 99; }
		[ -s "$d/s.pid" ] && [ "$k" = "$2" ] || { echo "run.sh exit $k after SIG$1, not $2 (or s never started)"; return 99; }
	}
	interrupt int -2 || return
	interrupt term -15 || return
	echo "Ctrl-C, SIGTERM: the lane stopped with run.sh"
	return $rc
}
expect run-lane-alongside 124 '^Ctrl-C, SIGTERM: the lane stopped with run.sh$' lane
# A lane that cannot work is refused before anything runs (and makes no
# results directory: checked at the end).
expect run-lane-refuses-producer 1 "STAGES_ALONGSIDE: build cannot run beside the other stages" \
	env -u RESULTS RESULTS_DIR="$tmp/r" STAGES_HOST="apply build boot" STAGES_ALONGSIDE=build "$TOP/scripts/run.sh"
expect run-lane-refuses-unknown-stage 1 "STAGES_ALONGSIDE: model is not in STAGES_HOST" \
	env -u RESULTS RESULTS_DIR="$tmp/r" STAGES_HOST="apply build boot" STAGES_ALONGSIDE=model "$TOP/scripts/run.sh"

# 5. The host checks' guard against a hang (scripts/cpu-budget.py, and
# kunit_host.c's own per case): a CPU-time budget, which a busy machine
# cannot reach as it reaches a wall-clock limit, and a wall-clock backstop
# far above it for a hang that uses no CPU.
budget=$TOP/scripts/cpu-budget.py
ksrc=$(realpath -m "${TREE:-$TOP/build/linux}")
mkdir -p "$tmp/lit" "$tmp/lit1"
# the two lightest AArch64 tests (about 0.1 s of CPU each)
cp "$TOP/selftests/litmus/asid-fastpath-vs-rollover+lse.litmus" \
	"$TOP/selftests/litmus/asid-fastpath-vs-rollover+str+lse.litmus" "$tmp/lit/"
cp "$TOP/selftests/litmus/asid-fastpath-vs-rollover+lse.litmus" "$tmp/lit1/"
# herd7 as scripts/litmus.sh finds it ($HERD7, PATH, its cached build).
herd=${HERD7:-$(command -v herd7 || true)}
if [ -z "$herd" ] && [ -x "$CACHE_DIR/herdtools7-7.57/bin/herd7" ]; then
	herd=$CACHE_DIR/herdtools7-7.57/bin/herd7
	export HERDLIB=$CACHE_DIR/herdtools7-7.57/share/herdtools7/herd
fi
kunit_host=$tmp/kunit_host
# (a failed build leaves no runner: the cases below that use it fail)
env KSRC="$ksrc" KUNIT_HOST_OUT="$kunit_host" "$TOP/selftests/harness/kunit_check.sh" >"$tmp/kh.build" 2>&1 ||
	echo "# cannot build the allocator's KUnit runner from $ksrc: $(tail -n 1 "$tmp/kh.build")"
# The checks run at nice 19 below the hog: a gap of at least 14 levels
# (about 70 times less CPU) needs this script at nice 5 or less.
hog_start() {	# a busy loop per core at this script's priority (make check: 0), 10 min at most
	local i
	for i in $(seq "$(getconf _NPROCESSORS_ONLN)"); do
		sh -c 'ulimit -t 600; while :; do :; done' &
		hog_pids+=($!)
	done
	# Let the scheduler spread them over the cores first: a task started
	# at once can find a core still free for its first few hundred ms.
	sleep 2
}
hog_stop() {
	kill "${hog_pids[@]}" 2>/dev/null || true
	wait "${hog_pids[@]}" 2>/dev/null || true
	hog_pids=()
}
# starved OUT BUDGET: a run that the runner reported in OUT
# (CPU_BUDGET_REPORT=1: "... s of wall time", from its fork to the end)
# took longer than BUDGET seconds: the starvation that a wall-clock limit
# of that size fails on was reached. Prints the runs; fails if none was so
# starved.
starved() {
	local w
	w=$(grep -v TIMEOUT "$1" | sed -n 's/.*[ (]\([0-9.]*\) s of wall time)\{0,1\}$/\1/p')
	grep -v TIMEOUT "$1" | grep ' s of wall time)\{0,1\}$' | sed 's/^/  /'
	[ -n "$w" ] || { echo "no run reported its wall time"; return 1; }
	echo "$w" | awk -v b="$2" '$1 > b { ok = 1 } END { exit !ok }' ||
		{ echo "no run took more than its $2 s budget: the hog did not starve them, so this proves nothing"; return 1; }
}
# under_hog BUDGET: under the hog, at nice 19 (below the lane's 10), one
# of the lane's checks with a small budget, BUDGET the runner:
# litmus/check.sh on two AArch64 tests (1 s of CPU per herd7 run; each
# needs about 0.1 s). It must pass, and a herd7 run must have taken more
# wall time than its CPU budget (here they take 6-10 s). (Not the KUnit
# runner: it forks a child per case, and a task that runs for a few ms
# after its fork gets a core before the hog does, so it is not starved.)
under_hog() {
	local b=$1 rc=0
	if [ -z "$herd" ]; then
		[ "${WORKBENCH_REQUIRE_TOOLS:-0}" = 1 ] &&
			{ echo "no herd7 (WORKBENCH_REQUIRE_TOOLS=1): make litmus builds it"; return 98; }
		echo "herd7 not found: nothing ran under the hog (make litmus builds it)"
		return 0
	fi
	if [ "$(nice)" -gt 5 ]; then
		echo "this runs at nice $(nice): the checks cannot run 14 nice levels below the hog (run it at nice 5 or less)"
		return 98
	fi
	hog_start
	nice -n 19 env CPU_BUDGET_REPORT=1 CPU_BUDGET_WALL_FACTOR=100 CPU_BUDGET="$b" HERD7="$herd" MM="$ksrc/tools/memory-model" LITMUS_NESTED=1 \
		LITMUS_DIR="$tmp/lit" LITMUS_CPU_SECONDS=1 "$TOP/selftests/litmus/check.sh" >"$tmp/lit.out" 2>&1 ||
		{ rc=$?; echo "litmus/check.sh failed under the hog (rc=$rc)"; }
	grep -e '^not ok' -e 'passed, ' "$tmp/lit.out"
	[ "$(grep -c '^ok ' "$tmp/lit.out")" = 2 ] || { echo "not 2 herd7 runs passed"; rc=96; }
	grep '^ok ' "$tmp/lit.out" >"$tmp/lit.ok"
	starved "$tmp/lit.ok" 1 || rc=97
	hog_stop
	[ "$rc" != 0 ] || echo "passed, starved past its budget"
	return "$rc"
}
hog_re='^passed, starved past its budget$'
[ -n "$herd" ] || hog_re='^herd7 not found: nothing ran under the hog'
expect lane-checks-under-hog 0 "$hog_re" under_hog "$budget"
# hang BUDGET FAKE [env...]: litmus/check.sh with a herd7 that hangs,
# under an outer limit of its own (for a runner without a backstop).
printf '#!/bin/sh\n[ "$1" != -version ] || { echo "herd7 that spins"; exit 0; }\nwhile :; do :; done\n' >"$tmp/herd7-spins"
printf '#!/bin/sh\n[ "$1" != -version ] || { echo "herd7 that blocks"; exit 0; }\nexec sleep 600\n' >"$tmp/herd7-blocks"
chmod +x "$tmp/herd7-spins" "$tmp/herd7-blocks"
hang() {
	local b=$1 fake=$2
	shift 2
	env "$@" CPU_BUDGET="$b" HERD7="$tmp/$fake" MM="$ksrc/tools/memory-model" LITMUS_NESTED=1 \
		LITMUS_DIR="$tmp/lit1" LITMUS_CPU_SECONDS=1 timeout -k 5 300 "$TOP/selftests/litmus/check.sh"
}
spin_re='^not ok 1 asid-fastpath-vs-rollover\+lse # .*herd7 rc=124, cpu-budget: TIMEOUT: herd7 asid-fastpath-vs-rollover\+lse used its CPU budget: [01]\.[0-9] s of CPU, limit 1 s'
block_re='^not ok 1 asid-fastpath-vs-rollover\+lse # .*herd7 rc=124, cpu-budget: TIMEOUT: herd7 asid-fastpath-vs-rollover\+lse did not end in 3 s of wall time \(the backstop\), having used 0\.[0-9] s of CPU of its 1 s budget'
# A check that spins is ended by its CPU budget (the backstop: 120 s).
expect check-spinning-hang-caught 1 "$spin_re" hang "$budget" herd7-spins CPU_BUDGET_WALL_FACTOR=120
# A check that blocks is ended by the backstop, here 3 times its budget.
expect check-blocked-hang-caught 1 "$block_re" hang "$budget" herd7-blocks CPU_BUDGET_WALL_FACTOR=3
# The same two hangs in a case of the allocator's KUnit runner (its own
# cases runner_spins and runner_blocks), caught by its own limits (each
# under an outer limit, for a runner without them).
expect kunit-case-spinning-caught 1 '^    # runner_spins: TIMEOUT: used its CPU budget: [01]\.[0-9] s of CPU, limit 1 s \(KUNIT_CASE_CPU_SECONDS\)$' \
	env KUNIT_HOST_SELFTEST=1 KUNIT_CASE_CPU_SECONDS=1 KUNIT_CASE_WALL_SECONDS=300 timeout -k 5 600 "$kunit_host" runner_spins
expect kunit-case-blocked-caught 1 '^    # runner_blocks: TIMEOUT: did not end in 3 s of wall time \(the backstop, KUNIT_CASE_WALL_SECONDS\), having used 0\.[0-9] s of CPU of its 10 s budget' \
	env KUNIT_HOST_SELFTEST=1 KUNIT_CASE_CPU_SECONDS=10 KUNIT_CASE_WALL_SECONDS=3 timeout -k 5 60 "$kunit_host" runner_blocks
# Each of the three cpu-budget.py cases above fails on its seeded mutant
# of the runner, in the way that mutant must make it fail: the backstop
# made the budget (a wall-clock limit of that size, the old
# `timeout N`: a starved check is ended after 1 s of wall time), no
# RLIMIT_CPU (the spinning herd7 runs to the backstop), no backstop (the
# blocked herd7 runs until the outer limit, here 20 s).
budget_mutants() {
	local m e out
	while IFS='|' read -r m e; do
		sed "$e" "$budget" >"$tmp/$m.py"
		chmod +x "$tmp/$m.py"
		[ "$(diff "$budget" "$tmp/$m.py" | grep -c '^>')" = 1 ] ||
			{ echo "mutant $m: '$e' does not change one line of $budget"; return 98; }
	done <<'M'
budget-wall|s/^        wall = budget \* factor$/        wall = budget/
budget-no-cpu-limit|s/^\( *\)resource.setrlimit(resource.RLIMIT_CPU, rlim)$/\1pass/
budget-no-backstop|s/^    signal.alarm(wall)$/    signal.alarm(0)/
M
	out=$tmp/mutant.out
	if [ -n "$herd" ]; then
		under_hog "$tmp/budget-wall.py" >"$out" 2>&1 && { cat "$out"; echo "budget-wall: lane-checks-under-hog passed"; return 1; }
		grep -q 'cpu-budget: TIMEOUT: herd7 [^ ]* did not end in 1 s of wall time (the backstop)' "$out" ||
			{ cat "$out"; echo "budget-wall: a starved check was not ended by a 1 s wall-clock limit"; return 1; }
		echo "budget-wall killed: $(grep -o 'cpu-budget: TIMEOUT: [^:]* did not end in 1 s of wall time (the backstop)' "$out" | sort -u | tr '\n' ' ')"
	else
		echo "budget-wall: not run (no herd7; WORKBENCH_REQUIRE_TOOLS=1 requires it)"
	fi
	hang "$tmp/budget-no-cpu-limit.py" herd7-spins CPU_BUDGET_WALL_FACTOR=5 >"$out" 2>&1
	grep -q 'did not end in 5 s of wall time (the backstop)' "$out" && ! grep -Eq "$spin_re" "$out" ||
		{ cat "$out"; echo "budget-no-cpu-limit: the spinning herd7 was not left to the backstop"; return 1; }
	echo "budget-no-cpu-limit killed: $(grep -m1 '^not ok' "$out" | sed 's/.*herd7 rc/herd7 rc/' | cut -c1-160)"
	env CPU_BUDGET="$tmp/budget-no-backstop.py" HERD7="$tmp/herd7-blocks" MM="$ksrc/tools/memory-model" LITMUS_NESTED=1 \
		LITMUS_DIR="$tmp/lit1" LITMUS_CPU_SECONDS=1 CPU_BUDGET_WALL_FACTOR=3 timeout -k 5 20 "$TOP/selftests/litmus/check.sh" >"$out" 2>&1
	e=$?
	[ "$e" = 124 ] && ! grep -Eq "$block_re" "$out" ||
		{ cat "$out"; echo "budget-no-backstop: the blocked herd7 ended before the outer limit (exit $e)"; return 1; }
	echo "budget-no-backstop killed: the blocked herd7 ran until the outer 20 s limit"
	if [ -n "$herd" ]; then echo "3 of 3 mutants of the budget killed"
	else echo "2 of 3 mutants of the budget killed; budget-wall not run (no herd7)"; fi
}
mut_re='^3 of 3 mutants of the budget killed$'
[ -n "$herd" ] || mut_re='^2 of 3 mutants of the budget killed; budget-wall not run \(no herd7\)$'
expect budget-mutants-killed 0 "$mut_re" budget_mutants

# Bad input loses nothing: none of the refused runs made a results directory.
n=$((n + 1))
if [ -e "$tmp/r" ]; then
	echo "not ok $n refused-runs-leave-no-results # $(ls "$tmp/r" | tr '\n' ' ')"
	nfail=$((nfail + 1))
else
	echo "ok $n refused-runs-leave-no-results"
	npass=$((npass + 1))
fi

echo "$npass passed, $nfail failed"
[ "$nfail" = 0 ] || exit $E_FAIL
