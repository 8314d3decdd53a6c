#!/usr/bin/env bash
# Stage "boot": run the L1 guest under QEMU TCG with EL2 (virtualization=on)
# so KVM works inside it, log the console, and classify the outcome:
#   guest printed "WORKBENCH-END rc=0"      -> 0
#   guest printed "WORKBENCH-END rc=N" N!=0 -> 2
#   host timeout (TIMEOUT seconds)          -> 124
#   kernel panic, or QEMU exited without the sentinel -> 255
#
#   IMAGE, INITRD    kernel and initramfs (defaults: build/kernel/.../Image, build/initramfs/l1.cpio.gz)
#   CONSOLE_LOG      where the console goes (default build/console.log)
#   QEMU QEMU_CPU QEMU_SMP QEMU_MEM QEMU_EXTRA APPEND_EXTRA TIMEOUT
stage=boot
. "$(dirname "$0")/lib.sh"

QEMU=${QEMU:-qemu-system-aarch64}
QEMU_CPU=${QEMU_CPU:-max,pauth-impdef=on}
QEMU_SMP=${QEMU_SMP:-2}
QEMU_MEM=${QEMU_MEM:-4G}
QEMU_MACHINE=${QEMU_MACHINE:-virt,virtualization=on,gic-version=3,its=on}
if [ "$PROFILE" = default ]; then TIMEOUT=${TIMEOUT:-1800}; else TIMEOUT=${TIMEOUT:-5400}; fi
IMAGE=${IMAGE:-$KERNEL_O/arch/arm64/boot/Image}
INITRD=${INITRD:-$TOP/build/initramfs/l1.cpio.gz}
CONSOLE_LOG=${CONSOLE_LOG:-$TOP/build/console.log}
APPEND="console=ttyAMA0 panic=-1 softlockup_panic=1 ${APPEND_EXTRA:-}"

need_cmd "$QEMU" timeout
[ -f "$IMAGE" ] || die $E_USAGE "kernel Image '$IMAGE' not found"
[ -f "$INITRD" ] || die $E_USAGE "initramfs '$INITRD' not found"
case $TIMEOUT in '' | *[!0-9]*) die $E_USAGE "TIMEOUT='$TIMEOUT' is not a number of seconds" ;; esac
case $QEMU_SMP in '' | *[!0-9]*) die $E_USAGE "QEMU_SMP='$QEMU_SMP' is not a number" ;; esac

cmd=("$QEMU" -M "$QEMU_MACHINE" -cpu "$QEMU_CPU" -smp "$QEMU_SMP" -m "$QEMU_MEM"
	-nographic -no-reboot -nic none -kernel "$IMAGE" -initrd "$INITRD" -append "$APPEND")
# shellcheck disable=SC2206
[ -n "${QEMU_EXTRA:-}" ] && cmd+=($QEMU_EXTRA)
mkdir -p "$(dirname "$CONSOLE_LOG")"
shown=$(quote_cmd "${cmd[@]}")
printf '# to reproduce: %s\n' "$shown" >"$CONSOLE_LOG"
info "Running with:"
printf '$ %s\n' "$shown"
info "console: $CONSOLE_LOG (timeout ${TIMEOUT}s)"

set +e
# stdbuf: tr would hold up to 4 KiB of console back from the log file
# while the guest is quiet (a soak iteration prints one line in minutes).
if [ "${QUIET:-1}" = 1 ] && [ "$V" != 1 ]; then
	# Show only the workbench's own lines live (stage progress).
	timeout --foreground -k 10 "$TIMEOUT" "${cmd[@]}" </dev/null 2>&1 | stdbuf -oL tr -d '\r' |
		tee -a "$CONSOLE_LOG" | grep --line-buffered -E '^(WORKBENCH|BENCH |# selftests:|(not )?ok [0-9]+ (selftests|l2-guest|kvm-|bench-))'
	qrc=${PIPESTATUS[0]}
else
	timeout --foreground -k 10 "$TIMEOUT" "${cmd[@]}" </dev/null 2>&1 | stdbuf -oL tr -d '\r' | tee -a "$CONSOLE_LOG"
	qrc=${PIPESTATUS[0]}
fi
set -e

tail_log() {
	echo "----- last 50 console lines ($CONSOLE_LOG) -----" >&2
	tail -n 50 "$CONSOLE_LOG" >&2
	echo "-----" >&2
}
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
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	tail_log
	die $E_TIMEOUT "QEMU timed out after ${TIMEOUT}s (no WORKBENCH-END sentinel)"
fi
tail_log
if grep -a -q 'Kernel panic - not syncing' "$CONSOLE_LOG"; then
	die $E_PANIC "guest kernel panicked: $(grep -a -m1 -o 'Kernel panic - not syncing.*' "$CONSOLE_LOG")"
fi
die $E_PANIC "QEMU exited (rc=$qrc) without the WORKBENCH-END sentinel"
