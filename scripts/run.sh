#!/usr/bin/env bash
# The pipeline behind `make` and `make check`: run each stage, record its
# status and duration in $RESULTS/stages.tsv, stop at the first failing
# build stage, always write the report, and exit with the first failure's
# code (0 pass, 1 usage/tool error, 2 build or test failure, 124 host
# timeout, 255 guest panic or lost guest).
#
#   STAGES_HOST="..."  host stages (default below); RESULTS_DIR (default results/)
stage=run
. "$(dirname "$0")/lib.sh"

RESULTS_DIR=${RESULTS_DIR:-$TOP/results}
ts=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=${RESULTS:-$RESULTS_DIR/$ts}
mkdir -p "$RESULTS/logs"
ln -sfn "$(basename "$RESULTS")" "$RESULTS_DIR/latest"
export RESULTS
: >"$RESULTS/stages.tsv"
PRODUCERS="deps fetch apply build selftests guest-rootfs kvm-unit-tests initramfs"
DEFAULT_STAGES="deps fetch apply check-series build selftests guest-rootfs initramfs boot"
STAGES_HOST=${STAGES_HOST:-$DEFAULT_STAGES}
info "results in $RESULTS"

first_rc=0
for s in $STAGES_HOST; do
	script=$TOP/scripts/$s.sh
	[ -x "$script" ] || die $E_USAGE "no stage script $script"
	log=$RESULTS/logs/stage-$s.log
	t0=$(date +%s)
	printf 'I: run: ---- %s\n' "$s"
	set +e
	case $s in
	boot) CONSOLE_LOG=$RESULTS/console.log "$script" 2>&1 | tee "$log" ;;
	*) "$script" 2>&1 | tee "$log" ;;
	esac
	rc=${PIPESTATUS[0]}
	set -e
	dt=$(($(date +%s) - t0))
	st=PASS
	[ "$rc" = 0 ] || st=FAIL
	printf '%s\t%s\t%s\t%s\n' "$s" "$st" "$dt" "$rc" >>"$RESULTS/stages.tsv"
	printf 'I: run: %s: %s in %d:%02d (rc=%s)\n' "$s" "$st" $((dt / 60)) $((dt % 60)) "$rc"
	if [ "$rc" != 0 ]; then
		[ "$first_rc" != 0 ] || first_rc=$rc
		# A failed producer leaves nothing to test after it; checks
		# (check-series, model, harness, boot, ...) let the rest run.
		case " $PRODUCERS " in *" $s "*) break ;; esac
	fi
done
set +e
python3 "$TOP/scripts/report.py" "$RESULTS" >"$RESULTS/report.out" 2>&1
rrc=$?
set -e
# Everything but the totals line now; the totals line last of all.
head -n -1 "$RESULTS/report.out"
[ "$first_rc" != 0 ] || first_rc=$rrc
case $first_rc in
0) meaning="all passed" ;;
1) meaning="tool or usage error" ;;
2) meaning="build or test failure" ;;
124) meaning="host timeout" ;;
255) meaning="guest panic, or QEMU exited without the sentinel" ;;
*) meaning="unexpected" ;;
esac
# make turns every failing recipe into its own exit status 2; the
# classified code is printed here and kept in results.json.
printf 'I: run: exit %s (%s); results in %s\n' "$first_rc" "$meaning" "$RESULTS"
tail -n 1 "$RESULTS/report.out"
exit "$first_rc"
