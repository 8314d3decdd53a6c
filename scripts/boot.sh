#!/usr/bin/env bash
# Stage "boot": run the L1 guest under QEMU TCG with EL2 (virtualization=on)
# so KVM works inside it, log the console, and classify the outcome:
#   guest printed "WORKBENCH-END rc=0"      -> 0
#   guest printed "WORKBENCH-END rc=N" N!=0 -> 2
#   host timeout (TIMEOUT seconds)          -> 124
#   no console output for STALL seconds     -> 124
#   a vCPU stuck in KVM's EL2 exception loop -> 124 (after one retry)
#   kernel panic, or QEMU exited without the sentinel -> 255
#
#   IMAGE, INITRD    kernel and initramfs (defaults: build/kernel/.../Image, build/initramfs/l1.cpio.gz)
#   CONSOLE_LOG      where the console goes (default build/console.log)
#   QEMU QEMU_CPU QEMU_SMP QEMU_POSSIBLE QEMU_MEM QEMU_EXTRA APPEND_EXTRA TIMEOUT
#   STALL            seconds of console silence that count as a hang
#                    (default 600, 1500 for checked profiles; 0 = off).
#                    A selftest's output reaches the console while it runs
#                    (every 10 s, selftests/guest/stage-kselftest-kvm.sh);
#                    the longest a test can stay silent is its plan timeout
#                    (300 s x TIMEOUT_SCALE) plus its 10 s kill delay.
#   SYSTEM_MAP       for naming the vCPUs' PCs when the guest hangs
#                    (default: System.map of IMAGE's build tree)
#   KNOWN_HANG_RETRY 1 (default): boot once more if a vCPU is stuck in
#                    KVM's EL2 exception loop (Documentation/known-hangs.md);
#                    0: fail at once
#   QEMU_MIN_VERSION 10.0 (default): refuse an older QEMU (exit 1); QEMU 7.2
#                    loses nested KVM guests in that loop. 0: any version.
#
# On a hang (STALL or TIMEOUT), before QEMU is stopped, the vCPUs' PCs are
# sampled over QEMU's monitor (scripts/qemu-cpu-state.py) and printed with
# the kernel function each is in; the full registers go to
# $CONSOLE_LOG.cpus.
stage=boot
. "$(dirname "$0")/lib.sh"

QEMU=${QEMU:-qemu-system-aarch64}
QEMU_CPU=${QEMU_CPU:-max,pauth-impdef=on}
QEMU_SMP=${QEMU_SMP:-2}
# Possible CPUs: QEMU gets this many vCPUs and the kernel brings QEMU_SMP
# of them online (maxcpus=), so that the allocator's KUnit cases that
# need 3 possible CPUs run while everything else runs on QEMU_SMP CPUs.
QEMU_POSSIBLE=${QEMU_POSSIBLE:-4}
QEMU_MEM=${QEMU_MEM:-4G}
QEMU_MACHINE=${QEMU_MACHINE:-virt,virtualization=on,gic-version=3,its=on}
if [ "$PROFILE" = default ]; then
	TIMEOUT=${TIMEOUT:-1800} STALL=${STALL:-600}
else
	TIMEOUT=${TIMEOUT:-5400} STALL=${STALL:-1500}
fi
IMAGE=${IMAGE:-$KERNEL_O/arch/arm64/boot/Image}
INITRD=${INITRD:-$TOP/build/initramfs/l1.cpio.gz}
CONSOLE_LOG=${CONSOLE_LOG:-$TOP/build/console.log}
SYSTEM_MAP=${SYSTEM_MAP:-$(dirname "$IMAGE")/../../../System.map}
# nmi_watchdog=nopanic: a hard lockup is reported (a console splat, which
# fails the run in scripts/report.py) instead of panicking at once, so
# that a vCPU stuck in KVM's EL2 exception loop with the other CPU still
# alive is caught by the watchdog below as the known hang it is.
APPEND="console=ttyAMA0 panic=-1 softlockup_panic=1 nmi_watchdog=nopanic ${APPEND_EXTRA:-}"

need_cmd "$QEMU" timeout
QEMU_MIN_VERSION=${QEMU_MIN_VERSION:-10.0}
qemu_version=$("$QEMU" --version 2>/dev/null | sed -n '1s/^.*version \([0-9][0-9.]*\).*$/\1/p')
[ -n "$qemu_version" ] || die $E_USAGE "cannot read the version of '$QEMU' ($QEMU --version)"
if [ "$(printf '%s\n%s\n' "$QEMU_MIN_VERSION" "$qemu_version" | sort -V | head -n 1)" != "$QEMU_MIN_VERSION" ]; then
	die $E_USAGE "QEMU $qemu_version is older than $QEMU_MIN_VERSION: under it KVM guests inside the test guest are lost in an EL2 exception loop (Documentation/known-hangs.md); run make deps, or set QEMU_MIN_VERSION=0 to run it anyway"
fi
[ -f "$IMAGE" ] || die $E_USAGE "kernel Image '$IMAGE' not found"
[ -f "$INITRD" ] || die $E_USAGE "initramfs '$INITRD' not found"
case $TIMEOUT in '' | *[!0-9]*) die $E_USAGE "TIMEOUT='$TIMEOUT' is not a number of seconds" ;; esac
case $STALL in '' | *[!0-9]*) die $E_USAGE "STALL='$STALL' is not a number of seconds" ;; esac
case $QEMU_SMP in '' | *[!0-9]* | 0) die $E_USAGE "QEMU_SMP='$QEMU_SMP' is not a number of vCPUs" ;; esac
case $QEMU_POSSIBLE in '' | *[!0-9]*) die $E_USAGE "QEMU_POSSIBLE='$QEMU_POSSIBLE' is not a number of vCPUs" ;; esac
smp=$QEMU_SMP
if [ "$QEMU_POSSIBLE" -gt "$QEMU_SMP" ]; then
	smp=$QEMU_POSSIBLE
	APPEND="$APPEND maxcpus=$QEMU_SMP"
fi

cmd=("$QEMU" -M "$QEMU_MACHINE" -cpu "$QEMU_CPU" -smp "$smp" -m "$QEMU_MEM"
	-nographic -no-reboot -nic none -kernel "$IMAGE" -initrd "$INITRD" -append "$APPEND")
# shellcheck disable=SC2206
[ -n "${QEMU_EXTRA:-}" ] && cmd+=($QEMU_EXTRA)
mkdir -p "$(dirname "$CONSOLE_LOG")"
# The monitor is not part of the command shown: it is only for hangs.
mon=$(mktemp -d "${TMPDIR:-/tmp}/wb-boot.XXXXXX")
trap 'rm -rf "$mon"' EXIT
qcmd=("${cmd[@]}" -monitor "unix:$mon/monitor.sock,server=on,wait=off" -pidfile "$mon/qemu.pid")
shown=$(quote_cmd "${cmd[@]}")
info "Running with:"
printf '$ %s\n' "$shown"
info "QEMU $qemu_version; console: $CONSOLE_LOG (timeout ${TIMEOUT}s)"
rm -f "$CONSOLE_LOG.retried" "$CONSOLE_LOG.hang1" "$CONSOLE_LOG.hang1.cpus"

# watchdog: until QEMU exits, stop it when the console stays silent for
# STALL seconds or TIMEOUT is near, after sampling where its vCPUs are.
# Every 30 s of silence it also looks once (3 samples) for a vCPU stuck
# in KVM's EL2 exception loop, which never ends by itself and masks
# interrupts, so it is caught in seconds instead of after STALL.
watchdog() {
	local size last=-1 quiet=0 t=0 why rc
	while sleep 5; do
		t=$((t + 5))
		size=$(stat -c %s "$CONSOLE_LOG" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then last=$size quiet=0; else quiet=$((quiet + 5)); fi
		[ -f "$mon/qemu.pid" ] || continue
		why=
		if [ "$STALL" != 0 ] && [ "$quiet" -ge 30 ] && [ $((quiet % 30)) = 0 ]; then
			rc=0
			python3 "$TOP/scripts/qemu-cpu-state.py" "$mon/monitor.sock" "$SYSTEM_MAP" 3 \
				>/dev/null 2>&1 || rc=$?
			[ "$rc" != 4 ] || why="el2-loop $quiet"
		fi
		[ -n "$why" ] || [ "$STALL" = 0 ] || [ "$quiet" -lt "$STALL" ] || why="stall $quiet"
		[ -n "$why" ] || [ "$t" -lt $((TIMEOUT - 10)) ] || why="timeout $t"
		[ -n "$why" ] || continue
		# exit 4 (a vCPU in the EL2 loop) must not end this subshell (set -e)
		python3 "$TOP/scripts/qemu-cpu-state.py" "$mon/monitor.sock" "$SYSTEM_MAP" 5 \
			"$CONSOLE_LOG.cpus" >"$mon/cpus" 2>&1 || true
		echo "$why" >"$mon/why"
		kill "$(cat "$mon/qemu.pid")" 2>/dev/null
		return
	done
}

# live: what the terminal shows while the guest runs: only the workbench's
# own lines (stage progress), or everything with V=1 or QUIET=0.
live() {
	if [ "${QUIET:-1}" = 1 ] && [ "$V" != 1 ]; then
		grep --line-buffered -E '^(WORKBENCH|BENCH |# selftests:|# kvm-unit-tests: |(not )?ok [0-9]+ (selftests|l2-guest|kvm-|bench-))'
	else
		cat
	fi
}

# run_qemu: one boot, console to CONSOLE_LOG; sets qrc; the watchdog
# leaves its reason in $mon/why if it stopped QEMU.
run_qemu() {
	local wpid
	rm -f "$mon/why" "$mon/cpus" "$mon/qemu.pid" "$mon/monitor.sock" "$CONSOLE_LOG.cpus"
	printf '# to reproduce: %s\n' "$shown" >"$CONSOLE_LOG"
	watchdog &
	wpid=$!
	set +e
	# stdbuf: tr would hold up to 4 KiB of console back from the log file
	# while the guest is quiet (a soak iteration prints one line in minutes).
	timeout --foreground -k 10 "$((TIMEOUT + 60))" "${qcmd[@]}" </dev/null 2>&1 |
		stdbuf -oL tr -d '\r' | tee -a "$CONSOLE_LOG" | live
	qrc=${PIPESTATUS[0]}
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	set -e
}

tail_log() {
	echo "----- last 50 console lines ($CONSOLE_LOG) -----" >&2
	tail -n 50 "$CONSOLE_LOG" >&2
	echo "-----" >&2
}
# running: the test or stage the guest was in when it went quiet.
running() {
	local t
	t=$(grep -a -o '^# selftests: kvm: [^ ]*\|^# kvm-unit-tests: [^ ]*$\|^WORKBENCH-STAGE-BEGIN [^ ]*' "$CONSOLE_LOG" | tail -n1)
	case $t in
	'# selftests: kvm: '*) echo "while running kvm:${t#\# selftests: kvm: }" ;;
	'# kvm-unit-tests: '*) echo "while running kut:${t#\# kvm-unit-tests: }" ;;
	WORKBENCH-STAGE-*) echo "in guest stage ${t#WORKBENCH-STAGE-BEGIN }" ;;
	*) echo "before the guest stages began" ;;
	esac
}
cpu_state() { # cpu_state REGISTERS_FILE
	[ -s "$mon/cpus" ] || return 0
	echo "----- where the vCPUs were (5 samples, 1 s apart; registers: $1) -----" >&2
	cat "$mon/cpus" >&2
	echo "-----" >&2
}

retry=
run_qemu
# KVM's EL2 exception loop: QEMU 7.2 lost nested guests in it, with the
# stock 6.12.117 kernel as with the series; none seen under 10.0, which
# boot.sh requires unless QEMU_MIN_VERSION says otherwise
# (Documentation/known-hangs.md). A boot that ends in it is still run
# once more (KNOWN_HANG_RETRY=0: never); the first
# console is kept, the retry is recorded in $CONSOLE_LOG.retried for the
# report, and a second loop fails as any hang does.
case $(cat "$mon/why" 2>/dev/null) in
el2-loop*)
	if [ "${KNOWN_HANG_RETRY:-1}" = 1 ]; then
		tail_log
		where=$(running)
		mv "$CONSOLE_LOG" "$CONSOLE_LOG.hang1"
		[ ! -f "$CONSOLE_LOG.cpus" ] || mv "$CONSOLE_LOG.cpus" "$CONSOLE_LOG.hang1.cpus"
		cpu_state "$CONSOLE_LOG.hang1.cpus"
		warn "a vCPU is stuck in KVM's EL2 exception loop $where (known hang, see Documentation/known-hangs.md); console kept in $CONSOLE_LOG.hang1; booting once more"
		echo "first boot stuck in KVM's EL2 exception loop $where; console: $(basename "$CONSOLE_LOG").hang1" \
			>"$CONSOLE_LOG.retried"
		retry=", on the retry too"
		run_qemu
	fi
	;;
esac

sentinel=$(grep -a -o 'WORKBENCH-END rc=[0-9]*' "$CONSOLE_LOG" | tail -n1 || true)
if [ -n "$sentinel" ]; then
	grc=${sentinel#*rc=}
	if [ "$grc" = 0 ]; then
		info "guest finished: $sentinel (QEMU rc=$qrc) in $(elapsed)"
		exit 0
	fi
	tail_log
	die $E_FAIL "guest reported test failures: $sentinel"
fi
if [ -f "$mon/why" ] || [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	tail_log
	cpu_state "$CONSOLE_LOG.cpus"
	case $(cat "$mon/why" 2>/dev/null) in
	el2-loop*) die $E_TIMEOUT "guest hung: a vCPU is stuck in KVM's EL2 exception loop $(running)$retry (no WORKBENCH-END sentinel)" ;;
	stall*) die $E_TIMEOUT "guest hung: no console output for ${STALL}s $(running) (no WORKBENCH-END sentinel)" ;;
	esac
	die $E_TIMEOUT "QEMU timed out after ${TIMEOUT}s $(running) (no WORKBENCH-END sentinel)"
fi
tail_log
if grep -a -q 'Kernel panic - not syncing' "$CONSOLE_LOG"; then
	die $E_PANIC "guest kernel panicked: $(grep -a -m1 -o 'Kernel panic - not syncing.*' "$CONSOLE_LOG")"
fi
die $E_PANIC "QEMU exited (rc=$qrc) without the WORKBENCH-END sentinel"
