#!/usr/bin/env bash
# Stage "workbench-selftest": the workbench must fail loudly, with the
# documented exit code and message, when something is wrong. Each case
# injects one fault and checks both. Needs a built Image, selftests and
# guest rootfs (it runs after "boot" in make check).
stage=workbench-faults
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wb-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
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
echo "1..21"

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
expect bad-soak-duration 1 "DURATION='1h' is not a positive number of seconds" \
	env DURATION=1h RESULTS_DIR="$tmp/r" "$TOP/scripts/soak.sh"
expect bad-bench-revision 1 "BENCH_PATCHED_REV='no-such-rev' is not a revision" \
	env BENCH_PATCHED_REV=no-such-rev RESULTS_DIR="$tmp/r" "$TOP/scripts/bench.sh"
expect bad-bench-churn-events 1 "BENCH_LPI_CHURN_EVENTS='256 1k': '1k' is not a number of events per device" \
	env BENCH_LPI_CHURN_EVENTS="256 1k" RESULTS_DIR="$tmp/r" "$TOP/scripts/bench.sh"
expect debug-compare-default-profile 1 "PROFILE=default has no debug options" \
	env PROFILE=default RESULTS_DIR="$tmp/r" "$TOP/scripts/debug-compare.sh"
# A command that fails under set -e, here in a command substitution as
# deps.sh's QEMU version check once did, ends the stage with a message
# naming it, never silently.
printf '%s\n' 'stage=silent' ". '$TOP/scripts/lib.sh'" 'v=$(false | cat)' 'echo "not reached $v"' \
	>"$tmp/silent.sh"
expect no-silent-exit 1 '^E: silent: line 3: "v=\$\(false \| cat\)" failed \(rc=1\)$' \
	bash "$tmp/silent.sh"

# debug-compare's judge (scripts/splat-compare.py), on two made-up
# consoles of kernels that enabled KCSAN. Under kcsan it must count the
# patched WARNING and the race new in ASID code (2), not the KVM race
# stock shows too nor the race outside KVM; under debug every patched
# splat line (5).
mkdir -p "$tmp/sc/stock" "$tmp/sc/patched"
printf '%s\n' '[    0.1] kcsan: enabled early' \
	'[    1.0] BUG: KCSAN: data-race in foo+0x1/0x20 / bar+0x2/0x30' \
	'[    2.0] BUG: KCSAN: data-race in kvm_vcpu_x+0x1/0x2 / vgic_y+0x3/0x4' >"$tmp/sc/stock/console.log"
printf '%s\n' '[    0.1] kcsan: enabled early' \
	'[    1.0] BUG: KCSAN: data-race in bar+0x9/0x30 / foo+0x1/0x20' \
	'[    2.0] BUG: KCSAN: data-race in vgic_y+0x3/0x4 / kvm_vcpu_x+0x1/0x2' \
	'[    3.0] BUG: KCSAN: data-race in asid_new+0x1/0x2 / baz+0x1/0x2' \
	'[    4.0] BUG: KCSAN: data-race in qux+0x1/0x2' \
	'[    5.0] WARNING: CPU: 0 PID: 1 at x' >"$tmp/sc/patched/console.log"
expect splat-compare-gates 0 "^gates 2 5$" sh -c \
	'python3 "$1/scripts/splat-compare.py" "$2" kcsan >/dev/null && k=$(cat "$2/debug-compare.gate") &&
	 python3 "$1/scripts/splat-compare.py" "$2" debug >/dev/null && d=$(cat "$2/debug-compare.gate") &&
	 echo "gates $k $d"' \
	sh "$TOP" "$tmp/sc"
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
# listening: wait (up to 10 s) for the fake monitor's socket.
listening() {
	local i
	for i in $(seq 50); do [ -S "$1" ] && return 0; sleep 0.2; done
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
