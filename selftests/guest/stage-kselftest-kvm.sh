#!/bin/sh
# Stage "kselftest-kvm": run the plan (/etc/workbench/kvm.plan: name,
# timeout, args) with kselftest's TAP conventions: exit 0 ok, 4 SKIP, 124
# TIMEOUT (143: busybox timeout), anything else "not ok ... # exit=<rc>".
# Tests run under busybox's timeout applet: under GNU timeout (coreutils 9.1)
# arch_timer_edge_cases fails at its sleep check (EINTR). Output is prefixed
# with "# " and framed by "# selftests: kvm: <name>" so the host can split
# per-test logs.
plan=/etc/workbench/kvm.plan
skip=/etc/workbench/skiplist.txt
n=$(grep -c '^kvm:' $plan)
echo "TAP version 13"
echo "1..$n"
rm -f /tmp/failed
i=0
# run_one: run $bin $args under timeout, its output to /tmp/out and then
# the console, its exit code in /tmp/rc. Not streamed through a pipe:
# tee and sed waking on every line made demand_paging_test and
# dirty_log_perf_test fail several times more often (Documentation/
# known-hangs.md). If the test outlives its timeout and kill delay by
# 50 s, it is stuck where SIGKILL cannot reach: dump the blocked tasks and
# every CPU's backtrace to the console for the host to keep.
run_one() {
	(
		sleep $((tmo + 60))
		echo "# ${t}: still running $((tmo + 60))s after it started, past its timeout; blocked tasks and CPU backtraces follow"
		echo w >/proc/sysrq-trigger
		echo l >/proc/sysrq-trigger
	) &
	guard=$!
	(cd "$(dirname "$bin")" && timeout -k 10 "$tmo" "$bin" $args >/tmp/out 2>&1; echo $? >/tmp/rc)
	kill $guard 2>/dev/null
	sed 's/^/# /' /tmp/out
}
grep '^kvm:' $plan | while read -r name tmo args; do
	i=$((i + 1))
	t=${name#kvm:}
	reason=$(grep "^$name |" $skip 2>/dev/null | head -n1 | sed 's/^[^|]*| *//')
	if [ -n "$reason" ]; then
		echo "ok $i selftests: kvm: $t # SKIP $reason"
		continue
	fi
	# "test@mode" is another plan entry (other arguments) of "test".
	bin=/ksft/kvm/aarch64/${t%@*}
	[ -x "$bin" ] || bin=/ksft/kvm/${t%@*}
	echo "# selftests: kvm: $t"
	echo "# command: ${t%@*} $args (timeout ${tmo}s)"
	retried=
	start=$(cut -d. -f1 /proc/uptime)
	if [ ! -x "$bin" ]; then
		echo "# ${t%@*}: binary not found in /ksft/kvm"
		r=127
	else
		run_one
		r=$(cat /tmp/rc)
		flaky=$(grep "^$name |" /etc/workbench/flaky.txt 2>/dev/null | head -n1 | sed 's/^[^|]*| *//')
		if [ "$r" != 0 ] && [ "$r" != 4 ] && [ -n "$flaky" ]; then
			echo "# $t failed (exit=$r); listed as flaky, retrying once: $flaky"
			first=$r
			run_one
			r=$(cat /tmp/rc)
			[ "$r" != 0 ] || retried=" # flaky: first run exit=$first, passed on retry"
		fi
	fi
	end=$(cut -d. -f1 /proc/uptime)
	echo "# duration: $t $((end - start))s"
	case $r in
	0) echo "ok $i selftests: kvm: $t${retried:-}" ;;
	4) echo "ok $i selftests: kvm: $t # SKIP $(grep -m1 -o 'Requirement not met.*\|SKIP.*' /tmp/out | sed 's/^SKIP *//; s/^- //')" ;;
	124 | 137 | 143) echo "not ok $i selftests: kvm: $t # TIMEOUT $tmo seconds"; echo 1 >/tmp/failed ;;
	*) echo "not ok $i selftests: kvm: $t # exit=$r"; echo 1 >/tmp/failed ;;
	esac
done
[ ! -f /tmp/failed ]
