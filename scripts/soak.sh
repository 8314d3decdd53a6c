#!/usr/bin/env bash
# "make soak DURATION=<seconds>" (issue 6): one long boot of the debug
# kernel (PROFILE=debug unless set) with forced rollovers (the kpti-rollover
# variant's parameters: KPTI on, 4-bit ASIDs and VMIDs, 3 vCPUs) whose
# guest loops VMID isolation, LPI churn and nested guests for DURATION
# seconds (selftests/guest/stage-soak.sh), then runs the kmemleak scan.
# Fails on a failed iteration, on any splat in the console, on a panic
# (255) or a hang (124). Not part of make check.
#
#   DURATION (3600)  seconds of looping in the guest
#   PROFILE (debug)  kernel profile (see lib.sh); its kernel is built if missing
#   Results: $RESULTS_DIR/<timestamp>/ with console.log, SUMMARY.md, soak.txt
PROFILE=${PROFILE:-debug}
stage=soak
. "$(dirname "$0")/lib.sh"

DURATION=${DURATION:-3600}
case $DURATION in '' | *[!0-9]* | 0) die $E_USAGE "DURATION='$DURATION' is not a positive number of seconds" ;; esac

RESULTS_DIR=${RESULTS_DIR:-$TOP/results}
RESULTS=${RESULTS:-$RESULTS_DIR/$(date -u +%Y%m%dT%H%M%SZ)-soak}
mkdir -p "$RESULTS/logs"
ln -sfn "$(basename "$RESULTS")" "$RESULTS_DIR/latest"
export RESULTS
info "profile $PROFILE, $DURATION s; results in $RESULTS"

IMAGE=$KERNEL_O/arch/arm64/boot/Image
if [ ! -f "$IMAGE" ]; then
	info "no $PROFILE kernel yet: building it"
	"$TOP/scripts/build.sh" || die $E_FAIL "build of the $PROFILE kernel failed"
fi
[ -x "$TOP/build/selftests/kvm/aarch64/vmid_isolation" ] ||
	"$TOP/scripts/selftests.sh" || die $E_FAIL "selftests failed"

: >"$RESULTS/stages.tsv"
OUT=$TOP/build/initramfs/soak.cpio.gz
SOAK_DURATION=$DURATION STAGES="kvm-check soak kmemleak" OUT=$OUT \
	"$TOP/scripts/initramfs.sh" || die $E_FAIL "initramfs failed"

# The guest loops DURATION seconds; a debug kernel under TCG needs up to
# about half an hour more for the last iteration, the scan and the boot.
t0=$(date +%s)
set +e
INITRD=$OUT CONSOLE_LOG=$RESULTS/console.log TIMEOUT=$((DURATION + 1800)) QEMU_SMP=3 \
	APPEND_EXTRA="kpti=1 arm64_asid_bits=4 kvm-arm.vmid_bits=4 ${APPEND_EXTRA:-}" \
	"$TOP/scripts/boot.sh" 2>&1 | tee "$RESULTS/logs/stage-boot.log"
rc=${PIPESTATUS[0]}
dt=$(($(date +%s) - t0))
printf 'boot\t%s\t%s\t%s\n' "$([ "$rc" = 0 ] && echo PASS || echo FAIL)" "$dt" "$rc" >>"$RESULTS/stages.tsv"
python3 "$TOP/scripts/report.py" "$RESULTS" >"$RESULTS/report.out" 2>&1
rrc=$?
set -e
{
	grep -h '^# soak iteration\|^SOAK ' "$RESULTS/console.log" || true
	echo "splat lines: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"]["console_splats"])' "$RESULTS/results.json" 2>/dev/null || echo '?')"
} | tee "$RESULTS/soak.txt"
[ "$rc" = 0 ] || die "$rc" "soak boot failed (rc=$rc); console: $RESULTS/console.log"
[ "$rrc" = 0 ] || die $E_FAIL "report failed or found failures/splats: $(tail -n 1 "$RESULTS/report.out")"
info "PASS: $(grep '^SOAK ' "$RESULTS/console.log" | tail -n 1) in $(elapsed)"
