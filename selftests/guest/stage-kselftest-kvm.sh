#!/bin/sh
# Stage "kselftest-kvm": run the plan (/etc/workbench/kvm.plan: name,
# timeout, args) with kselftest's TAP conventions: exit 0 ok, 124 TIMEOUT
# (143: busybox timeout), anything else "not ok ... # exit=<rc>", 4 (the
# test skipped itself) included: the workbench's machine must give every
# test what it requires. Only the skiplist's entries (those for every lane,
# "test | reason", and those for this one, "$LANE: test | reason") are
# reported as "ok ... # SKIP <reason>", without running.
# Tests run under busybox's timeout applet: under GNU timeout (coreutils 9.1)
# arch_timer_edge_cases fails at its sleep check (EINTR). Output is prefixed
# with "# " and framed by "# selftests: kvm: <name>" so the host can split
# per-test logs.
#
# STREAM_SECONDS (from /etc/workbench/env, scripts/initramfs.sh): how often
# a running test's new output is copied to the console (10; 0: only when
# the test ends). WB_ETC, WB_KSFT, WB_TMP, WB_SYSRQ: /etc/workbench,
# /ksft/kvm, /tmp and /proc/sysrq-trigger unless set, as only the
# workbench's own tests do (scripts/workbench-faults.sh runs this script
# on the host with a fake test binary).
etc=${WB_ETC:-/etc/workbench}
ksft=${WB_KSFT:-/ksft/kvm}
tmp=${WB_TMP:-/tmp}
sysrq=${WB_SYSRQ:-/proc/sysrq-trigger}
[ ! -r $etc/env ] || . $etc/env
every=${STREAM_SECONDS:-10}
plan=$etc/kvm.plan
skip=$etc/skiplist.txt
grep '^kvm:' $plan >$tmp/kvm.plan.run
n=$(grep -c '^kvm:' $tmp/kvm.plan.run)
echo "TAP version 13"
echo "1..$n"
failed=
i=0
# show_out [all]: copy the lines of $tmp/out not on the console yet to it,
# "# "-prefixed: the complete ones, or all of them once the test has ended.
show_out() {
	if [ "${1:-}" = all ]; then
		sed -n "$((shown + 1)),\$s/^/# /p" $tmp/out
		# a last line without its newline must not swallow the next one
		[ -z "$(tail -c 1 $tmp/out)" ] || echo
		return
	fi
	lines=$(wc -l <$tmp/out)
	[ "$lines" -gt "$shown" ] || return 0
	sed -n "$((shown + 1)),${lines}s/^/# /p" $tmp/out
	shown=$lines
}
# run_one: run $bin $args under timeout, its output to $tmp/out, its exit
# code in $tmp/rc. The output reaches the console while the test runs,
# every $every seconds (a ticker's SIGUSR1 wakes the wait below, whose trap
# copies the new lines), so that a test running longer than the host's
# STALL limit is not taken for a hung guest while it prints. Not streamed
# through a pipe: tee and sed waking on every line made
# demand_paging_test and dirty_log_perf_test fail several times more often
# (Documentation/known-hangs.md); one wake-up every $every seconds is far
# fewer (not yet measured against those failure rates). If the test outlives its timeout and kill delay by 50 s, it is
# stuck where SIGKILL cannot reach: dump the blocked tasks and every CPU's
# backtrace to the console for the host to keep.
run_one() {
	(
		sleep $((tmo + 60))
		echo "# ${t}: still running $((tmo + 60))s after it started, past its timeout; blocked tasks and CPU backtraces follow"
		echo w >$sysrq
		echo l >$sysrq
	) &
	guard=$!
	: >$tmp/out
	rm -f $tmp/rc
	shown=0
	trap show_out USR1
	(cd "$(dirname "$bin")" && timeout -k 10 "$tmo" "$bin" $args </dev/null >$tmp/out 2>&1; echo $? >$tmp/rc) &
	test_pid=$!
	ticker=
	if [ "$every" != 0 ]; then
		(while sleep "$every"; do kill -USR1 $$ 2>/dev/null || exit 0; done) &
		ticker=$!
	fi
	# wait returns early (>128) after each SIGUSR1 and its trap; the test
	# has ended when wait returns its subshell's status (0 from the echo;
	# 127 if already reaped) or the subshell is gone.
	while :; do
		wait $test_pid
		[ $? -gt 128 ] || break
		kill -0 $test_pid 2>/dev/null || break
	done
	kill $ticker $guard 2>/dev/null
	trap '' USR1
	show_out all
	[ -s $tmp/rc ] || echo 1 >$tmp/rc
}
while read -r name tmo args <&3; do
	i=$((i + 1))
	t=${name#kvm:}
	reason=$(grep -E "^(${LANE:-boot}: )?$name \|" $skip 2>/dev/null | head -n1 | sed 's/^[^|]*| *//')
	if [ -n "$reason" ]; then
		echo "ok $i selftests: kvm: $t # SKIP $reason"
		continue
	fi
	# "test@mode" is another plan entry (other arguments) of "test".
	bin=$ksft/aarch64/${t%@*}
	[ -x "$bin" ] || bin=$ksft/${t%@*}
	echo "# selftests: kvm: $t"
	echo "# command: ${t%@*} $args (timeout ${tmo}s)"
	retried=
	start=$(cut -d. -f1 /proc/uptime)
	if [ ! -x "$bin" ]; then
		echo "# ${t%@*}: binary not found in $ksft"
		: >$tmp/out
		r=127
	else
		run_one
		r=$(cat $tmp/rc)
		flaky=$(grep "^$name |" $etc/flaky.txt 2>/dev/null | head -n1 | sed 's/^[^|]*| *//')
		if [ "$r" != 0 ] && [ "$r" != 4 ] && [ -n "$flaky" ]; then
			echo "# $t failed (exit=$r); listed as flaky, retrying once: $flaky"
			first=$r
			run_one
			r=$(cat $tmp/rc)
			[ "$r" != 0 ] || retried=" # flaky: first run exit=$first, passed on retry"
		fi
	fi
	end=$(cut -d. -f1 /proc/uptime)
	echo "# duration: $t $((end - start))s"
	case $r in
	0) echo "ok $i selftests: kvm: $t${retried:-}" ;;
	# The workbench prepares what the plan's tests require (init.sh): a
	# test that skips itself here found something missing, which is a
	# failure of this configuration, not a skip.
	4) echo "not ok $i selftests: kvm: $t # exit=4: skipped in the workbench's configuration: $(grep -m1 -o 'Requirement not met.*\|SKIP.*' $tmp/out | sed 's/^SKIP *//; s/^- //')"; failed=1 ;;
	124 | 137 | 143) echo "not ok $i selftests: kvm: $t # TIMEOUT $tmo seconds"; failed=1 ;;
	*) echo "not ok $i selftests: kvm: $t # exit=$r"; failed=1 ;;
	esac
done 3<$tmp/kvm.plan.run
[ -z "$failed" ]
