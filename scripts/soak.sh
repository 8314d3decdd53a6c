#!/usr/bin/env bash
# "make soak DURATION=<seconds>": one long boot of the debug
# kernel (PROFILE=debug unless set) with forced rollovers (the kpti-rollover
# variant's parameters: KPTI on, 4-bit ASIDs and VMIDs, 3 vCPUs) whose
# guest loops VMID isolation, LPI churn and nested guests for DURATION
# seconds (selftests/guest/stage-soak.sh), then runs the kmemleak scan
# (with a kernel that has kmemleak: PROFILE=debug).
# Fails on a failed iteration, on any splat in the console, on a panic
# (255) or a hang (124). Not part of make check.
#
#   DURATION (3600)  seconds of looping in the guest
#   SOAK_MODEL_COMMANDS (10000000)  vgic_its_model commands in all: the loop
#                    goes on past DURATION until they have run (0: none)
#   SOAK_MODEL_STEP (100000)  of them per iteration
#   PROFILE (debug)  kernel profile (see lib.sh); its kernel is built if missing
#   Results: $RESULTS_DIR/<timestamp>/ with console.log, SUMMARY.md, soak.txt
PROFILE=${PROFILE:-debug}
stage=soak
. "$(dirname "$0")/lib.sh"

DURATION=${DURATION:-3600}
case $DURATION in '' | *[!0-9]* | 0) die $E_USAGE "DURATION='$DURATION' is not a positive number of seconds" ;; esac
export SOAK_MODEL_COMMANDS=${SOAK_MODEL_COMMANDS:-10000000} SOAK_MODEL_STEP=${SOAK_MODEL_STEP:-100000}
case $SOAK_MODEL_COMMANDS in '' | *[!0-9]*) die $E_USAGE "SOAK_MODEL_COMMANDS='$SOAK_MODEL_COMMANDS' is not a number of commands" ;; esac
case $SOAK_MODEL_STEP in '' | *[!0-9]* | 0) die $E_USAGE "SOAK_MODEL_STEP='$SOAK_MODEL_STEP' is not a positive number of commands" ;; esac

# The forced-rollover parameters of the kpti-rollover variant, as
# kernel-mutants takes them.
line=$(grep -E '^kpti-rollover *\|' "$TOP/selftests/variants.txt") ||
	die $E_USAGE "no kpti-rollover line in selftests/variants.txt"
append=$(echo "$line" | cut -d'|' -f2 | xargs)
smp=$(echo "$line" | cut -d'|' -f5 | grep -o 'QEMU_SMP=[0-9]*' | cut -d= -f2 || true)

IMAGE=$KERNEL_O/arch/arm64/boot/Image
if [ ! -f "$IMAGE" ]; then
	info "no $PROFILE kernel yet: building it"
	"$TOP/scripts/build.sh" || die $E_FAIL "build of the $PROFILE kernel failed"
fi
[ -x "$TOP/build/selftests/kvm/aarch64/vmid_isolation" ] ||
	"$TOP/scripts/selftests.sh" || die $E_FAIL "selftests failed"

RESULTS_DIR=${RESULTS_DIR:-$TOP/results}
RESULTS=${RESULTS:-$RESULTS_DIR/$(date -u +%Y%m%dT%H%M%SZ)-soak}
export RESULTS
info "profile $PROFILE, $DURATION s, $append on ${smp:-2} vCPUs; results in $RESULTS"

# run.sh records the stages, writes the report (which fails on any splat)
# and exits with the first failure's code. The guest loops DURATION
# seconds; a debug kernel under TCG needs up to about half an hour more for
# the last iteration, the scan and the boot, and the model's commands
# past DURATION take no more than a second per 50.
set +e
# STALL=0: a soak iteration can be quiet for longer than boot.sh's default.
stages="kvm-check soak"
if grep -q '^CONFIG_DEBUG_KMEMLEAK=y' "$KERNEL_O/.config" 2>/dev/null; then
	stages="$stages kmemleak"
elif [ "$PROFILE" = debug ]; then
	die $E_USAGE "$KERNEL_O/.config has no CONFIG_DEBUG_KMEMLEAK: rebuild the debug kernel (make build PROFILE=debug)"
else
	info "the $PROFILE kernel has no kmemleak: no leak scan (PROFILE=debug has one)"
fi
SOAK_DURATION=$DURATION STAGES="$stages" TIMEOUT=$((DURATION + 1800 + SOAK_MODEL_COMMANDS / 50)) STALL=0 \
	QEMU_SMP=${smp:-2} APPEND_EXTRA="$append ${APPEND_EXTRA:-}" STAGES_HOST="initramfs boot" \
	"$TOP/scripts/run.sh"
rc=$?
set -e
{
	grep -h '^# soak iteration\|^SOAK ' "$RESULTS/console.log" || true
	echo "splat lines: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"]["console_splats"])' "$RESULTS/results.json" 2>/dev/null || echo '?')"
} | tee "$RESULTS/soak.txt"
[ "$rc" = 0 ] || die "$rc" "soak failed (rc=$rc): see $RESULTS/SUMMARY.md"
info "PASS: $(grep '^SOAK ' "$RESULTS/console.log" | tail -n 1) in $(elapsed)"
