#!/usr/bin/env bash
# The pipeline behind `make` and `make check`: run each stage, record its
# status and duration in $RESULTS/stages.tsv, stop at the first failing
# build stage, always write the report, and exit with the code of the
# first failure in STAGES_HOST's order (0 pass, 1 usage/tool error, 2
# build or test failure, 124 host timeout, 255 guest panic or lost guest).
#
#   STAGES_HOST="..."  host stages (default below); RESULTS_DIR (default results/)
#   STAGES_ALONGSIDE="..."  those of STAGES_HOST that need no guest and run
#       in a second lane, one after another under nice 10, while the main
#       lane runs its stages from ALONGSIDE_FROM (default boot) on: a TCG
#       guest keeps about 1.5 of 2 cores busy, and these checks use the
#       rest. When the main lane ends, the lane goes on at run.sh's own
#       priority (its running stage reniced where run.sh may: as root), so that on a
#       machine busy with other work it is not left with the scraps; its
#       checks guard against hangs with CPU-time budgets
#       (scripts/cpu-budget.py), which starvation cannot reach.
#       Their output goes to their logs (a failure's last lines to
#       stderr); run.sh waits for them before the report. With no
#       ALONGSIDE_FROM in STAGES_HOST they run after the main lane. When a
#       producer fails, those listed before it run then, in the main lane;
#       those after it do not run. Refused: a producer, boot or variants in
#       the lane, ALONGSIDE_FROM in the lane or before a producer, a lane
#       stage not in STAGES_HOST, a stage listed twice.
stage=run
. "$(dirname "$0")/lib.sh"

PRODUCERS="deps fetch apply build selftests guest-rootfs kvm-unit-tests initramfs"
DEFAULT_STAGES="deps fetch apply check-series build selftests guest-rootfs initramfs boot"
STAGES_HOST=${STAGES_HOST:-$DEFAULT_STAGES}
ALONGSIDE_FROM=${ALONGSIDE_FROM:-boot}

# Check the lists before anything is written: bad input makes no results.
main=() lane=()
declare -A pos=()
i=0
for s in $STAGES_HOST; do
	[ -x "$TOP/scripts/$s.sh" ] || die $E_USAGE "no stage script $TOP/scripts/$s.sh"
	i=$((i + 1))
	case " ${STAGES_ALONGSIDE:-} " in
	*" $s "*)
		case " $PRODUCERS boot variants " in
		*" $s "*) die $E_USAGE "STAGES_ALONGSIDE: $s cannot run beside the other stages (it makes what they need, or boots)" ;;
		esac
		[ "$s" != "$ALONGSIDE_FROM" ] || die $E_USAGE "ALONGSIDE_FROM=$s is in STAGES_ALONGSIDE"
		lane+=("$s")
		;;
	*) main+=("$s") ;;
	esac
	[ -z "${pos[$s]:-}" ] || [ -z "${STAGES_ALONGSIDE:-}" ] ||
		die $E_USAGE "STAGES_HOST lists $s twice (not with STAGES_ALONGSIDE)"
	pos[$s]=$i
done
for s in ${STAGES_ALONGSIDE:-}; do
	[ -n "${pos[$s]:-}" ] || die $E_USAGE "STAGES_ALONGSIDE: $s is not in STAGES_HOST"
done
if [ "${#lane[@]}" != 0 ] && [ -n "${pos[$ALONGSIDE_FROM]:-}" ]; then
	for s in $PRODUCERS; do
		[ -z "${pos[$s]:-}" ] || [ "${pos[$s]}" -lt "${pos[$ALONGSIDE_FROM]}" ] ||
			die $E_USAGE "ALONGSIDE_FROM=$ALONGSIDE_FROM is not after $s, which the lane's stages may need"
	done
fi

RESULTS_DIR=${RESULTS_DIR:-$TOP/results}
ts=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=${RESULTS:-$RESULTS_DIR/$ts}
mkdir -p "$RESULTS/logs"
ln -sfn "$(basename "$RESULTS")" "$RESULTS_DIR/latest"
export RESULTS
: >"$RESULTS/stages.tsv"
rm -f "$RESULTS/stages-alongside.tsv" "$RESULTS/alongside.list" "$RESULTS/wall-seconds" "$RESULTS/.main-lane-done"
info "results in $RESULTS"

# run_stage NAME TSV [quiet]: run scripts/NAME.sh, its output to the
# terminal and its log (quiet: the log only, under nice 10 while the main
# lane runs, at run.sh's priority after), one line to TSV; returns its rc.
run_stage() {
	local s=$1 tsv=$2 quiet=${3:-} log=$RESULTS/logs/stage-$1.log t0 dt rc st n=10
	t0=$(date +%s)
	set +e
	if [ -n "$quiet" ]; then
		[ ! -e "$RESULTS/.main-lane-done" ] || n=0
		nice -n "$n" "$TOP/scripts/$s.sh" >"$log" 2>&1
		rc=$?
	else
		printf 'I: run: ---- %s\n' "$s"
		case $s in
		boot) CONSOLE_LOG=$RESULTS/console.log "$TOP/scripts/$s.sh" 2>&1 | tee "$log" ;;
		*) "$TOP/scripts/$s.sh" 2>&1 | tee "$log" ;;
		esac
		rc=${PIPESTATUS[0]}
	fi
	set -e
	dt=$(($(date +%s) - t0))
	st=PASS
	[ "$rc" = 0 ] || st=FAIL
	printf '%s\t%s\t%s\t%s\n' "$s" "$st" "$dt" "$rc" >>"$tsv"
	printf 'I: run: %s: %s in %d:%02d (rc=%s)%s\n' "$s" "$st" $((dt / 60)) $((dt % 60)) "$rc" \
		"${quiet:+, alongside; log $log}"
	if [ -n "$quiet" ] && [ "$rc" != 0 ]; then
		tail -n 20 "$log" | sed "s/^/    $s: /" >&2
	fi
	return "$rc"
}

# The second lane, in the background: its own tsv, merged below. When
# run.sh goes (Ctrl-C, SIGTERM, SIGKILL, ...) the lane and everything it
# started (QEMU included) go with it: a watcher polls run.sh every 0.5 s.
# (Without it the lane, which ignores SIGINT as any background job of a
# script does, would go on to its next stages after run.sh has gone.)
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}
lane_pid= watch_pid=
start_lane() {
	[ "${#lane[@]}" != 0 ] && [ -z "$lane_pid" ] || return 0
	info "alongside the main lane: ${lane[*]} (nice 10 while the main lane runs; output in logs/stage-<name>.log)"
	printf '%s\n' "${lane[@]}" >"$RESULTS/alongside.list"
	(
		trap - ERR
		for s in "${lane[@]}"; do
			echo "$s" >"$RESULTS/.lane-current"
			run_stage "$s" "$RESULTS/stages-alongside.tsv" quiet || true
		done
		rm -f "$RESULTS/.lane-current"
	) &
	lane_pid=$!
	(
		trap - ERR
		trap '' INT HUP TERM
		while kill -0 $$ 2>/dev/null; do sleep 0.5; done
		# shellcheck disable=SC2046 # one pid per word
		kill -TERM "$lane_pid" $(descendants "$lane_pid") 2>/dev/null || true
	) &
	watch_pid=$!
}

t_run=$(date +%s)
broke=
for s in "${main[@]}"; do
	[ "$s" != "$ALONGSIDE_FROM" ] || start_lane
	rc=0
	run_stage "$s" "$RESULTS/stages.tsv" || rc=$?
	if [ "$rc" != 0 ]; then
		# A failed producer leaves nothing to test after it; checks
		# (check-series, model, harness, boot, ...) let the rest run.
		case " $PRODUCERS " in *" $s "*) broke=$s; break ;; esac
	fi
done
# From here on no stage of the main lane runs: the lane's run at run.sh's priority.
: >"$RESULTS/.main-lane-done"
if [ -n "$broke" ] && [ -z "$lane_pid" ]; then
	# As without a lane: the stages listed before the failed producer
	# run, those after it do not.
	skipped=()
	for s in "${lane[@]}"; do
		if [ "${pos[$s]}" -lt "${pos[$broke]}" ]; then
			run_stage "$s" "$RESULTS/stages.tsv" || true
		else
			skipped+=("$s")
		fi
	done
	[ "${#skipped[@]}" = 0 ] || info "not run, as $broke failed: ${skipped[*]}"
else
	start_lane
fi
if [ -n "$lane_pid" ]; then
	if kill -0 "$lane_pid" 2>/dev/null; then
		cur=$(cat "$RESULTS/.lane-current" 2>/dev/null || true)
		# The rest of the lane at run.sh's priority: its next stages start so, and
		# its running stage is reniced (lowering a nice value needs root).
		# run.sh's own nice value, absolute (--priority), pid by pid (one
		# may have ended since ps listed it); then ps says what it got.
		own=$(nice) high=
		for p in $(descendants "$lane_pid"); do
			renice --priority "$own" -p "$p" >/dev/null 2>&1 || true
			n=$(ps -o ni= -p "$p" 2>/dev/null | tr -d ' ') || continue
			[ -z "$n" ] || [ "$n" -le "$own" ] || high=$n
		done
		if [ -z "$high" ]; then
			lane_nice=", now at nice $own"
		else
			lane_nice=", at nice $high until ${cur:-its stage} ends (lowering a nice value needs root)"
		fi
		info "waiting for the second lane${cur:+: $cur (log $RESULTS/logs/stage-$cur.log)}$lane_nice"
	fi
	wait "$lane_pid" || true
	kill -KILL "$watch_pid" 2>/dev/null || true
	# reap it here, so that bash does not report it as "Killed"
	wait "$watch_pid" 2>/dev/null || true
	cat "$RESULTS/stages-alongside.tsv" >>"$RESULTS/stages.tsv" 2>/dev/null || true
	rm -f "$RESULTS/stages-alongside.tsv"
	# A lane stage without its row (its shell killed) is a failure.
	for s in "${lane[@]}"; do
		awk -F'\t' -v s="$s" '$1 == s { f = 1 } END { exit !f }' "$RESULTS/stages.tsv" && continue
		warn "the second lane ended without a result for $s"
		printf '%s\tFAIL\t0\t%s\n' "$s" "$E_FAIL" >>"$RESULTS/stages.tsv"
	done
fi
rm -f "$RESULTS/.main-lane-done"
# stages.tsv in STAGES_HOST's order, whichever lane ran each stage (no
# stage is listed twice when there is a lane).
if [ "${#lane[@]}" != 0 ]; then
	awk -F'\t' -v order="$STAGES_HOST" 'BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) p[o[i]] = i }
		{ print p[$1] "\t" $0 }' "$RESULTS/stages.tsv" | sort -s -n -k1,1 | cut -f2- >"$RESULTS/stages.tsv.new"
	mv "$RESULTS/stages.tsv.new" "$RESULTS/stages.tsv"
fi
echo $(($(date +%s) - t_run)) >"$RESULTS/wall-seconds"
first_rc=$(awk -F'\t' '$4 != 0 { print $4; exit }' "$RESULTS/stages.tsv")
first_rc=${first_rc:-0}
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
