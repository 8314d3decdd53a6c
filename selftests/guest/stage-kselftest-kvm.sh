#!/bin/sh
# Stage "kselftest-kvm": run the plan (/etc/workbench/kvm.plan: name,
# timeout, args) with kselftest's TAP conventions: exit 0 ok, 4 SKIP, 124
# TIMEOUT, anything else "not ok ... # exit=<rc>". GNU timeout is called by
# path: busybox sh runs its own applet for a bare "timeout". Output is prefixed
# with "# " and framed by "# selftests: kvm: <name>" so the host can split
# per-test logs.
plan=/etc/workbench/kvm.plan
skip=/etc/workbench/skiplist.txt
n=$(grep -c '^kvm:' $plan)
echo "TAP version 13"
echo "1..$n"
rm -f /tmp/failed
i=0
grep '^kvm:' $plan | while read -r name tmo args; do
	i=$((i + 1))
	t=${name#kvm:}
	reason=$(grep "^$name |" $skip 2>/dev/null | head -n1 | sed 's/^[^|]*| *//')
	if [ -n "$reason" ]; then
		echo "ok $i selftests: kvm: $t # SKIP $reason"
		continue
	fi
	bin=/ksft/kvm/aarch64/$t
	[ -x "$bin" ] || bin=/ksft/kvm/$t
	echo "# selftests: kvm: $t"
	echo "# command: $t $args (timeout ${tmo}s)"
	start=$(cut -d. -f1 /proc/uptime)
	if [ ! -x "$bin" ]; then
		echo "# $t: binary not found in /ksft/kvm"
		r=127
	else
		(cd "$(dirname "$bin")" && /usr/bin/timeout -k 10 "$tmo" "$bin" $args >/tmp/out 2>&1; echo $? >/tmp/rc)
		sed 's/^/# /' /tmp/out
		r=$(cat /tmp/rc)
	fi
	end=$(cut -d. -f1 /proc/uptime)
	echo "# duration: $t $((end - start))s"
	case $r in
	0) echo "ok $i selftests: kvm: $t" ;;
	4) echo "ok $i selftests: kvm: $t # SKIP $(grep -m1 -o 'Requirement not met.*\|SKIP.*' /tmp/out | sed 's/^SKIP *//; s/^- //')" ;;
	124 | 137 | 143) echo "not ok $i selftests: kvm: $t # TIMEOUT $tmo seconds"; echo 1 >/tmp/failed ;;
	*) echo "not ok $i selftests: kvm: $t # exit=$r"; echo 1 >/tmp/failed ;;
	esac
done
[ ! -f /tmp/failed ]
